"""How many of the secret shapes of tests/secrets/shapes.yaml the redactor
catches (every secret of the shape gone from the redacted text, and
`found_in` true), and how many of its clean texts it leaves alone; by
default this checkout's redactor, with --rev that of a git revision.

    python3 bench/secret_shapes.py             # this checkout
    python3 bench/secret_shapes.py --rev main  # the same table, an older redactor
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from redactor_at import REPO, redactor_at  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", help="a git revision whose redactor to measure (default: this checkout)")
    args = ap.parse_args()
    import yaml

    with open(os.path.join(REPO, "tests", "secrets", "shapes.yaml"), encoding="utf-8") as fh:
        table = yaml.safe_load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ENGINE_CACHE_DIR"] = tmp  # the redactor's rule cache: never the user's
        r = redactor_at(args.rev)
        missed = [s["name"] for s in table["shapes"]
                  if not r.found_in(s["text"]) or any(x in r.redact(s["text"]) for x in s["secrets"])]
        touched = [c["name"] for c in table["clean"] if r.found_in(c["text"]) or r.redact(c["text"]) != c["text"]]
    who = args.rev or "this checkout"
    shapes, clean = len(table["shapes"]), len(table["clean"])
    print(f"{who}: {shapes - len(missed)}/{shapes} secret shapes caught; "
          f"{clean - len(touched)}/{clean} clean texts left alone")
    for name in missed:
        print(f"  missed: {name}")
    for name in touched:
        print(f"  touched: {name}")


if __name__ == "__main__":
    main()
