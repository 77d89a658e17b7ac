"""Where the suite's recorded data lives: the one module that knows.

tests/data/ holds real third-party files with their sources and licences
(tests/data/README.md): rule files in corpus/rules/ and Claude Code
transcripts in transcripts/, the latter compressed (*.jsonl.zst); and the
sessions of the other agents this project recorded itself, run offline
(transcripts/<agent>/, listed in transcripts/AGENTS.tsv). A test reads them
only through this module, never from a path outside the repository:

    from testdata import CORPUS, agent_transcript, corpus_files, transcript, transcripts

    corpus_files()                  # every corpus rule file, sorted
    transcript("23-erk-...jsonl")   # a transcript, unpacked: a Path to read (do not write it)
    transcripts()                   # every recorded transcript, unpacked, sorted by name
    agent_transcript("codex")       # the recorded session of another agent (a Path; do not write it)
    agent_transcript("copilot", "compacting")  # a variant of it (session-<version>-compacting.jsonl)

Transcripts are unpacked once per test run into its own folder (the
conftest names it in ENGINE_TESTS_DATA; elsewhere a temporary folder removed
at exit), written under a temporary name and renamed, so parallel workers
never see half a file.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus" / "rules"
PACKED = DATA / "transcripts"
PACKED_SUFFIX = ".zst"


def corpus_files():
    """Every rule file of the corpus (*.md), sorted by name."""
    files = sorted(CORPUS.glob("*.md"))
    assert files, f"no corpus files under {CORPUS}"
    return files


def transcript_names():
    """The names (NN-....jsonl) of every recorded transcript, sorted."""
    names = sorted(p.name[:-len(PACKED_SUFFIX)] for p in PACKED.glob("*.jsonl" + PACKED_SUFFIX))
    assert names, f"no transcripts under {PACKED}"
    return names


def transcript(name):
    """The recorded transcript `name`, unpacked: its Path (read it, copy it;
    never write it, other tests share it)."""
    packed = PACKED / (name + PACKED_SUFFIX)
    if not packed.is_file():
        raise FileNotFoundError(f"no recorded transcript {name} (looked for {packed})")
    target = _unpacked_dir() / name
    if not target.is_file():
        _unpack(packed, target)
    return target


def transcripts():
    """Every recorded transcript, unpacked, sorted by name."""
    return [transcript(n) for n in transcript_names()]


AGENTS = PACKED / "AGENTS.tsv"


def agent_rows():
    """Every row of AGENTS.tsv: the recorded sessions of other agents."""
    import csv

    with open(AGENTS, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def agent_samples():
    """{agent: row of AGENTS.tsv} of each agent's own recorded session
    (`<agent>/session-<version>.jsonl`; a variant adds `-<what>`)."""
    return {r["agent"]: r for r in agent_rows() if r["file"] == f"{r['agent']}/session-{r['version']}.jsonl"}


def agent_transcript(agent, variant=None):
    """The recorded session of `agent` (codex, gemini, copilot), or its
    `variant` (`<agent>/session-<version>-<variant>.jsonl`): its Path."""
    row = agent_samples().get(agent)
    if row is None:
        raise FileNotFoundError(f"no recorded session of {agent} (looked in {AGENTS})")
    if variant is not None:
        name = f"{agent}/session-{row['version']}-{variant}.jsonl"
        if not any(r["file"] == name for r in agent_rows()):
            raise FileNotFoundError(f"no recorded session {name} (looked in {AGENTS})")
        return PACKED / name
    return PACKED / row["file"]


def _unpack(packed, target):
    import zstandard  # only where a transcript is asked for

    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(packed, "rb") as src, open(tmp, "wb") as dst:
        zstandard.ZstdDecompressor().copy_stream(src, dst)
    os.replace(tmp, target)


_own_dir = None


def _unpacked_dir():
    global _own_dir
    named = os.environ.get("ENGINE_TESTS_DATA")
    if named:
        os.makedirs(named, exist_ok=True)
        return Path(named)
    if _own_dir is None:
        _own_dir = Path(tempfile.mkdtemp(prefix="engine-testdata-"))
        atexit.register(_remove, _own_dir, os.getpid())
    return _own_dir


def _remove(folder, owner):
    if os.getpid() == owner:  # not a forked child's exit: the folder is its parent's
        shutil.rmtree(folder, True)
