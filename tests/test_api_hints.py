"""The type hints of the public API and of the kind protocols cost nothing
at run time: every hook imports the `engine` package, and a hook may
summarize with the message API, so their hints name their types for the
type checker only (`typing` alone costs a hook a few milliseconds)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_package_and_the_hinted_modules_import_no_typing():
    code = ("import sys; import engine, engine.messages.api, engine.messages.steps.base, "
            "engine.messages.detectors.base; print(sorted(m for m in ('typing',) if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run


def test_the_hints_are_there():
    import inspect

    import engine
    from engine.messages.api import compress_messages

    assert inspect.signature(engine.compress).return_annotation == "Result"
    assert inspect.signature(engine.load_profile).return_annotation == "Profile"
    assert inspect.signature(compress_messages).parameters["recency"].annotation == "int | None"
