"""The bottom layer: plumbing every other layer uses, with no knowledge of
profiles, hooks or rules.  Errors a user can cause, where files live,
bounded reading and atomic writing, private files and locks, JSON without
`re`, and reading agent transcripts.  Imports nothing else of the engine."""
