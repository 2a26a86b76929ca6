"""From documents to answers: snippets, model extraction, exact answers, ideal and cited
answers, citation checks, prompts.
"""
