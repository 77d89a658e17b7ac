"""How long the engine's one redactor (engine/core/redact.py) takes on 10 MB:
`found_in` (the content cache's check before it stores an output; str and
bytes) and `redact`, on real transcripts cut to 10 MB (bench/common.py's
transcript_files: $ENGINE_BENCH_TRANSCRIPTS, else the recorded ones) and
on a synthetic build log with a few secrets in it; beside it, the same with
the redactor of another revision (--rev, default b085972:
engine/core/redact.py and protect/secrets.yaml of that commit, read from git).

    python3 bench/redact_speed.py [--rev REV]
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import transcript_files  # noqa: E402
from redactor_at import redactor_at  # noqa: E402

SIZE = 10 * 1024 * 1024


def _transcripts():
    data = b""
    for f in transcript_files():
        with open(f, "rb") as fh:
            data += fh.read()
        if len(data) >= SIZE:
            break
    return (data * (SIZE // max(1, len(data)) + 1))[:SIZE] if data else b""


def _build_log():
    rnd = random.Random(7)
    words = ["error", "warning:", "compiling", "src/main.rs:42:7", "at", "the", "task-runner", "https://x.org/a",
             "key", "token", "aws", "eyJ", "sk-", "password", "-----", "://", "AKIA", "ghp_", "_KEY", "user@host"]
    out, n = [], 0
    while n < SIZE:
        line = " ".join(rnd.choice(words) for _ in range(14)) + "\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:SIZE].encode()


def _ms(fn, arg, repeats=5):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(arg)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="b085972", help="the revision to compare with (default b085972)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ENGINE_CACHE_DIR"] = tmp
        new, old = redactor_at(None), redactor_at(args.rev)
        for name, data in (("transcripts", _transcripts()), ("synthetic build log", _build_log())):
            if not data:
                continue
            text = data.decode("utf-8", "surrogateescape")
            print(f"{name}, {len(data) / 1048576:.1f} MB:")
            for who, r in (("this checkout", new), (args.rev, old)):
                print(f"  {who}: found_in(bytes) {_ms(r.found_in, data):6.0f} ms (secret found: {r.found_in(data)})"
                      f"   found_in(str) {_ms(r.found_in, text):6.0f} ms"
                      f"   redact(str) {_ms(r.redact, text, 3):6.0f} ms")


if __name__ == "__main__":
    main()
