"""Tests of ``server.ask``."""
