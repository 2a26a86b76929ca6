"""Tests of ``vocab``."""
