"""The built-in RAG system on the web and in the runner: /ask and /api/qa routes, background jobs,
the page's view, JSON payloads, the service and its QA-system adapter.
"""
