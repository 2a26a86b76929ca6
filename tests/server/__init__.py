"""Tests of ``server``."""
