"""Reading user files: UTF-8 only, with a clear error for anything else."""

from .errors import UserError


def decode(data: bytes, name: str) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise UserError("this is UTF-16 text; convert the file to UTF-8 (iconv -f UTF-16 -t UTF-8)", name)
    if b"\x00" in data[:8192]:
        raise UserError("this looks like a binary file (it holds NUL bytes); give a text file", name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); convert the file to UTF-8 (iconv -t UTF-8)",
            name, line, col,
        ) from None
    return text


def read_text(path) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise UserError("no such file; check the path", str(path)) from None
    except IsADirectoryError:
        raise UserError("this is a folder, not a file", str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", str(path)) from None
    return decode(data, str(path))


def read_input(name) -> str:
    """A file's text, or standard input's for `-`."""
    if name == "-":
        import sys

        return decode(sys.stdin.buffer.read(), "<stdin>")
    return read_text(name)
