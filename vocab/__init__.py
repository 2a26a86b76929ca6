"""RDF terms of qabench: namespaces with closed term lists, our vocabulary and IRI minting.

This package does no I/O and has no behaviour beyond building terms.
"""
