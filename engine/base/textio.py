"""Reading user files: UTF-8 only, with a clear error for anything else, and
never more than a given number of bytes (a 1 GB file or /dev/zero costs the
cap, not the file).  Writing them: atomically, or not at all."""

from .errors import UserError

# Byte-order marks, longest first: a UTF-32 LE mark starts with the UTF-16 LE one.
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32", "UTF-32"),
    (b"\xff\xfe", "UTF-16", "UTF-16"),
    (b"\xfe\xff", "UTF-16", "UTF-16"),
)


def _where(data, index):
    line = data.count(b"\n", 0, index) + 1
    col = index - (data.rfind(b"\n", 0, index) + 1) + 1
    return line, col


def decode(data: bytes, name: str) -> str:
    for bom, label, iconv in _BOMS:
        if data.startswith(bom):
            raise UserError(f"this is {label} text; convert the file to UTF-8 (iconv -f {iconv} -t UTF-8)", name)
    nul = data.find(b"\x00")
    if nul >= 0:  # anywhere, not only near the start: a NUL is never part of a rule file
        line, col = _where(data, nul)
        raise UserError("this looks like a binary file (it holds a NUL byte); give a text file", name, line, col)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _where(data, exc.start)
        raise UserError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); convert the file to UTF-8 (iconv -t UTF-8)",
            name, line, col,
        ) from None
    return text


def too_large(name, max_bytes, setting):
    return UserError(f"larger than {max_bytes:,} bytes; give a smaller file or raise {setting}", name)


def read_capped(fh, max_bytes, name, setting):
    """At most max_bytes from an open binary stream, or a UserError when it holds more."""
    data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise too_large(name, max_bytes, setting)
    return data


def not_regular(name):
    return UserError("not a regular file (a FIFO, a device or a socket); name a file, or - for standard input", name)


def read_bytes(path, max_bytes=None, setting=None):
    """The bytes of a regular file; with max_bytes, a larger file is refused
    before it is read.  Anything else is refused unread, never waited on:
    a FIFO with no writer would block forever, /dev/zero never ends."""
    import os

    from .files import open_regular

    name = str(path)
    try:
        with open_regular(path) as fh:  # opened without waiting, then fstat: no race with a swapped file
            if max_bytes is None:
                return fh.read()
            if os.fstat(fh.fileno()).st_size > max_bytes:
                raise too_large(name, max_bytes, setting)
            return read_capped(fh, max_bytes, name, setting)
    except FileNotFoundError:
        raise UserError("no such file; check the path", name) from None
    except ValueError:
        raise (UserError("this is a folder, not a file", name) if os.path.isdir(path) else not_regular(name)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", name) from None


def read_text(path, max_bytes=None, setting=None) -> str:
    return decode(read_bytes(path, max_bytes, setting), str(path))


def read_input(name, max_bytes=None, setting=None) -> str:
    """A file's text, or standard input's for `-`, read with the cap."""
    if name == "-":
        import sys

        if max_bytes is None:
            return decode(sys.stdin.buffer.read(), "<stdin>")
        return decode(read_capped(sys.stdin.buffer, max_bytes, "<stdin>", setting), "<stdin>")
    return read_text(name, max_bytes, setting)


def write_text_atomic(path, text, mode):
    """Write UTF-8 text to path through a temporary file in the same folder
    and a rename, with the given permissions: a reader sees the old file or
    the new one, never half of one.  A failure is the user's to fix (a
    folder they cannot write, a full disk): one UserError, nothing changed."""
    from .files import replace_atomic

    try:
        replace_atomic(_replaced(path), text.encode("utf-8"), mode, prefix=".engine-")
    except OSError as exc:
        raise UserError(f"cannot write: {exc.strerror}; nothing was changed", path) from None


def _replaced(path):
    """The file a write to `path` replaces: a symbolic link's target (the
    rename would put a file in the link's place: CLAUDE.md -> AGENTS.md
    compressed in place left AGENTS.md as it was and the link gone).  A
    device or a FIFO is refused: the rename would put a file in its place."""
    import os
    import stat

    try:
        kind = os.stat(path).st_mode
    except OSError:  # not there yet (or unreachable: the write says why)
        kind = stat.S_IFREG
    if not (stat.S_ISREG(kind) or stat.S_ISDIR(kind)):
        raise UserError("cannot write: this is not a regular file (a device, a FIFO or a socket); "
                        "name a file, nothing was changed", path)
    real = os.path.realpath(path)
    _within_its_project(path, real)
    return real


def _within_its_project(path, real):
    """A link is followed only to a file of the link's own project (the
    repository above it, else its folder): a cloned repository's CLAUDE.md
    linked to ~/.zshrc must not make `compress -i` rewrite that file.  The
    project as trust reads it: a home kept in git is never one, else a
    download under it could reach ~/.bashrc."""
    import os

    from .paths import inside
    from .project import project_folder

    project = project_folder(os.path.dirname(os.path.abspath(path)))
    if real != os.path.abspath(path) and not inside(real, project):
        raise UserError(f"cannot write: this is a link to {real}, outside its project ({project}); name that "
                        "file itself to change it, nothing was changed", path)
