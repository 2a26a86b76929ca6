"""Tests of ``evaluators.datasets``."""
