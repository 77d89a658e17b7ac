"""Issue 18, whole-process speed: `engine compress` runs the pipeline with
the cyclic garbage collector off (millions of small objects, no cycles: the
collector walked them for nothing) and turns it back on after."""

import gc
import uuid

import pytest

from engine.cli.main import main


@pytest.mark.parametrize("extra", [[], ["-o", "OUT"], ["--json"]])
def test_compress_runs_without_the_cyclic_collector(tmp_path, monkeypatch, capsys, extra):
    import engine.text.pipeline as pipeline

    seen = []
    real = pipeline.compress

    def recording(profile, text, **kw):
        seen.append(gc.isenabled())
        return real(profile, text, **kw)

    monkeypatch.setattr(pipeline, "compress", recording)
    src = tmp_path / "rules.md"
    # new text (no cached result), whichever worker of the run compressed which case before
    src.write_text(f"- You must always run the tests ({uuid.uuid4().hex}).\n", encoding="utf-8")
    argv = ["compress", str(src)] + [str(tmp_path / "out.md") if a == "OUT" else a for a in extra]
    assert gc.isenabled()
    assert main(argv) == 0
    capsys.readouterr()
    assert seen == [False]
    assert gc.isenabled()
