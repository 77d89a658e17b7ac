"""`engine compress FILE [--level L] [--profile P]`, the common form, without
argparse: it reads the compressed text from the results cache when the file
and the profile are unchanged, so it imports neither `regex` nor `pickle`.
Any other form of the command returns None and goes through the parser."""

import gc

from engine.base.errors import given

_GLOB = "*?["


def parse(args):
    """(file, level, profile) for the simple form, else None."""
    file = level = profile = None
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--level", "--profile"):
            if i + 1 >= len(args):
                return None
            name, value = a, args[i + 1]
            i += 2
        elif a.startswith(("--level=", "--profile=")):
            name, value = a.split("=", 1)
            i += 1
        elif a == "-" or not a.startswith("-"):
            if file is not None:
                return None
            file = a
            i += 1
            continue
        else:
            return None  # --json, -o, --help ...: the full parser
        if name == "--level":
            level = value
        else:
            profile = value
    if file is None or not file or (file != "-" and any(c in file for c in _GLOB)):
        return None
    return file, level, profile


def as_command(fn, *args):
    """fn(*args), compressing the text args[-1] the way a command process
    should, which a library call must not impose on its caller's process:
    - with the cyclic garbage collector off.  Compression allocates millions
      of small objects (match objects, span tuples, edits) that hold no
      reference cycles: the collector, started again and again by that many
      allocations, walks them for nothing (about 5% of compressing 10 MB).
      Reference counting still frees them;
    - with freed blocks kept when the text is too large for glibc to keep
      its whole-text copies (engine/text/heap.py: about 0.2 s of 10 MB).
    (A function, not a context manager: contextlib is one import more on
    the warm path.)"""
    from engine.core.settings import plain
    from engine.text.heap import hold_freed_blocks

    bounds = plain()["compress"]
    hold_freed_blocks(args[-1], bounds["hold_copies"], bounds["hold_max_mb"])
    was = gc.isenabled()
    gc.disable()
    try:
        return fn(*args)
    finally:
        if was:
            gc.enable()


def compress_simple(args):
    parsed = parse(args)
    if parsed is None:
        return None
    file, level, profile = parsed
    from engine.base.textio import read_input
    from engine.core.textcache import Compressor

    given(file)
    if profile:
        given(profile)
    comp = Compressor(profile, level)
    from .output import note_left_out

    note_left_out(comp.chosen)
    # read with the profile's cap: /dev/zero costs the cap, not all memory
    cap = comp.info("max_input_bytes")
    text = read_input(file, cap, f"max_input_bytes (profile {comp.info('name')!r})")
    from .output import product

    product(as_command(comp.compress, text))
    return 0
