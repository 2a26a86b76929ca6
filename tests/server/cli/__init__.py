"""Tests of ``server.cli``."""
