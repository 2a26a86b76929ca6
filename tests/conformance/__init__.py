"""Harnesses that replay the W3C SPARQL 1.1 test suites against a live endpoint over HTTP."""
