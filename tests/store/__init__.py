"""Tests of ``store``."""
