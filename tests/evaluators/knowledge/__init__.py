"""Tests of ``evaluators.knowledge``."""
