"""`engine messages compress|restore`: a thin layer over compress_messages
and restore_messages.  Input errors are one line FILE:LINE:COL, never a
traceback (engine/cli/main.py prints them)."""

import json
import sys

from engine.base.errors import UserError, given


def add_parser(sub):
    p = sub.add_parser("messages", help="compress a list of chat messages, and restore it exactly",
                       description="Compress a list of chat messages (a JSON list, or an object with `messages`; "
                       "OpenAI and Anthropic shapes) by the rules of a message pipeline "
                       "(pipelines/messages/default.yaml), and restore the originals.")
    msub = p.add_subparsers(dest="messages_command", metavar="SUBCOMMAND")
    msub.required = True
    s = msub.add_parser("compress", help="print the compressed messages (with --json: messages, verbatim store, stats)")
    s.add_argument("file", metavar="FILE|-", help="JSON file of messages, or - for standard input")
    s.add_argument("--profile", metavar="NAME|PATH", default="default",
                   help="message pipeline: a built-in name (pipelines/messages/) or a path (default: default)"
                   ).complete = "messages"  # completion offers the message pipelines, not the profiles
    s.add_argument("--budget", type=int, metavar="TOKENS",
                   help="token budget: use the largest recency window whose whole result fits (not with --recency)")
    s.add_argument("--recency", type=int, metavar="N", help="messages at the end kept whole (default: the pipeline's)")
    s.add_argument("--transcript", action="store_true", help="the input is a Claude Code transcript (JSONL lines)")
    s.add_argument("--json", action="store_true",
                   help="print one object: messages, verbatim (the originals, for restore) and stats")
    s = msub.add_parser("restore", help="print the original messages from the object `compress --json` printed")
    s.add_argument("file", metavar="FILE|-", help="the JSON object printed by `engine messages compress --json`")


def _parse_json(text, name, wanted="a JSON list of messages", lines_hint="; for a transcript (one JSON object per "
                "line) add --transcript"):
    from engine.base import strictjson

    try:
        return strictjson.loads(text, unique=True)
    except strictjson.DuplicateKey as exc:
        raise UserError(_twice(exc), name, exc.lineno, exc.colno) from None
    except json.JSONDecodeError as exc:
        # JSON on the first line and more after it: one object per line, a transcript
        lines = exc.msg == "Extra data" and exc.lineno > 1
        hint = lines_hint if lines else ""
        raise UserError(f"not JSON: {exc.msg}; give {wanted}{hint}", name, exc.lineno, exc.colno) from None
    except ValueError as exc:  # NaN, Infinity, 1e400: the output would not be JSON
        raise UserError(str(exc), name, *_place(text)) from None
    except RecursionError:
        raise UserError(_TOO_DEEP, name, *_place(text, _max_depth())) from None


def _twice(exc):
    """What to say of an object naming a key twice: every JSON reader keeps
    the last, so the output (and what restore gives back) would not hold
    the other value."""
    return (f"{exc.msg}: a JSON reader keeps only the last, so the output would lose the other value "
            "and restore could not give it back; keep one")


_TOO_DEEP = "JSON nested too deep to read; nest it less deeply (messages.max_depth, pipelines/settings/engine.yaml)"


def _place(text, max_depth=None, line=None):
    """(line, column) of what strictjson refused in `text`, or of its first
    level past max_depth; the line numbered `line` of a file when given."""
    from engine.base import strictjson

    at, col = strictjson.refused_place(text, max_depth)
    return (line or at, col)


def _max_depth():
    from engine.core.settings import plain

    return plain()["messages"]["max_depth"]


def _read(name):
    """The whole input (the pipeline holds every message), read with the
    engine's cap: a 2 GB file costs the cap, not all memory."""
    from engine.base.textio import read_input
    from engine.core.settings import plain

    cap = plain()["messages"]["max_input_bytes"]
    return read_input(given(name), cap, "messages.max_input_bytes (pipelines/settings/engine.yaml)")


def _parse_jsonl(text, name):
    from engine.base import strictjson

    lines = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            lines.append(strictjson.loads(line, unique=True))
        except strictjson.DuplicateKey as exc:
            raise UserError(_twice(exc), name, n, exc.colno) from None
        except json.JSONDecodeError as exc:
            raise UserError(f"not a JSON line: {exc.msg}; a transcript holds one JSON object per line",
                            name, n, exc.colno) from None
        except ValueError as exc:  # NaN, Infinity, 1e400: the output would not be JSON
            raise UserError(str(exc), name, *_place(line, line=n)) from None
        except RecursionError:
            raise UserError(_TOO_DEEP, name, *_place(line, _max_depth() - 1, line=n)) from None
    return lines


def _depth(value):
    """How deeply value nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in children)
    return deepest


def _check_depth(data, name, text, transcript):
    """Refuse input the pack could not carry: the pack nests it deeper, and
    restore reads the pack with the same JSON reader.  Said at the first
    bracket past the limit (a transcript's lines are one level down: the
    list of them is the first)."""
    limit = _max_depth()
    if _depth(data) <= limit:
        return
    place = ()
    if transcript:
        for n, line in enumerate(text.split("\n"), 1):
            place = _place(line, limit - 1, line=n)
            if place[1] is not None:
                break
    else:
        place = _place(text, limit)
    raise UserError(f"JSON nested deeper than {limit} levels: the object `compress --json` prints could not "
                    "be read back by restore; nest it less deeply (messages.max_depth, "
                    "pipelines/settings/engine.yaml)", name, *place)


def _dump(value):
    from engine.base.strictjson import dumps_utf8

    return dumps_utf8(value)


def run(args):
    name = "<stdin>" if args.file == "-" else args.file
    text = _read(args.file)
    if args.messages_command == "restore":
        return _restore(text, name)
    if args.recency is not None and args.recency < 0:
        raise UserError("--recency must be 0 or more")
    if args.budget is not None and args.budget < 0:
        raise UserError("--budget must be 0 or more")
    if args.budget is not None and args.recency is not None:
        raise UserError("--budget chooses the recency window itself (the largest whose result fits): "
                        "give --budget or --recency, not both")
    from engine.messages.api import compress_messages

    if args.transcript:
        data, wrapper = _parse_jsonl(text, name), None
    else:
        data = _parse_json(text, name)
        wrapper = None
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            wrapper, data = data, data["messages"]
        if not isinstance(data, list):
            raise UserError("expected a JSON list of messages, or an object with a `messages` list", name)
    # a request body's other keys go in the pack too
    _check_depth(wrapper if wrapper is not None else data, name, text, args.transcript)
    del text  # read: as large as the input, and not needed again
    profile = args.profile if args.profile == "default" or "/" not in args.profile else given(args.profile)
    result = compress_messages(data, profile, recency=args.recency, budget=args.budget, transcript=args.transcript,
                               count_tokens=args.json)
    if wrapper is not None:
        result["messages"] = {**wrapper, "messages": result["messages"]}
        result["wrapped"] = True
    # JSON for a program, equal as data to what it holds: the stream escapes
    # a control character taken from the messages (`\\u202e`), to a pipe too
    out = sys.stdout
    if args.transcript and not args.json:
        out.writelines(_dump(line) + "\n" for line in result["messages"])
    else:
        from engine.base.strictjson import write_utf8

        write_utf8(result if args.json else result["messages"], out.write)  # in pieces: a pack may be large
        out.write("\n")
    budget = result["stats"].get("budget")
    if budget and not budget["fits"]:
        print(f"engine: {budget['note']}", file=sys.stderr)
        return 1
    return 0


def _restore(text, name):
    from engine.messages.api import restore_messages

    data = _parse_json(text, name, "the object `engine messages compress --json` printed", "")
    if not isinstance(data, dict) or "messages" not in data or "verbatim" not in data:
        raise UserError("expected the object `engine messages compress --json` printed (with messages and verbatim)", name)
    messages = data["messages"]
    wrapper = None
    if data.get("wrapped"):
        if not isinstance(messages, dict) or not isinstance(messages.get("messages"), list):
            raise UserError("`wrapped` is set but `messages` holds no `messages` list", name)
        wrapper, messages = messages, messages["messages"]
    try:
        original = restore_messages(messages, data["verbatim"], transcript=bool(data.get("transcript")),
                                    check=data.get("check"), require_check=True)
    except UserError as exc:
        raise UserError(exc.message, name) from None
    from .output import product  # what restore gives back: exact to a pipe or a file, escaped on a terminal

    if data.get("transcript"):
        product("".join(_dump(line) + "\n" for line in original))
    elif wrapper is not None:
        product(_dump({**wrapper, "messages": original}) + "\n")
    else:
        product(_dump(original) + "\n")
    return 0
