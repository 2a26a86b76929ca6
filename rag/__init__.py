"""The built-in retrieval-augmented QA system: literature index, retrieval and snippets.

Whoosh (``rag.retrieval.index``) and the sentence-transformers model (``rag.models.dense``) stay
inside this package. Entry points: ``rag.corpus.reader.read_corpus``,
``rag.retrieval.index.open_index``, ``rag.retrieval.retrievers.WhooshRetriever`` and
``rag.answering.snippets.extract_snippets``.
"""
