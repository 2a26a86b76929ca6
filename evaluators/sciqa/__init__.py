"""SciQA's measure: FIRESPARQL's execution-based exact match (``execution_em``). Pure; the
questions and runs come from ``evaluators.formats.sciqa``."""
