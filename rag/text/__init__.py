"""Reading biomedical text without a model: sentences, noun phrases, and what a clause asserts.

``sentences`` splits titles and abstracts into sentence spans; ``phrases`` finds word tokens,
noun-phrase chunks, candidate names and abbreviations; ``claims`` reads a clause's terms,
negation, direction of change and numbers. Pure; used by retrieval and answering alike.
"""
