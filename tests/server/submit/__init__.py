"""Tests of ``server.submit``."""
