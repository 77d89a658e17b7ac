"""The text machinery: the protection mask, protect-category scanners, the
word scan, the transform kinds, the compiled Profile they make up, the
pipeline that runs it over a text, token counts and input bounds.  No YAML
here: engine.core builds these objects from the YAML; this layer only runs
them.  Imports only engine.base."""
