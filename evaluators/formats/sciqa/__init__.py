"""SciQA (scholarly QA over the ORKG): its questions and gold files, and FIRESPARQL's published
runs, whose executed results become answers (``questions``, ``firesparql``). Pure."""
