"""What the engine did: the tokens its hooks added to the model's context (by
handler) against the tokens they kept out (tool outputs replaced by a stub),
and the net, for one session or every session of a period.

The rule it keeps: the figures are the hooks' own records of what they
answered (engine/core/records.py), never a simulation; a session whose
hooks recorded nothing shows zeros and says so.  A period's sessions are the
transcripts of every agent found as each agent keeps them (locate.py), one
row a session.
"""

import os
import time

from engine.base.errors import UserError

MAX_DIGITS = 12  # a period of 10**12 units reaches before the epoch whatever the unit


def for_session(session_id):
    from engine.core.records import read, summarize

    lines, full = read(session_id)
    return summarize(lines, full)


def parse_since(text, units):
    """Seconds of a period such as 7d, 24h, 90m or 2w (`units` of the style)."""
    s = (text or "").strip()
    num, unit = s[:-1], s[-1:]
    if unit not in units or not (num.isascii() and num.isdigit()) or not num.strip("0"):
        raise UserError(f"--since {text!r} is not a period; give a number and a unit "
                        f"({', '.join(f'N{u}' for u in units)}), e.g. 7d")
    # Past the epoch means every session: a 400-digit number is clamped, not
    # parsed (int() refuses 4,300 digits; time - 10**400 overflows a float).
    digits = num.lstrip("0")
    n = int(digits) if len(digits) <= MAX_DIGITS else 10 ** MAX_DIGITS
    return min(n * units[unit], int(time.time()))


def sessions_since(seconds, now=None):
    """(mtime, session id, project, path, agent) of every agent's main
    sessions changed within the period, newest first, under every folder
    each agent writes them to (locate.homes)."""
    from engine.agents import table

    from .locate import sessions

    cutoff = (now or time.time()) - seconds
    found = []
    for name in table.names():
        for path, sid, project in sessions(name):
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            if mtime >= cutoff:
                found.append((mtime, sid, project, path, name))
    found.sort(key=lambda x: (-x[0], x[1]))
    # a session once, by the file written last (of a Gemini session resumed
    # in a later minute, its own file: locate.written_last_beside)
    once, seen = [], set()
    for row in found:
        if row[1] not in seen:
            seen.add(row[1])
            once.append(row)
    return once


def period_report(since, style, now=None):
    """One row a session of the period plus totals (the --since --json object)."""
    seconds = parse_since(since, style["since"]["units"])
    rows = []
    totals = {"sessions": 0, "recorded_sessions": 0, "added_tokens": 0, "added_chars": 0, "kept_out_tokens": 0,
              "kept_out_outputs": 0, "kept_out_bytes_before": 0, "kept_out_bytes_after": 0, "net_tokens": 0}
    by_handler = {}
    for mtime, session, project, path, agent in sessions_since(seconds, now):
        d = for_session(session)
        rows.append({"session_id": session, "agent": agent, "project": project, "transcript": path,
                     "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime)),  # as the transcripts' times
                     "recorded_events": d["recorded_events"], "added_tokens": d["added_tokens"],
                     "added_chars": d["added_chars"], "kept_out_tokens": d["kept_out"]["tokens"],
                     "kept_out_outputs": d["kept_out"]["outputs"], "net_tokens": d["net_tokens"],
                     "added": d["added"], "records_full": d["records_full"]})
        totals["sessions"] += 1
        totals["recorded_sessions"] += 1 if d["recorded_events"] else 0
        totals["added_tokens"] += d["added_tokens"]
        totals["added_chars"] += d["added_chars"]
        totals["kept_out_tokens"] += d["kept_out"]["tokens"]
        totals["kept_out_outputs"] += d["kept_out"]["outputs"]
        totals["kept_out_bytes_before"] += d["kept_out"]["bytes_before"]
        totals["kept_out_bytes_after"] += d["kept_out"]["bytes_after"]
        totals["net_tokens"] += d["net_tokens"]
        for a in d["added"]:
            row = by_handler.setdefault(a["handler"], {"handler": a["handler"], "count": 0, "chars": 0, "tokens": 0})
            for k in ("count", "chars", "tokens"):
                row[k] += a[k]
    totals["added"] = sorted(by_handler.values(), key=lambda r: (-r["tokens"], r["handler"]))
    return {"since": since, "seconds": seconds, "sessions": rows, "totals": totals}
