"""Tests of ``evaluators.qa``."""
