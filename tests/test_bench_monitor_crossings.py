"""bench/monitor_crossings.py, the figure docs/context-intelligence.md
quotes (every crossing of the shared sessions warned on time), on a session
of two responses, the second past 70% (a tool result of 60,000 bytes
between them: the gate reads the fill once the transcript grew as many
bytes as the tokens missing), the bench must hear the warning the
hook gives.  It read the answer's origins for a field named
`systemMessage`, which the dispatcher has called `user_message` since the
agent seam (86019d1): every crossing counted as missed (43 of 43 on the
shared sessions, where 43 are warned on time)."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _line(rec):
    return json.dumps(rec) + "\n"


def _session(path):
    lines = [_line({"type": "user", "isSidechain": False, "sessionId": "s", "uuid": "u1", "cwd": "/p",
                    "message": {"role": "user", "content": "go"}})]
    for n, tokens in ((1, 100000), (2, 150000)):
        tid = f"toolu_{n}"
        lines.append(_line({"type": "assistant", "isSidechain": False, "sessionId": "s", "uuid": f"a{n}",
                            "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude-x",
                                        "content": [{"type": "tool_use", "id": tid, "name": "Bash",
                                                     "input": {"command": "ls"}}],
                                        "usage": {"input_tokens": tokens, "output_tokens": 5}}}))
        lines.append(_line({"type": "user", "isSidechain": False, "sessionId": "s", "uuid": f"r{n}",
                            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                                     "content": "x" * 60000}]}}))
    path.write_text("".join(lines))
    return path


def test_the_bench_hears_the_warning_the_hook_gives(tmp_path):
    """Run as its users run it (a process: tests do not import the bench)."""
    path = _session(tmp_path / "s.jsonl")
    run = subprocess.run([sys.executable, str(REPO / "bench" / "monitor_crossings.py"), "--transcripts", str(path),
                          "--per", "1", "--thresholds", "70"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    (row,) = [line.split() for line in run.stdout.splitlines() if line.startswith("all ")]
    per, events, reads, crossings, on_time, late, missed = map(int, row[1:])
    assert (crossings, on_time, late, missed) == (1, 1, 0, 0), run.stdout
