"""Tests of ``server.pages``."""
