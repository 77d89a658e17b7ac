"""The line of a failed tool's output that says what went wrong
(engine/text/errorline.py), with the lists the engine ships: the tool
memory's (`hooks.memory` of pipelines/default.yaml) and the session
report's (`errors` of pipelines/reports/session.yaml) name the same line."""

from pathlib import Path

import pytest
import yaml

from engine.core.settings import failure_head_chars
from engine.text import errorline

REPO = Path(__file__).resolve().parent.parent
SEARCHED = failure_head_chars()  # the engine's own figure (pipelines/settings/engine.yaml)


def pick(text, **lists):
    return errorline.pick(text, searched=SEARCHED, **lists)


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


PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0
collected 2 items

test_a.py .F                                                             [100%]

=================================== FAILURES ===================================
___________________________________ test_bad ___________________________________

    def test_bad():
        x = {"a": 1}
>       assert x["a"] == 2
E       assert 1 == 2

test_a.py:6: AssertionError
=========================== short test summary info ============================
FAILED test_a.py::test_bad - assert 1 == 2
========================= 1 failed, 1 passed in 0.62s =========================="""

GO = """--- FAIL: TestParse (0.00s)
    parse_test.go:12: got 3, want 4
FAIL
FAIL\texample.com/parse\t0.002s"""


def _memory_lists():
    memory = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]["memory"]
    return {"skip_lines": memory["skip_lines"], "failure_lines": memory["failure_lines"],
            "lead_ins": memory["error_lead_ins"], "error_patterns": memory["error_patterns"],
            "generic": memory["generic_errors"]}


def _report_lists():
    errors = yaml.safe_load((REPO / "pipelines" / "reports" / "session.yaml").read_text(encoding="utf-8"))["errors"]
    return {"skip_lines": errors["skip_lines"], "failure_lines": errors["failure_lines"], "lead_ins": errors["lead_ins"],
            "generic": errors["generic"]}


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
    # a test run: the line that names the failed test, after the whole log (and a traceback in it)
    (PYTEST, "FAILED test_a.py::test_bad - assert 1 == 2"),
    (PYTEST.replace("collected 2 items", f"{HEADING}\n  File x\nValueError: v"), "FAILED test_a.py::test_bad - assert 1 == 2"),
    (GO, "--- FAIL: TestParse (0.00s)"),
    ("PASS src/a.test.js\nFAIL src/b.test.js\n  \u25cf parse \u203a reads a number\n\n    expect(received).toBe(expected)",
     "\u25cf parse \u203a reads a number"),
    # compilers and checkers: the line with the file, its place and the error, not the command echoed first
    ("cc -O2 -c src/main.c\nsrc/main.c: In function 'main':\nsrc/main.c:3:5: error: 'x' undeclared (first use in this function)",
     "src/main.c:3:5: error: 'x' undeclared (first use in this function)"),
    ("engine/a.py:12: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]\n"
     "Found 1 error in 1 file (checked 3 source files)",
     "engine/a.py:12: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]"),
    ("> tsc --noEmit\n\nsrc/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
     "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("/repo/src/a.js\n  3:7  error  'x' is assigned a value but never used  no-unused-vars\n\n\u2716 1 problem (1 error, 0 warnings)",
     "3:7  error  'x' is assigned a value but never used  no-unused-vars"),
    # Node's uncaught error: its file and line, the source line (not indented) and a caret come first
    ("/srv/app/t.js:1\nfunction f(){ throw new TypeError('bad thing') }\n              ^\n\nTypeError: bad thing\n"
     "    at f (/srv/app/t.js:1:21)", "TypeError: bad thing"),
    ("node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\nError: Cannot find module 'left-pad'\nRequire stack:\n"
     "- /srv/app/m.js", "Error: Cannot find module 'left-pad'"),
])
def test_the_line_that_says_what_went_wrong(lists, text, line):
    assert pick(text, **lists) == line


def test_a_line_of_an_error_pattern_comes_before_an_earlier_one_that_is_not():
    lists = _memory_lists()
    text = "building 12 targets\nnpm ERR! missing script: lint"
    assert pick(text, **lists) == "npm ERR! missing script: lint"
    assert pick(text, **dict(lists, error_patterns=())) == "building 12 targets"


def test_skipped_lines_are_never_the_error_nor_the_one_announced():
    assert pick("Error:\n\nboom", skip_lines=["Error:?"]) == "boom"
    assert pick(f"{HEADING}\n  File x\n[stderr]\nValueError: v", skip_lines=["\\[stderr\\]:?"],
                lead_ins=["\\w+ \\(most recent call last\\):"]) == "ValueError: v"
    assert pick("Error:\n \n", skip_lines=["Error:?"]) is None


def test_the_line_is_looked_for_in_the_head_of_a_long_output():
    data = "1\n" * SEARCHED  # a long output of data only: its head names it, the rest is not read
    assert pick(data + "ValueError: late", generic=["[\\W\\d_]*"]) == "1"
    assert pick(" \n" * SEARCHED + "ValueError: late") == "ValueError: late"  # nothing said in the head
