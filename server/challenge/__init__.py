"""The challenge pages: the leaderboards of a challenge edition (TEXT2SPARQL'26)."""
