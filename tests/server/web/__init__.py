"""Tests of ``server.web``."""
