"""Tests of ``evaluators.bioasq``."""
