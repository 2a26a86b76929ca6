"""Tests of ``rag.corpus``."""
