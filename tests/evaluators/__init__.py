"""Tests of ``evaluators``."""
