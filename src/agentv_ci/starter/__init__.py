"""`agentv-ci init`: the starter files of a repository's first eval (templates.py) and how they are
written (writing.py)."""
