"""Tests of ``server.handoff``."""
