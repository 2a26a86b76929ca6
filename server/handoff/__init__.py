"""Connections of anonymous SPARQL readers answered by the process that evaluates their queries.

The SPARQL front (``server.front``) hands such a connection to a *connection worker*; the worker
reads, checks, evaluates and answers the connection's queries itself, and gives back, unread,
whatever it does not answer. ``wire`` reads requests and writes answers, ``worker`` is the
worker process, ``owners`` the serving process's side (docs/server.md, "Process model").
"""
