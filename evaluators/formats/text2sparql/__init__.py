"""TEXT2SPARQL files: the questions YAML, the client's answers and result sets, and the writer.

``yaml_source`` reads YAML safely (one document, no anchors or aliases, bounded nesting),
``questions`` turns a questions file into a ``Dataset`` (one question per entry and language,
named by its qname), ``result_sets`` reads answers files (``text2sparql ask`` output) and
result-set files (``qname -> {value: relevance}``), ``writer`` writes both back in the client's
shape. Pure like every parser: no store, no network, no logging.
"""
