"""Benchmark datasets in the store: the library (load, list, read versions), the catalog and
downloads, checks, and the RDF mapping of a version.
"""
