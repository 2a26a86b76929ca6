"""MIRAGE (the MedRAG benchmark): its ``benchmark.json``, how that file is built from the raw
datasets, and its stored predictions as answers.

``benchmark`` reads the file into questions (one ``Choices`` each); ``build`` rebuilds the file
byte for byte from the repository's ``rawdata/`` directory; ``predictions`` reads a directory
of prediction files (one per question) into an answers document. Pure apart from reading the
files a caller names; nothing here scores (``evaluators.mirage`` does).
"""
