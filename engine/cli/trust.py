"""`engine trust`: approve, list and revoke project profiles (a thin layer
over engine/core/trust_store.py).

- `engine trust [PATH]`: approve the project profile as it is now (PATH: a
  .engine/profile.yaml or the folder holding .engine/; default: the one
  found from the working folder).
- `engine trust --list`: every approval, and whether it still holds.
- `engine trust --revoke [PATH]`: forget an approval.
"""

import sys


def add_parser(sub):
    p = sub.add_parser("trust", help="approve a project's .engine/profile.yaml (like direnv allow); --list, --revoke",
                       description="A project's .engine/profile.yaml is used only once you approve it: the approval "
                       "records its real path and the sha256 of every file it brings in; any change needs a new "
                       "approval.  Even approved, it sets only keys that shape text (the schema's x-project keys); "
                       "paths outside the project, hosts, deadlines, timeouts, TTLs, size bounds and install "
                       "settings stay those of your own profile.")
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="a .engine/profile.yaml or the folder holding .engine/ (default: found from the working folder)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list approved profiles and whether each still holds")
    what.add_argument("--revoke", action="store_true", help="forget the approval of PATH (or of the profile found here)")


def run(args):
    from engine.base.controls import one_line as shown  # a project names its files: one line each
    from engine.core import trust_store

    out = sys.stdout
    if args.list:
        rows = trust_store.approvals()
        if not rows:
            print("no project profile is approved", file=out)
        for path, when, files, why in rows:
            state = "approved" if why is None else f"NOT VALID: {why}"
            print(f"{shown(path)}  ({state}; {when}; {len(files)} file(s))", file=out)
            for f in files:
                print(f"    {shown(f)}", file=out)
        return 0
    if args.revoke:
        path, was = trust_store.revoke(args.path)
        print(f"{shown(path)}: approval revoked" if was else f"{shown(path)}: was not approved; nothing changed",
              file=out)
        return 0
    path, files = trust_store.approve(args.path)
    print(f"{shown(path)}: approved ({len(files)} file(s); any change needs a new approval)", file=out)
    for f in files:
        print(f"    {shown(f)}", file=out)
    ignored = _ignored(path)
    if ignored:
        print(f"machine-level keys it sets are ignored (yours are used): {', '.join(ignored)}", file=out)
    return 0


def _ignored(path):
    """The machine-level keys the approved profile sets, as the hook will see them."""
    import os

    from engine.base.errors import UserError
    from engine.core.profile import project_root, resolve

    try:
        resolved, _ = resolve(None, None, cwd=project_root(path))
    except UserError:
        return []
    if os.path.realpath(resolved.file) != path:
        return []
    return resolved.ignored
