"""The public replica: what the public SPARQL endpoint and the dump read.

``mirror`` keeps a store of its own holding exactly the public graphs of the main store, on
disk across restarts and brought up to date from the main store's change log and journal;
``views`` publishes read-only checkpoints of it for the query workers, heals itself after
faults and checks what each view holds; ``dumps`` writes the N-Quads dump of a view in the
background and streams it to readers meanwhile.
"""
