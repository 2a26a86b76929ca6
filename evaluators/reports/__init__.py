"""Reports researchers write papers from: headline measures and rankings, per-language
summaries, systems x datasets matrices, significance across systems, and their tables as CSV,
Markdown or LaTeX. Pure: stored results in, values and text out.
"""
