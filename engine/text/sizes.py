"""Size limits of a compiled profile, checked before any work is done.

- `check_input`: compress refuses a text over the profile's max_input_bytes
  (a clear error instead of minutes of work and gigabytes of memory).
- `could_fit`: whether a raw text could possibly fit a budget once
  compressed, so that a hook skips a file that cannot fit without spending
  its deadline compressing it.
- `read_input`: a file or standard input read with the profile's cap.
"""

from engine.base.errors import UserError


class Limits:
    """The two size settings of a compiled profile, where only those are at
    hand (the hook's results cache knows them without the compiled profile)."""

    def __init__(self, max_input_bytes, fit_factor):
        self.max_input_bytes = max_input_bytes
        self.fit_factor = fit_factor


def _setting(profile):
    return f"max_input_bytes (profile {profile.name!r})"


def check_input(profile, text, name=None):
    """Raise UserError when text is longer than the profile allows."""
    if len(text) > profile.max_input_bytes:
        raise UserError(
            f"input of {len(text):,} characters is over the limit of {profile.max_input_bytes:,}; "
            f"split it or raise {_setting(profile)}", name,
        )


def could_fit(profile, raw_chars, budget_chars):
    """False when a text of raw_chars characters cannot fit budget_chars
    after compression at any level: it is more than the profile's
    fit_factor times the budget (or over max_input_bytes).  True means
    "compress it and look", not "it fits"."""
    if raw_chars > profile.max_input_bytes:
        return False
    return raw_chars <= budget_chars * profile.fit_factor


def read_input(profile, name, stdin=None):
    """The text of a file (or `-` for stdin), reading at most the cap."""
    from engine.base.textio import decode, read_capped, read_text

    if name == "-":
        import sys

        stream = stdin if stdin is not None else sys.stdin.buffer
        return decode(read_capped(stream, profile.max_input_bytes, "<stdin>", _setting(profile)), "<stdin>")
    return read_text(name, profile.max_input_bytes, _setting(profile))
