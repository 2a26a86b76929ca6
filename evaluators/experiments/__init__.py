"""Experiments: plan, run, record, read back and recover runs of systems over datasets."""
