"""Tests of ``rag.answering``."""
