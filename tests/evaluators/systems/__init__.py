"""Tests of ``evaluators.systems``."""
