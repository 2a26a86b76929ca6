"""The only code that opens an Oxigraph store; named-graph policy; SPARQL queries kept as data."""
