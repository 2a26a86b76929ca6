"""Tests of ``rag.retrieval``."""
