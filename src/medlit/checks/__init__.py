"""The checks that hold a model's answer, a research claim and a report to their evidence.

Each check module reads a text against the articles it cites; the word tools they share
(stems, spellings, abbreviations, qualified names, defined terms, topic words, stance cues)
live here too. Importing this package imports nothing else: callers import the module they use.
"""
