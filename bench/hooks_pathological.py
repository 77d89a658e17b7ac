"""Wall time of `engine hook` on the pathological inputs of issue 10 (fault 4):
a FIFO transcript, a template asking for 10^9 characters, nested range()
loops, and a Redis that trickles one byte every 50 ms.

    python3 bench/hooks_pathological.py [--repo PATH] [--cap SECONDS] [--only TEXT]

--repo is the checkout whose engine runs (default: this one), so the same
script measures an older commit too; a run still going after --cap seconds
is killed and reported as "> cap".  Each case runs in a scratch HOME, state
and cache folder, with a warm compiled-profile cache (one run first).
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def profile(events):
    return json.dumps({"kind": "profile", "name": "bench", "extends": "default", "hooks": {"events": events}})


CASES = {
    "fifo transcript": (profile({"UserPromptSubmit": [{"name": "rules", "every_turns": 0, "every_tokens": 1000}]}), None),
    "template 'x'*10^9": (profile({"UserPromptSubmit": [{"name": "rules", "every_turns": 1,
                                                         "template": "{{ 'x'*1000000000 }}"}]}), None),
    # Passes `engine validate` (its sample cwd is /project): the limit is met while rendering.
    "template 'x'*10^9 at run time": (profile({"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "template":
                                      "{% if cwd != '/project' %}{{ 'x'*1000000000 }}{% endif %}"}]}), None),
    "nested range(100000) loops": (profile({"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "template":
                                   "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"}]}),
                                   None),
    "Redis trickling 1 byte/50 ms": (profile({}), "trickle"),
}


class Trickle:
    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        self.stop = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        self.srv.settimeout(0.2)
        while not self.stop:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                continue
            threading.Thread(target=self.drip, args=(conn,), daemon=True).start()

    def drip(self, conn):
        try:
            conn.recv(65536)
            conn.sendall(b"$100000\r\n")
            while not self.stop:
                conn.sendall(b"x")
                time.sleep(0.05)
        except OSError:
            pass
        finally:
            conn.close()


def run_case(repo, root, prof_text, extra, cap):
    home, project, state, cache = (root / n for n in ("home", "project", "state", "cache"))
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    (rules / "a.md").write_text("# A\nRun the tests before you push.\n")
    prof = root / "profile.yaml"
    prof.write_text(prof_text)
    fifo = root / "transcript.fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_"))}
    env.update(HOME=str(home), ENGINE_STATE_DIR=str(state), ENGINE_CACHE_DIR=str(cache), PYTHONPATH=str(repo))
    server = None
    if extra == "trickle":
        server = Trickle()
        env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{server.port}/0"
    event = json.dumps({"session_id": "bench", "transcript_path": str(fifo), "cwd": str(project),
                        "hook_event_name": "UserPromptSubmit", "prompt": "go"}).encode()
    cmd = [sys.executable, "-m", "engine.cli", "hook", "--profile", str(prof)]
    # Warm the compiled-profile cache: the same case once with a harmless
    # event type that loads the profile and the level (the case itself may
    # never finish on old code).
    for warm in ({"hook_event_name": "Notification"}, {"hook_event_name": "SessionStart", "source": "startup"}):
        subprocess.run(cmd, input=json.dumps({"session_id": "w", "cwd": str(project), **warm}).encode(),
                       capture_output=True, env={**env, "ENGINE_REDIS_URL": ""}, cwd=str(project), timeout=120)
    subprocess.run([sys.executable, "-c", "import sys; from engine.core.profile import load_profile; "
                    "load_profile(sys.argv[1], 'standard', cwd=sys.argv[2])", str(prof), str(project)],
                   env=env, cwd=str(project), timeout=120, capture_output=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=str(project), start_new_session=True)
    try:
        out, _ = proc.communicate(event, timeout=cap)
        took, status = time.monotonic() - start, f"exit {proc.returncode}, {len(out)} bytes out"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        took, status = None, "killed"
    finally:
        if server:
            server.stop = True
            server.srv.close()
    return took, status


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--only", help="run only the cases whose name contains this")
    args = ap.parse_args()
    print(f"engine from {args.repo}; cap {args.cap:.0f} s")
    for name, (prof_text, extra) in CASES.items():
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
            took, status = run_case(args.repo, Path(tmp), prof_text, extra, args.cap)
        shown = f"> {args.cap:.0f} s" if took is None else f"{took:.2f} s"
        print(f"{name:32} {shown:>10}  ({status})")


if __name__ == "__main__":
    main()
