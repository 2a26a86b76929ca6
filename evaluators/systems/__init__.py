"""QA systems under test: the QASystem role, answer files, built-in systems and their registry, the
GERBIL QA web-service client.
"""
