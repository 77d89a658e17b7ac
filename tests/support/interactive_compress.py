#!/usr/bin/env python3
"""What the model reads after Gemini CLI compresses an interactive session
in which the engine gave a rule: Gemini compresses only between prompts
(never inside one `-p` prompt), so this drives it in a tmux pane, offline
(tests/support/: loopback-only namespace, scripted stand-in model,
throwaway HOME; root needed).

    python3 tests/support/interactive_compress.py OUT [--threshold 0.02]

(as root, a Python with the test dependencies, tmux and Gemini CLI where
tests/support finds it.)  In OUT: home/, the project proj/ (a git
repository with one Cursor rule, alwaysApply), the engine's state/ and
cache/.  The engine is installed for Gemini (`engine install --agent gemini
--user`) with a profile adding Cursor's rules, which Gemini does not read;
the session's start gives the rule.  Three prompts are typed; the stand-in
reports 30,000 input tokens for the first prompt's two calls and about
2,500 after, so a compression threshold of 0.02 (of 1,048,576) compresses
once, before the second prompt.  Printed: for each request the model got
(main-loop or summary), how many times it holds the rule, and the
engine's session records (each event that added something).  What was found: AGENTS-MEASURED.md, "After a
compaction".
"""

import argparse
import shlex
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: support, hook_fixtures

from hook_fixtures import CURSOR_SOURCE, profile_text  # noqa: E402
from support import gemini  # noqa: E402
from support.gemini_api import GeminiAPI, request_text  # noqa: E402
from support.nodns import NoDNS  # noqa: E402
from support.offline import Netns, base_env  # noqa: E402
from support.standin import say, shell  # noqa: E402

MARK = "CURSOR_INTER_9d"
PROMPTS = (("go", 2), ("next", 4), ("more", 5))  # each prompt, and the main-loop requests served once it is answered


def world(out):
    """HOME, the project with its Cursor rule, the engine installed for Gemini; the engine's folders."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    home, proj = out / "home", out / "proj"
    home.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    (proj / ".cursor" / "rules").mkdir(parents=True)
    (proj / ".cursor" / "rules" / "names.mdc").write_text(f"---\nalwaysApply: true\n---\n# Names\nName every branch {MARK}.\n")
    prof = out / "profile.yaml"
    prof.write_text(profile_text({"prompt": [{"name": "rules", "sources": [{"agent": "rules"}, CURSOR_SOURCE]}]}, name="inter"))
    engine = {"ENGINE_STATE_DIR": str(out / "state"), "ENGINE_CACHE_DIR": str(out / "cache")}
    subprocess.run([sys.executable, "-m", "engine.cli", "install", "--agent", "gemini", "--user", "--profile", str(prof)],
                   cwd=proj, env=base_env(home, engine), check=True, capture_output=True)
    return home, proj, engine


def stand_in():
    """30,000 input tokens for the first two main-loop requests, about 2,500 after."""
    served = []

    def tokens(_req):
        served.append(1)
        return 30000 if len(served) <= 2 else 2000 + 100 * len(served)
    return GeminiAPI([shell("echo a"), say("one"), shell("echo b"), say("two"), say("three")], tokens=tokens)


def drive(home, proj, engine, api, out, threshold):
    gemini.write_settings(home, None, {"model": {"compressionThreshold": threshold}})
    sock = str(out / "tmux.sock")

    def tmux(*args):
        return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, timeout=20)
    dns = NoDNS()
    with Netns() as ns, closing(dns):
        ns.run(dns.bind)
        dns.start()
        ns.run(api.bind)
        node, entry = gemini.find_gemini()
        cmd = [node, *gemini.NODE_FLAGS, entry, "--yolo", "-m", gemini.MODEL]
        env = base_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": api.url,
                              "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true", **engine})
        env.pop("TERM", None)  # the pane's own
        env["PWD"] = str(proj)
        with api:
            try:
                ns.run(subprocess.run, ["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "x", "-x", "200",
                                        "-y", "50", "-c", str(proj), shlex.join(str(c) for c in cmd)], env=env, check=True,
                       timeout=20)
                settle(tmux)  # its start, and the hooks of its start
                for text, served in PROMPTS:
                    tmux("send-keys", "-t", "x", "-l", text)
                    time.sleep(0.7)
                    tmux("send-keys", "-t", "x", "Enter")
                    end = time.time() + 60
                    while time.time() < end and sum(1 for r in api.log if r.kind == "main") < served:
                        time.sleep(0.3)
                    settle(tmux)
            finally:
                tmux("kill-server")


# What the pane shows while Gemini works (a hook runs, a response streams),
# and what it shows once its input box takes a message.
BUSY, READY = ("Executing Hook", "esc to cancel"), "Type your message"


def settle(tmux, quiet=1.0, limit=30.0):
    """Wait until the pane has shown the input box and nothing running for
    `quiet` seconds (at most `limit`)."""
    end, since = time.time() + limit, None
    while time.time() < end:
        pane = tmux("capture-pane", "-p", "-t", "x").stdout
        if READY in pane and not any(b in pane for b in BUSY):
            since = since or time.time()
            if time.time() - since >= quiet:
                return
        else:
            since = None
        time.sleep(0.2)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--threshold", type=float, default=0.02)
    args = ap.parse_args(argv)
    home, proj, engine = world(args.out)
    api = stand_in()
    drive(home, proj, engine, api, args.out, args.threshold)
    for r in api.log:
        if r.kind in ("main", "summary"):
            text = request_text(r.body)
            print(f"{r.kind:8} {MARK} x{text.count(MARK)}{'  (holds the summary)' if api.summary in text else ''}")
    for path in sorted((args.out / "state" / "records").glob("*.ndjson")):
        print(path.read_text(encoding="utf-8").strip())


if __name__ == "__main__":
    main()
