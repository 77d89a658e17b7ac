"""How long the engine's one redactor (engine/redact.py) takes on 10 MB:
`found_in` (the content cache's check before it stores an output; str and
bytes) and `redact`, on real transcripts cut to 10 MB and on a synthetic
build log with a few secrets in it.  For reference, the same check with the
redactor of 3bf441d (engine/ccm/secrets.py and protect/secrets.yaml of that
commit, read from git).

    python3 bench/redact_speed.py
"""

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from common import transcript_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
SIZE = 10 * 1024 * 1024


def _transcripts():
    data = b""
    for f in transcript_files():
        data += open(f, "rb").read()
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


def _old_found_in():
    """The 3bf441d check: its class and its patterns, from git."""
    import yaml

    code = subprocess.run(["git", "-C", REPO, "show", "3bf441d:engine/ccm/secrets.py"], capture_output=True,
                          text=True, check=True).stdout
    doc = yaml.safe_load(subprocess.run(["git", "-C", REPO, "show", "3bf441d:protect/secrets.yaml"],
                                        capture_output=True, text=True, check=True).stdout)
    ns = {}
    exec(compile(code, "old_secrets", "exec"), ns)
    return ns["Secrets"]({"secret_patterns": doc["patterns"]}).found_in


def _ms(fn, arg, repeats=5):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(arg)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ENGINE_CACHE_DIR"] = tmp
        from engine.core.redact import redactor

        r = redactor()
        old = _old_found_in()
        print(f"patterns: {len(r._patterns)} (3bf441d: 10)")
        for name, data in (("transcripts", _transcripts()), ("synthetic build log", _build_log())):
            if not data:
                continue
            text = data.decode("utf-8", "surrogateescape")
            print(f"{name}, {len(data) / 1048576:.1f} MB:")
            print(f"  found_in(bytes) {_ms(r.found_in, data):7.0f} ms   (secret found: {r.found_in(data)})")
            print(f"  found_in(str)   {_ms(r.found_in, text):7.0f} ms")
            print(f"  redact(str)     {_ms(r.redact, text, 3):7.0f} ms")
            print(f"  3bf441d found_in(bytes) {_ms(old, data):7.0f} ms")


if __name__ == "__main__":
    main()
