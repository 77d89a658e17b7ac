"""Agent hooks: `engine hook` reads one event, runs the handlers the profile
declares for it, and prints one merged JSON object.  Handler kinds live in
handlers.py; cadences, budgets, sources and banners are profile YAML."""
