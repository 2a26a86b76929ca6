"""Tests of ``rag``."""
