"""Knowledge bases for answer matching (owl:sameAs, labels) and gold refreshes: in memory, in the
store, at a SPARQL endpoint.
"""
