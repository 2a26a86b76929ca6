"""Tests of ``evaluators.experiments``."""
