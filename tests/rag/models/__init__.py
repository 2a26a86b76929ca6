"""Tests of ``rag.models``."""
