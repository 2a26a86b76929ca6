"""Tests of the benchmark scripts' own measuring code (``bench/``)."""
