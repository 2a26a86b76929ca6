"""Tests of ``server.sparql``."""
