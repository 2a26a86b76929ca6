"""Everything that loads or calls a model: generators (extractive, transformers-local, openai-
http), local model files, the dense MiniLM encoder.
"""
