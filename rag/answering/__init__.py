"""From documents to answers: sentences, snippets, model extraction, exact answers, short and cited
answers, citation checks, prompts.
"""
