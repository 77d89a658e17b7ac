"""The content cache's settings: pipelines/settings/content_cache.yaml, or
the file named by $ENGINE_CONTENT_CACHE, or content_cache.yaml in the
user's config folder, validated against schemas/content_cache.schema.json.

Hooks read them as plain JSON from the engine's cache (no YAML, no JSON
Schema on the hot path); the cached copy is dropped when the file changes.
The `secret_categories` are read by the engine's redactor (engine/core/redact.py),
which keeps their patterns in the same cache.
"""

import os

from engine.base.paths import builtin_root_str, config_dir_str

ENV = "ENGINE_CONTENT_CACHE"
NAME = "content_cache.yaml"
# Fields each template may use (str.format names).
TEMPLATE_FIELDS = {
    "template": {"key", "path", "bytes", "lines", "exit", "command", "pinned", "show"},
    "purge_template": {"key", "path", "bytes", "lines", "exit", "command", "pinned", "show"},
    "read_template": {"path", "bytes", "threshold", "limit", "how"},
    "cut_template": {"run", "command"},
    "show_command": {"key", "engine"},
}


def builtin_path():
    return os.path.join(builtin_root_str(), "pipelines", "settings", NAME)


def chosen_path():
    """The settings file in force: $ENGINE_CONTENT_CACHE, else the user's, else the built-in."""
    env = os.environ.get(ENV)
    if env:
        return os.path.abspath(os.path.expanduser(env))
    user = os.path.join(config_dir_str(), NAME)
    if os.path.isfile(user):
        return user
    return builtin_path()


def load(path=None):
    """The settings as plain data; raises UserError for a file the user must fix."""
    from engine.core import cache

    path = path or chosen_path()
    key = ("content_cache", path)
    value = cache.load_plain(key)
    if value is not None:
        return value
    value, sources = _load_yaml(path)
    cache.store_plain(key, value, [(s, cache.file_digest(s)) for s in sources])
    return value


def _load_yaml(path):
    from engine.base.errors import UserError, ValidationErrors
    from engine.base.textio import read_text
    from engine.core import schema
    from engine.core.yamlload import load_text

    if not os.path.isfile(path):
        raise UserError(f"content cache settings not found; fix ${ENV} or create the file", path)
    doc = load_text(read_text(path), path)
    schema.require_valid(doc, "content_cache")
    errors = semantic_errors(doc)
    if errors:
        raise ValidationErrors(errors)
    from engine.core.defaults import filled

    return filled("content_cache", doc.data), [path, os.path.join(config_dir_str(), NAME)]


def semantic_errors(doc):
    """What the schema cannot say: templates naming unknown fields, protect
    categories that do not exist, `ask` only where it makes sense."""
    import string

    data = doc.data
    errors = []
    for key, allowed in TEMPLATE_FIELDS.items():
        text = data.get("stub", {}).get(key)
        if not isinstance(text, str):
            continue
        try:
            names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
        except ValueError as exc:
            errors.append(doc.error(f"stub.{key}: {exc}; write a literal brace as {{{{ or }}}}", ("stub", key)))
            continue
        bad = sorted(n for n in names if n not in allowed)
        if bad:
            errors.append(doc.error(f"stub.{key}: unknown field(s) {', '.join('{' + b + '}' for b in bad)}; "
                                    f"use {', '.join(sorted(allowed))}", ("stub", key)))
    for key in ("template", "purge_template"):
        text = data.get("stub", {}).get(key)
        if isinstance(text, str) and "sha256:{key}" not in text:
            # gc finds references by this text: a stub without it would let gc delete what it names
            errors.append(doc.error(f"stub.{key}: must contain sha256:{{key}} (engine cache gc finds stubs by it)",
                                    ("stub", key)))
    for i, category in enumerate(data.get("secret_categories", [])):
        if not os.path.isfile(os.path.join(builtin_root_str(), "protect", f"{category}.yaml")):
            errors.append(doc.error(f"secret_categories: no protect category {category!r}; see protect/", ("secret_categories", i)))
    return errors + _folder_errors(doc)


def _folder_errors(doc):
    """`folder:` and gc.transcripts are absolute once ~ is expanded: a
    relative one ('$HOME/ccm': $VARs are not expanded) was taken from each
    working folder: a store in every project the agent ran in, or a gc that
    did not see the transcripts it was told to keep entries for."""
    data = doc.data
    given = [("folder", ("folder",), data.get("folder"), ", or leave it empty for the cache folder's ccm/")]
    given += [(f"gc.transcripts[{i}]", ("gc", "transcripts", i), t, "")
              for i, t in enumerate(data.get("gc", {}).get("transcripts", []))]
    return [doc.error(f"{name}: {path!r} is relative ($VARs are not expanded); start it with ~ or /{also}", where)
            for name, where, path, also in given
            if isinstance(path, str) and path and not os.path.isabs(os.path.expanduser(path))]


def folder(settings):
    """The CCM folder: `folder:` if set, else <cache folder>/ccm."""
    from engine.base.paths import cache_dir_str

    if settings.get("folder"):
        return os.path.abspath(os.path.expanduser(settings["folder"]))
    return os.path.join(cache_dir_str(), "ccm")
