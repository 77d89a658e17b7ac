"""A declarative rules engine for the context of LLM coding agents.

The package holds the interpreter only; every word, pattern, threshold and
template lives in the YAML folders (pipelines/, protect/, dictionaries/) and is
checked against schemas/.  Public API: load_profile, compress, validate.
"""

from .base.version import __version__

__all__ = ["__version__", "load_profile", "compress", "validate"]


def load_profile(name=None, level=None, cwd=None):
    from engine.core.profile import load_profile as _load

    return _load(name, level=level, cwd=cwd)


def compress(profile, text, *, explain=False, tokenizers=()):
    from engine.text.pipeline import compress as _compress

    return _compress(profile, text, explain=explain, tokenizers=tokenizers)


def validate(paths=None):
    from engine.core.validate import validate_paths

    return validate_paths(paths or [])
