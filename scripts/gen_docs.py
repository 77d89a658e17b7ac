#!/usr/bin/env python3
"""Write the generated reference pages into docs/reference/ (the pages come
from engine.cli.reference; tests/test_docs.py fails when the committed ones
differ).  `--check` writes nothing and lists the pages that drifted."""

import sys
from pathlib import Path

from engine.cli.reference import check, write

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "reference"


def main(argv):
    if argv[1:] == ["--check"]:
        drifted = check(FOLDER)
        for name in drifted:
            print(f"{FOLDER / name}: differs from what the schemas and the parser say; run: python scripts/gen_docs.py")
        return 1 if drifted else 0
    if argv[1:]:
        print("usage: python scripts/gen_docs.py [--check]", file=sys.stderr)
        return 2
    for name in write(FOLDER):
        print(FOLDER / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
