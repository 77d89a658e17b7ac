"""How a reference to a YAML document is read: a path or a built-in name."""


def is_path(ref):
    return "/" in ref or ref.endswith((".yaml", ".yml")) or ref.startswith("~")
