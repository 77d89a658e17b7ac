"""The content cache manager (CCM): large tool outputs kept out of the
model's context, stored once under the sha256 of their bytes, and read back
byte-exact.

Modules, one job each: config (the settings document), keys (what a key
is), store (blobs, metadata, audit log), secrets (what is never cached),
stub (the text that replaces an output), prune and gc (what leaves the
store), pins (directives in prompts), learned (commands seen to be large),
permissions and intercept (what PreToolUse may do), runner (the wrapper a
rewritten Bash command runs through), purge (transcript purge and repair),
cli and purge_cli (`engine cache`, `engine purge`).
"""
