"""State keys of what a session was told once, by prefix: the thresholds a
context monitor warned at (with where its warning's response began and in
which window), and the facts about a file the hook log was given once (a
refresh's, handlers/refresh.py).  Kept in the session's file as well while
its state is in Redis (handlers/clear_state.kept_in_files), so a session
that leaves Redis is not told again.  A module of names only: the state's
update reads them without importing the handlers."""

WARNED = "warned:"  # + the warnings' name + ":" + the threshold
WARNED_AT, WARNED_WINDOW = "fill_warned_at:", "fill_warned_window:"
SAID = "said:"  # + a digest of a fact about a file, logged in this session

PREFIXES = (WARNED, WARNED_AT, WARNED_WINDOW, SAID)
