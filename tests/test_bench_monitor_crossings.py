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


def test_the_bench_hears_the_warning_the_hook_gives(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import monitor_crossings as bench
    from engine.replay.world import World

    path = _session(tmp_path / "s.jsonl")
    with World() as world:
        heard, _reads = bench.replay(str(path), bench.profile(tmp_path, 1, 70), world)
    crossings = bench.crossings(path.read_bytes(), [70])
    assert len(crossings) == 1
    assert bench.judge(crossings, heard) == (1, 0, 0), heard
