"""The output behind a content cache stub, for a failure's error line.

A failed command that ran through the content cache's wrapper (`engine
cache run`: a command known or learned to be large, where the agent cuts a
failed call's output before its hook sees it) prints the cache's stub, not
its output: the failure's text is the agent's "Exit code N" and the stub,
and the line that says what went wrong is in the output the stub names.
That output is read back here, its head only, when the stub is the cache's
own (its template's opening) and names one entry of the call's own
project: a stub printed by a command of another project's making names
nothing that project may read.  What the model read outside the stub (a
small stderr the wrapper passed through: `make: *** [all] Error 1`) comes
first: it is usually the error.
"""

def read_behind(text, cwd):
    """The failure's text with the cache's stub taken out and the head of
    the output it stands for after what is left, or None: no stub of the
    cache's own, not exactly one key in it, an entry of another project,
    or one that cannot be read."""
    from engine.base.errors import UserError
    from engine.ccm import config

    try:
        settings = config.load()
    except UserError:
        return None  # the user's content cache settings are broken: the text as it is
    found = _stub(text, settings)
    if found is None or not cwd:
        return None
    start, end, key = found
    output = _head(settings, key, cwd)
    return None if output is None else f"{text[:start]}{text[end:]}\n{output}"


def _stub(text, settings):
    """(start, end, key) of the cache's stub in `text`, or None."""
    from engine.ccm.stub import KEY_IN_TEXT, opening

    template, first = settings["stub"]["template"], opening(settings, "template")
    start = text.find(first) if first.strip() else -1
    closing = template.rsplit("}", 1)[1] if "}" in template else ""
    if start < 0 or not closing.strip():
        return None
    end = text.find(closing, start)
    if end < 0:
        return None
    end += len(closing)
    keys = set(KEY_IN_TEXT.findall(text[start:end].encode("utf-8", "replace")))
    return (start, end, keys.pop().decode()) if len(keys) == 1 else None


def _head(settings, key, cwd):
    import zstandard

    from engine.ccm.origin import belongs, project_of
    from engine.ccm.store import Store

    store = Store(settings)
    meta = store.meta(key)
    if meta is None or not belongs(meta, project_of(cwd)):
        return None
    from engine.core.settings import failure_head_chars

    wanted = failure_head_chars()  # an error line is looked for in a failure's head (record.py)
    head = b""
    try:
        for data in store.chunks(key):
            head += data
            if len(head) >= wanted:
                break
    except (OSError, zstandard.ZstdError):
        return None
    return head[:wanted].decode("utf-8", "replace")
