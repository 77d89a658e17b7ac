"""The recorded sessions of Codex CLI, Gemini CLI and Copilot CLI under
tests/data/transcripts/<agent>/, made by the real agents offline (this
folder's harness) and trimmed.  Run by hand, as root, with the pinned agents
installed (tests/support/AGENTS-MEASURED.md), from the tests folder:

    cd tests && python -m support.samples ../tests/data/transcripts
    cd tests && python -m support.samples ../tests/data/transcripts copilot-compacting
    cd tests && python -m support.samples ../tests/data/transcripts gemini-resumed
    cd tests && python -m support.samples ../tests/data/transcripts copilot-resumed

One session per agent, the same script for each: a prompt; hooks that add a
rules-refresh banner at the session's start and a plain text before each
tool call (both kinds the session report lists); three shell calls, the
second failing (exit 2), the third printing 300 lines; a final answer.  The
model's answers report growing input tokens, a part of them as prompt cache
reads, and each agent compacts where it can offline: Codex past
`model_auto_compact_token_limit`, Copilot near its prompt limit (two more
shell calls give it the time), Gemini at a
second, resumed prompt (`--resume latest`) under a tiny
`compressionThreshold`.

Trimming keeps every line and every key: a string longer than TRIM_CHARS
(the agents' own system prompts and tool lists) keeps its head and gets a
mark of how much was cut; the machine's folders become /sample/home and
/sample/project.
"""

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from .codex import VERSION as CODEX_VERSION
from .codex import codex_hooks, run_codex
from .copilot import VERSION as COPILOT_VERSION
from .copilot import copilot_hooks, events_of, run_copilot
from .gemini import VERSION as GEMINI_VERSION
from .gemini import gemini_hooks, run_gemini, session_files
from .gemini_api import GeminiAPI
from .hooks import LogHook, context_answer
from .responses_api import ResponsesAPI
from .standin import say, shell

TRIM_CHARS = 1500
BANNER = "[Rules refresh, turn 0: 1 file(s), level standard]\n\n## testing.md\nRun the tests before you push."
PLAIN = "Checked before the tool ran."
SCRIPT = [shell("printf 'sample-%d\\n' 1 2 3"), shell("ls /no-such-folder-for-the-sample"),
          shell("seq 1 300"), say("All three ran; the second failed.")]
PROMPT = "run the three checks"


def tokens(step=1200):
    """Input tokens growing by `step` a request, a third of them cached after the first."""
    served = []

    def count(_req):
        served.append(1)
        return step * len(served)

    def cached(_req):
        return (step * len(served)) // 3 if len(served) > 1 else 0
    return count, cached


def _answers(start, pre):
    return {start: context_answer(BANNER), pre: context_answer(PLAIN)}


def make_codex(work):
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", _answers("SessionStart", "PreToolUse"))
    hooks = codex_hooks(hook, ["SessionStart", "PreToolUse"])
    count, cached = tokens()
    api = ResponsesAPI(SCRIPT, tokens=count, cached=cached)
    run = run_codex(PROMPT, home, cwd, None, hooks=hooks, api=api, config="model_auto_compact_token_limit = 3000")
    assert run.returncode == 0, str(run)
    return run.extra["rollout"], {"home": home, "project": cwd}, CODEX_VERSION


def make_copilot(work):
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", {"sessionStart": {"additionalContext": BANNER},
                                   "preToolUse": {"additionalContext": PLAIN}})
    hooks = copilot_hooks(hook, ["sessionStart", "preToolUse"])
    # Its own instructions and tools take about 14,000 of the 20,000; near
    # the limit it compacts in the background while the turn goes on.
    count, cached = tokens(4800)

    def near(req):  # 4,800, then 19,200, 19,300 ...: past 95% and under the limit
        n = count(req)
        return n if n == 4800 else 19000 + n // 48
    api = ResponsesAPI(SCRIPT[:-1] + [shell("echo four"), shell("echo five")] + SCRIPT[-1:], tokens=near,
                       cached=cached)
    run = run_copilot(PROMPT, home, cwd, None, hooks=hooks, api=api,
                      env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"})
    assert run.returncode == 0, str(run)
    events_of(run)  # the file exists and parses
    (path,) = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"))
    return path, {"home": home, "project": cwd}, COPILOT_VERSION


def make_copilot_compacting(work):
    """A variant (session-1.0.102-compacting.jsonl): Copilot's turn goes on
    while it compacts.  Answers report 85% of the 20,000 prompt limit (past
    where it compacts in the background, under where it waits for the
    summary) and the stand-in answers the summary request only once three
    more main-loop requests are served: their tool results and what the
    hooks added then (preToolUse and postToolUse context) are kept after the
    summary (AGENTS-MEASURED.md, "After a compaction")."""
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", {"sessionStart": {"additionalContext": BANNER},
                                   "preToolUse": {"additionalContext": PLAIN},
                                   "postToolUse": {"additionalContext": "Checked after the tool ran."}})
    hooks = copilot_hooks(hook, ["sessionStart", "preToolUse", "postToolUse"])
    count, cached = tokens(4800)

    def near(req):  # 4,800, then 17,000 and a little more each time: 85% of the limit
        n = count(req)
        return n if n == 4800 else 17000 + n // 48
    api = ResponsesAPI([shell(f"printf 'step-%d\\n' {i}") for i in range(1, 9)] + [say("Eight steps ran.")],
                       tokens=near, cached=cached, summary_after=3)
    run = run_copilot(PROMPT, home, cwd, None, hooks=hooks, api=api, env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"})
    assert run.returncode == 0, str(run)
    kinds = [r.kind for r in api.log]
    assert "summary" in kinds and kinds[kinds.index("summary") + 1:].count("main") > 3, kinds
    (path,) = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"))
    return path, {"home": home, "project": cwd}, COPILOT_VERSION


def make_copilot_resumed(work):
    """A variant (session-1.0.102-resumed.jsonl): the first run's three
    shell calls, then `--resume=ID` with a second prompt and one more shell
    call: what a resumed session's requests hold of what hooks added before
    (AGENTS-MEASURED.md, "A resumed session": sessionStart's and
    preToolUse's no longer, userPromptSubmitted's and postToolUse's once)."""
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", {"sessionStart": {"additionalContext": BANNER},
                                   "userPromptSubmitted": {"additionalContext": "Answer in short sentences."},
                                   "preToolUse": {"additionalContext": PLAIN},
                                   "postToolUse": {"additionalContext": "Checked after the tool ran."}})
    hooks = copilot_hooks(hook, ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse"])
    count, cached = tokens(4800)
    run = run_copilot(PROMPT, home, cwd, None, hooks=hooks, api=ResponsesAPI(SCRIPT, tokens=count, cached=cached))
    assert run.returncode == 0, str(run)
    (session,) = [d for d in (home / ".copilot" / "session-state").iterdir() if (d / "events.jsonl").is_file()]
    again = run_copilot("and once more", home, cwd, None, hooks=hooks, args=(f"--resume={session.name}",),
                        api=ResponsesAPI([shell("printf 'again-%d\\n' 1"), say("Once more: done.")], tokens=count,
                                         cached=cached, numbered_from=len(run.api.log)))
    assert again.returncode == 0 and len(again.requests) == 2, str(again)
    (path,) = sorted((home / ".copilot" / "session-state").glob("*/events.jsonl"))
    return path, {"home": home, "project": cwd}, COPILOT_VERSION


def make_gemini(work):
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", _answers("SessionStart", "BeforeTool"))
    hooks = gemini_hooks(hook, ["SessionStart", "BeforeTool"])
    count, cached = tokens()
    run = run_gemini(PROMPT, home, cwd, None, hooks=hooks, api=GeminiAPI(SCRIPT, tokens=count, cached=cached))
    assert run.returncode == 0, str(run)
    settings = {"model": {"compressionThreshold": 0.0002}}
    count, cached = tokens(2400)
    again = run_gemini("and once more", home, cwd, None, hooks=hooks, settings=settings, args=("--resume", "latest"),
                       api=GeminiAPI([say("Once more: done.")], tokens=count, cached=cached))
    assert again.returncode == 0, str(again)
    files = session_files(home)
    return files[-1], {"home": home, "project": cwd}, GEMINI_VERSION


def make_gemini_resumed(work):
    """A variant (session-0.61.0-resumed.jsonl): the same first run, then
    `--resume latest` with a second prompt and one more shell call, no
    compression: what a resumed session's requests hold of what hooks added
    before (AGENTS-MEASURED.md, "A resumed session")."""
    home, cwd = work / "home", work / "project"
    cwd.mkdir(parents=True)
    hook = LogHook(work / "hook", {"SessionStart": context_answer(BANNER), "BeforeAgent": context_answer(PLAIN),
                                   "AfterTool": context_answer("Checked after the tool ran.")})
    hooks = gemini_hooks(hook, ["SessionStart", "BeforeAgent", "AfterTool"])
    count, cached = tokens()
    run = run_gemini(PROMPT, home, cwd, None, hooks=hooks, api=GeminiAPI(SCRIPT, tokens=count, cached=cached))
    assert run.returncode == 0, str(run)
    again = run_gemini("and once more", home, cwd, None, hooks=hooks, args=("--resume", "latest"),
                       api=GeminiAPI([shell("printf 'again-%d\\n' 1"), say("Once more: done.")], tokens=count,
                                     cached=cached))
    assert again.returncode == 0 and [r.kind for r in again.api.log] == ["main", "main"], str(again)
    files = session_files(home)
    return files[-1], {"home": home, "project": cwd}, GEMINI_VERSION


def trimmed(value, places):
    if isinstance(value, str):
        for real, shown in places:
            value = value.replace(real, shown)
        if len(value) > TRIM_CHARS:
            value = value[:TRIM_CHARS] + f"...[trimmed {len(value) - TRIM_CHARS} characters]"
        return value
    if isinstance(value, list):
        return [trimmed(v, places) for v in value]
    if isinstance(value, dict):
        return {k: trimmed(v, places) for k, v in value.items()}
    return value


def _sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def write_trimmed(src, dst, folders):
    """Every line kept, its folders named /sample/NAME (and a folder's
    SHA-256, as Gemini CLI names a project, that of the new name)."""
    places = sorted(((str(p), f"/sample/{name}") for name, p in folders.items()), key=lambda x: -len(x[0]))
    places += [(_sha(real), _sha(shown)) for real, shown in places]
    lines = []
    for raw in Path(src).read_text(encoding="utf-8").splitlines():
        if raw.strip():
            lines.append(json.dumps(trimmed(json.loads(raw), places), ensure_ascii=False))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(lines) + "\n", encoding="utf-8")


MAKERS = {"codex": make_codex, "gemini": make_gemini, "copilot": make_copilot}
# Variants: `<agent>-<what>` writes <agent>/session-<version>-<what>.jsonl.
VARIANTS = {"copilot-compacting": make_copilot_compacting, "copilot-resumed": make_copilot_resumed,
            "gemini-resumed": make_gemini_resumed}


def main(out, agents=None):
    out = Path(out)
    for agent in agents or MAKERS:
        work = Path(tempfile.mkdtemp(prefix=f"sample-{agent}-"))
        try:
            src, folders, version = {**MAKERS, **VARIANTS}[agent](work)
            name, _, what = agent.partition("-")
            dst = out / name / (f"session-{version}-{what}.jsonl" if what else f"session-{version}.jsonl")
            write_trimmed(src, dst, folders)
            print(f"{dst}: {dst.stat().st_size} bytes from {src.name} ({agent} {version})")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or None)
