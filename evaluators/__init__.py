"""Benchmark logic: parsing datasets and answers, scoring, Data Cube results, experiments."""
