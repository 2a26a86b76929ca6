"""The BioASQ task-b measures as the official evaluator computes them: documents, concepts,
snippets, exact and ideal answers.
"""
