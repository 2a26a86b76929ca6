"""Scoring the QA task and its sub-experiments: profiles, answer matching, query markings,
normalisation, GERBIL's counter.
"""
