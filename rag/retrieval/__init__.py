"""Finding documents: the Whoosh index, the query language, retrievers and query expansion."""
