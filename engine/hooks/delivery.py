"""The engine's own deliveries, told apart by a marker only the engine makes.

Each refresh that delivers rule files makes a fresh id (16 hex digits from
the OS's random source) and puts it in its text on one line
(`hooks.in_view.delivery_marker`, e.g. `[rules-engine delivery 3f9a...]`).
The session's state keeps what that delivery held (`ivd:<id>`: the epoch
and position it went in at, then each file's content digest and real path),
and the agent's transcript, where it records hook output
(`hook_additional_context`), witnesses where the delivery really went in.
For an agent that records hook output (hooks.in_view.attachments_since;
measured with 2.1.330: the record is written before the model request
that carries it), a delivery the transcript does not show once a later
response is there never reached the model: it does not count.  For older
agents the state's record stands alone.

The rule it keeps: only an id the engine made and recorded says that the
engine delivered something.  A heading, a banner or a file name inside a
rule body says nothing: a project's rule that holds `## your-rule.md`, or
shares a base name with the user's rule, cannot make the user's rule count
as in view.  An id found in a transcript but not in the session's state is
ignored.

Plain string work only: this runs in every injecting hook.
"""

import os

KEY = "ivd:"  # state key prefix: ivd:<id> -> the delivery's record
ID_LENGTH = 16
_HEX = frozenset("0123456789abcdef")


def new_id():
    return os.urandom(ID_LENGTH // 2).hex()


def marker_line(fmt, delivery_id):
    """The marker line of one delivery ("" when the profile sets no format)."""
    return fmt.replace("{id}", delivery_id) if fmt else ""


def identity(x):
    """(real path, content digest) of a rule file or an Item."""
    return x.real, x.digest


UNWITNESSED = "\tunwitnessed"  # in a delivery's head line: the transcript cannot show it
STAYS = "\tstays"  # in a delivery's head line: a resumed run of the agent still holds it


def record(epoch_id, position, items, witnessed=True, stays=False):
    """The state value of one delivery: its epoch and position (and whether
    the agent's transcript can show it, and whether a resume keeps it),
    then one `digest<TAB>real path` line per file (a path holding a line
    break cannot be written down, and so never counts as delivered)."""
    head = f"{epoch_id}\t{int(position)}" + ("" if witnessed else UNWITNESSED) + (STAYS if stays else "")
    lines = [head]
    lines += [f"{it.digest}\t{it.real}" for it in items if "\n" not in it.real and "\t" not in it.digest]
    return "\n".join(lines)


def parse(value):
    """(epoch id, position, {(real, digest)}, witnessed, stays) of a state
    value, or None."""
    if not isinstance(value, str):
        return None
    head, _, rest = value.partition("\n")
    stays = head.endswith(STAYS)
    head = head.removesuffix(STAYS)
    witnessed = not head.endswith(UNWITNESSED)
    epoch_id, _, pos = head.removesuffix(UNWITNESSED).rpartition("\t")
    try:
        position = int(pos)
    except ValueError:
        return None
    files = set()
    for line in rest.split("\n") if rest else ():
        digest, tab, real = line.partition("\t")
        if tab:
            files.add((real, digest))
    return epoch_id, position, files, witnessed, stays


def forgotten(snapshot, epochs):
    """State updates that empty the records of deliveries made before the
    epochs the transcript reader still reads (`epochs`): nothing can show
    them in view again, and a long session's state stays small.  One
    recorded for the epoch after the last one read (made while a
    compaction ran beside the turn, its summary not written yet) stays."""
    ids = {i for e in epochs for i in (*e.ids, *e.carried, *e.survives, "next:" + e.id)}
    seen = {d for e in epochs for d in e.delivered}
    out = {}
    for key, value in snapshot.items():
        if isinstance(key, str) and key.startswith(KEY) and value:
            rec = parse(value)
            if rec is None or (rec[0] not in ids and key[len(KEY):] not in seen):
                out[key] = ""
    return out


def found_in(text, fmt):
    """The ids of the marker lines in one recorded hook output."""
    if not fmt or not isinstance(text, str):
        return []
    prefix, _, suffix = fmt.partition("{id}")
    out, at = [], text.find(prefix)
    while at >= 0:
        start = at + len(prefix)
        candidate = text[start:start + ID_LENGTH]
        if len(candidate) == ID_LENGTH and _HEX.issuperset(candidate) \
                and text.startswith(suffix, start + ID_LENGTH):
            out.append(candidate)
        at = text.find(prefix, start)
    return out


def positions(snapshot, epoch, others, witnessing):
    """{(real, digest): position} of what the engine delivered in `epoch`:
    per the transcript where it witnessed the delivery (epoch.delivered),
    else per the state's record; a delivery the transcript shows in another
    epoch (`others`) is not in this one, and one a `witnessing` agent's
    transcript does not show, with a response after it, is lost (unless
    it was made at an event whose additions the transcript never shows).
    One the epoch's compaction kept behind its summary (`epoch.carried`),
    or one a resume kept (made at an event whose additions the agent's
    resumed runs still hold, before a resume that began `epoch`), is in
    view from the epoch's start."""
    out = {}
    for key, value in snapshot.items():
        if not (isinstance(key, str) and key.startswith(KEY)):
            continue
        rec = parse(value)
        if rec is None:
            continue
        did = key[len(KEY):]
        epoch_id, position, files, witnessed, stays = rec
        shown = [e for e in others if did in e.delivered]
        if did in epoch.delivered:
            position = epoch.delivered[did]
        elif stays and _kept_by_a_resume(epoch, epoch_id, shown, witnessing and witnessed):
            position = 0
        elif shown:
            continue
        elif epoch_id in epoch.carried:
            position = 0
        elif epoch_id not in epoch.ids:
            continue
        elif witnessing and witnessed and epoch.complete and epoch.tokens is not None and epoch.tokens > position:
            continue  # (an epoch cut by the read bound may hold the record unread)
        for ident in files:
            out[ident] = max(position, out.get(ident, 0))
    return out


def _kept_by_a_resume(epoch, epoch_id, shown, needs_witness):
    """Did a resume that began `epoch` keep a delivery recorded under
    `epoch_id` (one made at an event the agent's resumed runs still hold)?
    Where the transcript would show it, only one it shows before the resume
    (one it does not show never reached the model)."""
    if not epoch.survives:
        return False
    if needs_witness:
        return any(set(e.ids).intersection(epoch.survives) for e in shown)
    return epoch_id in epoch.survives
