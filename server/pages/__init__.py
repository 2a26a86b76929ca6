"""HTML pages for people: home and lists, datasets, experiments, tasks, systems, compare,
leaderboard, with their tables and charts.
"""
