"""The one way through: load YAML (with marks) -> validate (schemas and
semantic checks, a subsystem's checks registered by kind in checks.py) ->
resolve (extends, add/remove, the trust boundary for project profiles) ->
compile (into engine.text objects) -> the compiled-profile cache; then the
results cache, golden cases and the redactor and log every writer uses.
Imports engine.base and engine.text, never a subsystem."""
