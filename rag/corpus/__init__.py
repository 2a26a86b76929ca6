"""Corpus records and their readers: PubMed XML, JSON Lines/JSON/TSV, BioASQ snippets, knowledge-
base abstracts.
"""
