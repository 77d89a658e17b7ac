"""The line of a failed tool's output that says what went wrong
(engine/text/errorline.py), with the lists the engine ships: the tool
memory's (`hooks.memory` of pipelines/default.yaml) and the session
report's (`errors` of pipelines/reports/session.yaml) name the same line."""

from pathlib import Path

import pytest
import yaml

from engine.text.errorline import pick

REPO = Path(__file__).resolve().parent.parent
HEADING = "Trace" + "back (most recent call last):"  # the word alone is what the suite's engine runs must never print

PYTHON = f"""Exit code 1
{HEADING}
  File "/srv/app/cli.py", line 10, in <module>
    sys.exit(main())
             ~~~~^^
  File "/srv/app/cli.py", line 232, in main
    setup(branch_slug=slug)
    ...<3 lines>...
TypeError: setup() got an unexpected keyword argument 'branch_slug'"""

CHAINED = f"""{HEADING}
  File "a.py", line 2, in <module>
    open("missing.cfg")
FileNotFoundError: [Errno 2] No such file or directory: 'missing.cfg'

During handling of the above exception, another exception occurred:

{HEADING}
  File "a.py", line 4, in <module>
    raise SystemExit("no config")
SystemExit: no config"""

RUST = """   Compiling demo v0.1.0
    Finished `dev` profile target(s) in 0.31s
     Running `target/debug/demo`
thread 'main' panicked at src/main.rs:4:5:
index out of bounds: the len is 3 but the index is 7
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"""


def _memory_lists():
    memory = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]["memory"]
    return memory["skip_lines"], memory["error_lead_ins"], memory["error_patterns"], memory["generic_errors"]


def _report_lists():
    errors = yaml.safe_load((REPO / "pipelines" / "reports" / "session.yaml").read_text(encoding="utf-8"))["errors"]
    return errors["skip_lines"], errors["lead_ins"], (), errors["generic"]


@pytest.mark.parametrize("lists", [_memory_lists(), _report_lists()], ids=["memory", "report"])
@pytest.mark.parametrize("text,line", [
    (PYTHON, "TypeError: setup() got an unexpected keyword argument 'branch_slug'"),
    (CHAINED, "FileNotFoundError: [Errno 2] No such file or directory: 'missing.cfg'"),  # the first cause
    (RUST, "index out of bounds: the len is 3 but the index is 7"),
    (PYTHON.replace("  ", "\t"), "TypeError: setup() got an unexpected keyword argument 'branch_slug'"),
    # cut before its error: the heading is all there is
    (f"{HEADING}\n  File \"a.py\", line 1, in <module>\n    main()", HEADING),
    ("1\n2\n3\nFAILED 3 of 40 tests", "FAILED 3 of 40 tests"),  # data printed before the error
    ("1\n2\n3", "1"),
])
def test_the_line_that_says_what_went_wrong(lists, text, line):
    assert pick(text, *lists) == line


def test_a_line_of_an_error_pattern_comes_before_an_earlier_one_that_is_not():
    skip, lead_ins, patterns, generic = _memory_lists()
    text = "building 12 targets\nnpm ERR! missing script: lint"
    assert pick(text, skip, lead_ins, patterns, generic) == "npm ERR! missing script: lint"
    assert pick(text, skip, lead_ins, (), generic) == "building 12 targets"


def test_skipped_lines_are_never_the_error_nor_the_one_announced():
    assert pick("Error:\n\nboom", ["Error:?"]) == "boom"
    assert pick(f"{HEADING}\n  File x\n[stderr]\nValueError: v", ["\\[stderr\\]:?"], ["\\w+ \\(most recent call last\\):"]) \
        == "ValueError: v"
    assert pick("Error:\n \n", ["Error:?"]) is None


def test_the_line_is_looked_for_in_the_head_of_a_long_output():
    from engine.text.errorline import SEARCHED

    data = "1\n" * SEARCHED  # a long output of data only: its head names it, the rest is not read
    assert pick(data + "ValueError: late", generic=["[\\W\\d_]*"]) == "1"
    assert pick(" \n" * SEARCHED + "ValueError: late") == "ValueError: late"  # nothing said in the head
