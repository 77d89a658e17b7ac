"""A declarative rules engine for the context of LLM coding agents.

The package holds the interpreter only; every word, pattern, threshold and
template lives in the YAML folders (pipelines/, protect/, dictionaries/) and is
checked against schemas/.  Public API: load_profile, compress, validate.
"""

from .base.version import __version__

# The names the hints use, for the type checker only (so quoted below):
# every hook imports this package, and `typing` alone costs a hook a few
# milliseconds, `from __future__ import annotations` a module import.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from os import PathLike

    from .base.errors import UserError
    from .text.model import Profile
    from .text.pipeline import Result

__all__ = ["__version__", "load_profile", "compress", "validate"]


def load_profile(name: str | None = None, level: str | None = None, cwd: "str | PathLike | None" = None) -> "Profile":
    from engine.core.profile import load_profile as _load

    return _load(name, level=level, cwd=cwd)


def compress(profile: "Profile", text: str, *, explain: bool = False, tokenizers: "Iterable[str]" = ()) -> "Result":
    from engine.text.pipeline import compress as _compress

    return _compress(profile, text, explain=explain, tokenizers=tokenizers)


def validate(paths: "Sequence[str | PathLike] | None" = None) -> "list[UserError]":
    from engine.core.validate import validate_paths

    return validate_paths(paths or [])
