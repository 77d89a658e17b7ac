"""The content cache manager (CCM): large tool outputs kept out of the
model's context, stored once per project under a keyed hash of their bytes,
and read back byte-exact, from their own project only unless asked.

Modules, one job each: config (the settings document), keys (what a key
is, how it is made), userkey (the per-user secret keys are made with),
origin (whose an entry is, and who may see it), store (blobs, metadata,
audit log), secrets (what is never cached), stub (the text that replaces an
output), refs (the one search of the transcripts for the keys they name),
keep (what gc, prune and the size bound never remove), prune and gc (what
leaves the store), pins (directives in prompts), learned (commands seen to
be large), permissions, snapshot and intercept (what PreToolUse may do),
runner (the wrapper a rewritten Bash command runs through), purge
(transcript purge and repair), cli and purge_cli (`engine cache`,
`engine purge`).
"""
