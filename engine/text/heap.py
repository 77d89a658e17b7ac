"""Whole-text copies of a very large text reuse freed memory, not fresh pages.

glibc's malloc serves a block above its mmap threshold with a new mapping
and unmaps it when it is freed.  The threshold follows the blocks freed, but
only up to DEFAULT_MMAP_THRESHOLD_MAX (32 MiB on a 64-bit system), a fact of
the C library, not a setting of ours.  A 10 MB text holding one character
above U+FFFF is a 40 MB buffer, and every transform makes a new copy of the
text: each copy was mapped afresh and faulted in page by page, about 0.2 s
of system time per 10 MB.

The rule: only when a text's buffer is above that ceiling (no hook or
ordinary file comes near it), the process keeps freed blocks in its heap
(mmap and trim thresholds raised) for the rest of its life; a command
process ends soon after.  Anywhere but glibc, nothing happens.
"""

import sys

GLIBC_MMAP_THRESHOLD_MAX = 32 * 1024 * 1024  # glibc's own bound, see above
_M_TRIM_THRESHOLD = -1  # mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3

_held = False


def hold_freed_blocks(text, copies, max_mb):
    """Raise malloc's thresholds when `text` is too large for glibc to keep
    its freed copies, to room for `copies` whole copies of it and at most
    `max_mb` (the engine's settings: compress.hold_copies, hold_max_mb);
    True when they are raised (now or before)."""
    global _held
    if _held:
        return True
    if len(text) * 4 <= GLIBC_MMAP_THRESHOLD_MAX:  # at most 4 bytes a character
        return False
    size = sys.getsizeof(text)
    if size <= GLIBC_MMAP_THRESHOLD_MAX or not sys.platform.startswith("linux"):
        return False
    import os

    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, ValueError, AttributeError):
        return False
    # a threshold glibc refuses leaves it as it was
    keep = min(size * copies, max_mb * 1024 * 1024)
    _held = bool(mallopt(_M_MMAP_THRESHOLD, keep)) and bool(mallopt(_M_TRIM_THRESHOLD, keep))
    return _held
