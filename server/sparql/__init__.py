"""The public SPARQL endpoint: protocol, update, query analysis, the worker pool and its snapshot,
result writers, the query page.
"""
