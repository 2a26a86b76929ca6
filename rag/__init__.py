"""The built-in retrieval-augmented QA system: literature index, retrieval and snippets.

Whoosh (``rag.index``) and the sentence-transformers model (``rag.dense``) stay inside this
package. Entry points: ``rag.corpus.reader.read_corpus``, ``rag.index.open_index``,
``rag.retrieve.WhooshRetriever`` and ``rag.snippets.extract_snippets``.
"""
