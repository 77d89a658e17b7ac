#!/usr/bin/env python3
"""What the model reads after Gemini CLI compresses an interactive session
in which the engine gave a rule: Gemini compresses before a main-loop
request whose last response passed the threshold, at a prompt's start or
before the request that sends a tool's result, and tells no hook; so this
drives it in a tmux pane, offline (tests/support/: loopback-only
namespace, scripted stand-in model, throwaway HOME; root needed).

    python3 tests/support/interactive_compress.py OUT [--threshold 0.02]

(as root, a Python with the test dependencies, tmux and Gemini CLI where
tests/support finds it.) In OUT: home/, the project proj/ (a git repository
with one Cursor rule, alwaysApply), the engine's state/ and cache/.  The
engine is installed for Gemini (`engine install --agent gemini --user`)
with a profile adding Cursor's rules, which Gemini does not read; the
session's start gives the rule.  Four prompts are typed; the stand-in
reports the input tokens of FIGURES for the main-loop requests (1,000 for
any other), so a compression threshold of 0.02 (of 1,048,576) compresses
three times: before the second prompt (all of the history), inside it
before the request that sends the second shell call's result (keeping that
prompt's turn, with the rule an AfterTool gave in the first call's result),
and inside the third before the request that sends its call's result
(keeping that prompt's turn, without the rule).  Printed: for each request
the model got (main-loop or summary), how many times it holds the rule, and
the engine's session records (each event that added something).  What was
found: AGENTS-MEASURED.md, "After a compaction".
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
PROMPTS = (("go", 2), ("next", 5), ("more", 7), ("last", 8))  # each prompt, and the main-loop requests served once it is answered
# The input tokens each main-loop request reports, in order: past the threshold
# at the first prompt's two, then at a shell call in each of the next two prompts.
FIGURES = (30000, 30000, 2500, 30000, 2600, 30000, 2700, 2800)
SCRIPT = (shell("echo a"), say("one"), shell("echo b"), shell("echo c"), say("two"), shell("echo d"), say("three"),
          say("four"))

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
    """The model: SCRIPT, reporting FIGURES (1,000 for a summary request)."""
    served = []

    def tokens(req):
        if req.kind != "main":
            return 1000
        served.append(1)
        return FIGURES[min(len(served), len(FIGURES)) - 1]
    return GeminiAPI(list(SCRIPT), tokens=tokens)

# The pane's tmux: a Gemini that ends keeps its pane, its last screen and exit status.
TMUX_CONF = "set -g remain-on-exit on\n"


def drive(home, proj, engine, api, out, threshold):
    gemini.write_settings(home, None, {"model": {"compressionThreshold": threshold}})
    sock, conf = str(out / "tmux.sock"), out / "tmux.conf"
    conf.write_text(TMUX_CONF)

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
        new_session = ["tmux", "-S", sock, "-f", str(conf), "new-session", "-d", "-s", "x", "-x", "200", "-y", "50",
                       "-c", str(proj), shlex.join(str(c) for c in cmd)]
        with api:
            try:
                start(tmux, lambda: ns.run(subprocess.run, new_session, env=env, check=True, timeout=20))
                for text, served in PROMPTS:
                    submit(tmux, api, text)
                    wait_until(lambda: mains(api) >= served, 180, tmux, f"{served} main-loop requests after {text!r}")
                    settle(tmux)
            finally:
                quit_gemini(tmux)


def start(tmux, new_session, first_screen=45.0):
    """Start Gemini in the pane and wait for its first screen (about 1.2 s
    here), then for its start's hooks to end. A Gemini that ends fails at
    once with what it left: its exit status and screen."""
    new_session()
    wait_until(lambda: drawn(tmux), first_screen, tmux, "Gemini's first screen")
    settle(tmux)  # its start, and the hooks of its start


# What the pane shows while Gemini works (a hook runs, a response streams),
# and what its input box shows while it is empty and takes a message.
BUSY, READY = ("Executing Hook", "esc to cancel"), "Type your message"


def quit_gemini(tmux, limit=30):
    """`/quit`, then wait for Gemini to end, the hooks of its end with it,
    before the pane goes: killed, it would leave those hooks running past
    the test (they would write into its folders once they are gone)."""
    if not gone(tmux):
        tmux("send-keys", "-t", "x", "-l", "/quit")
        time.sleep(0.5)  # an Enter right after the keys would be a newline (submit)
        tmux("send-keys", "-t", "x", "Enter")
        wait_until(lambda: gone(tmux), limit)
    tmux("kill-server")


def mains(api):
    return sum(1 for r in api.log if r.kind == "main")


def submit(tmux, api, text):
    """Type `text` and press Enter once the box shows it. Gemini takes keys
    that arrive together as a paste and drops an Enter among them (measured:
    `go` and Enter sent at once leave `go` in the box), and on a loaded
    machine keys sent 0.7 s apart can still reach it together; so Enter is
    pressed again until the box is empty, a hook or response runs, or a
    request arrives."""
    before = mains(api)
    tmux("send-keys", "-t", "x", "-l", text)
    wait_until(lambda: READY not in pane(tmux), 60, tmux, f"{text!r} in the input box")
    for _ in range(6):
        time.sleep(0.5)
        tmux("send-keys", "-t", "x", "Enter")
        if wait_until(lambda: taken(pane(tmux)) or mains(api) > before, 10):
            return
    raise AssertionError(f"Gemini never took the prompt {text!r}; {describe(tmux)}")


def taken(screen):
    return READY in screen or any(b in screen for b in BUSY)


def pane(tmux):
    return tmux("capture-pane", "-p", "-t", "x").stdout


def drawn(tmux):
    """Whether Gemini, still running, has drawn something (a pane it left
    shows tmux's line on its end)."""
    return bool(pane(tmux).strip()) and not gone(tmux)


def gone(tmux):
    """Whether Gemini has ended (its pane kept, dead) or the pane is gone."""
    shown = tmux("display-message", "-p", "-t", "x", "#{pane_dead}")
    return shown.returncode != 0 or shown.stdout.strip() == "1"


def describe(tmux):
    """What a failure shows: whether Gemini still runs (else its exit
    status, or tmux's error), what runs under it (a hook, a shell), and its
    screen, blank lines dropped."""
    shown = tmux("display-message", "-p", "-t", "x", "#{pane_pid} #{pane_dead} #{pane_dead_status} #{pane_dead_signal}")
    if shown.returncode != 0:
        return f"no pane ({shown.stderr.strip()})"
    pid, dead, status, signal = (shown.stdout.split() + ["", "", "", ""])[:4]
    # the exit status once tmux has reaped the process (seen here: at times not for seconds after the pane died)
    state = f"Gemini ended (status {status or '?'}, signal {signal or '-'})" if dead == "1" else f"Gemini runs (pid {pid})"
    tree = subprocess.run(["ps", "-o", "pid,etimes,args", "--sid", pid], capture_output=True, text=True).stdout
    lines = [line.rstrip() for line in pane(tmux).splitlines() if line.strip()]
    return "\n".join([state, "processes:", tree.rstrip(), "screen:", *(lines or ["(blank)"])])


def wait_until(check, limit, tmux=None, what=""):
    """True once `check()` is; at the limit, False, or, given what was
    awaited (and the pane, which then must not end), an error that shows
    the pane."""
    end = time.time() + limit
    while time.time() < end:
        if tmux is not None and gone(tmux):
            raise AssertionError(f"Gemini ended while waiting for {what}; {describe(tmux)}")
        if check():
            return True
        time.sleep(0.2)
    if tmux is None:
        return False
    raise AssertionError(f"waited {limit} s for {what}; {describe(tmux)}")


def settle(tmux, quiet=1.0, limit=120.0):
    """Wait until the pane has shown the empty input box and nothing running
    for `quiet` seconds (at most `limit`, then an error that shows it)."""
    since = [None]

    def quiet_for():
        if idle(pane(tmux)):
            since[0] = since[0] or time.time()
            return time.time() - since[0] >= quiet
        since[0] = None
        return False
    wait_until(quiet_for, limit, tmux, "the empty input box with nothing running")


def idle(screen):
    return READY in screen and not any(b in screen for b in BUSY)


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
