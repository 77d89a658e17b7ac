"""Finding, loading and checking YAML documents by kind.

A reference is either a bare name (a built-in document of that kind, e.g.
`standard`, `negations`) or a path (contains a slash or ends in .yaml/.yml),
read relative to the file that names it.
"""

from pathlib import Path

from engine.base.errors import UserError, suggest
from engine.base.paths import builtin_dir, builtin_root, inside
from engine.base.refs import is_path

from . import schema
from .yamlload import load_file

FOLDERS = {
    "profile": "pipelines",
    "level": "pipelines/levels",
    "protect": "protect",
    "dictionary": "dictionaries",
    "messages": "pipelines/messages",
    "detector": "pipelines/messages/detectors",
    "agent": "pipelines/agents",
}


def builtin_names(kind):
    folder = builtin_dir(FOLDERS[kind])
    return sorted(p.stem for p in folder.glob("*.yaml"))


def is_builtin(path):
    try:
        Path(path).resolve().relative_to(builtin_root().resolve())
        return True
    except ValueError:
        return False


# The built-in documents this process has read and checked, by path (Library._read).
_BUILTIN_READ: dict = {}


class Library:
    """Loads each file once per run and remembers every file it read.

    Every document carries its origin (`doc.origin`): "builtin" (shipped with
    the engine), "user" (the user's own files) or "project" (a project's
    profile and the files it names).  A project library has a root (the
    folder holding `.engine/`): a path named by a project document must stay
    inside it, so a project profile cannot read the user's files as YAML."""

    def __init__(self, project_root=None):
        self._docs = {}
        self.files = []
        self.looked_at = []  # every path read or looked for, found or not (for the failed-profile cache)
        self.watch = []  # files not read whose appearance changes the profile (sources of its cache entry too)
        self.project_root = None
        if project_root is not None:
            self.set_project(project_root)

    def set_project(self, root):
        import os

        self.project_root = os.path.realpath(str(root))

    def origin_of(self, path):
        """A file outside the project can reach a project library only when
        the user named it (`--level PATH`): project documents cannot name one."""
        import os

        if is_builtin(path):
            return "builtin"
        if self.project_root is not None and inside(os.path.realpath(str(path)), self.project_root):
            return "project"
        return "user"

    def project_docs(self, kind=None):
        """The documents of project origin read so far (of one kind)."""
        return [d for d in self._docs.values() if d.origin == "project" and (kind is None or d.data.get("kind") == kind)]

    def locate(self, ref, kind, base_dir, origin=None):
        """Path for a reference; origin = (doc, path) of the naming key, for errors."""
        if is_path(ref):
            p = Path(ref).expanduser()
            if not p.is_absolute():
                p = Path(base_dir) / p
            self.looked_at.append(str(p))
            if not p.is_file() and p.exists():  # a FIFO there would be waited on forever, never "missing"
                raise self._where(origin, f"{p} is not a regular file (a folder, a FIFO, a device or a socket); "
                                  f"name a {kind} file", ref)
            if not p.is_file():
                raise self._where(origin, f"no {kind} file at {p}; check the path", ref)
            real = p.resolve()
            named_by = getattr(origin[0], "origin", None) if origin else None
            if named_by == "project" and not inside(real, self.project_root) and not is_builtin(real):
                raise self._where(origin, f"a project profile may name only files inside its project "
                                  f"({self.project_root}) or built-in documents; {real} is outside", ref)
            return real
        p = builtin_dir(FOLDERS[kind]) / f"{ref}.yaml"
        self.looked_at.append(str(p))
        if not p.is_file():
            known = builtin_names(kind)
            hint = suggest(ref, known) or f"; built-in: {', '.join(known) or 'none'}; or give a path to a .yaml file"
            if origin is None and Path(ref).is_dir():  # a folder named on the command line
                hint = f"; {ref!r} is a folder here: give the path of a {kind} .yaml file"
            raise self._where(origin, f"no built-in {kind} named {ref!r}{hint}", ref)
        return p.resolve()

    @staticmethod
    def _where(origin, message, ref):
        if origin is None:
            return UserError(message, ref)
        doc, path = origin
        return doc.error(message, path)

    def load(self, path, kind):
        key = str(path)
        if key not in self._docs:
            self.looked_at.append(key)
            self._docs[key] = self._read(key)
            self.files.append(key)
        doc = self._docs[key]
        # On every lookup, not only the first: a profile's own file, or a
        # built-in read before as its own kind, named where another kind goes
        # went on as that kind (a KeyError traceback, or a slot's misleading error).
        actual = doc.data.get("kind")
        if actual != kind:
            raise doc.error(f"expected a {kind} document here, found kind {actual!r}", ("kind",))
        return doc

    def _read(self, path):
        """The document at `path`, checked against its schema.  A built-in
        one is read once per process (`engine validate` resolves a profile
        at every level, each resolve in a Library of its own): it ships with
        the engine, and no resolve changes a document's data."""
        origin = self.origin_of(path)
        doc = _BUILTIN_READ.get(path) if origin == "builtin" else None
        if doc is None:
            doc = load_file(path)
            doc.origin = origin
            schema.require_valid(doc)
            if origin == "builtin":
                _BUILTIN_READ[path] = doc
        return doc

    def get(self, ref, kind, base_dir, origin=None):
        return self.load(self.locate(ref, kind, base_dir, origin), kind)
