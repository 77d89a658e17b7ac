"""Replaying recorded sessions: a transcript turned back into the hook events
the agent sent while writing it (events.py)."""
