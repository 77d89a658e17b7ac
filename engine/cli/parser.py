"""The `engine` command's arguments: every subcommand and option, and the
help they print.  Completion scripts are generated from this parser."""

LEVELS_HELP = "compression level: off, light, standard, aggressive, vowels (opt-in), or a path to a level file"


PROFILE_HELP = ("profile to use: a built-in name (default, lossy) or a path (default: $ENGINE_PROFILE, else the "
                "nearest .engine/profile.yaml from the working folder up to the repository root once approved with "
                "`engine trust`, else ~/.engine/profile.yaml, else your config folder's profile.yaml "
                "($XDG_CONFIG_HOME/rules-engine/profile.yaml, by default ~/.config/rules-engine/profile.yaml), "
                "else the built-in 'default')")
# `engine install --user` and the hook read only the user's own profiles, never a project's.
USER_PROFILE_HELP = ("profile written into the hook command: a built-in name or a path (default: none, so each event "
                     "chooses as --profile says: $ENGINE_PROFILE, an approved project profile, ~/.engine/profile.yaml, "
                     "$XDG_CONFIG_HOME/rules-engine/profile.yaml (by default ~/.config/rules-engine/profile.yaml), "
                     "else 'default')")
AGENT_HELP = "the coding agent, one of the built-in agents (pipelines/agents/NAME.yaml; default: claude-code)"
DETECT_HELP = "every agent found on this machine (its command on the PATH, or its home folder)"
COLOR_HELP = "colour: auto (only on a terminal, and not when $NO_COLOR is set), always or never"
JSON_COUNT_HELP = ("tokens are counted with tiktoken; the first count of a text loads the encoding (about 0.3 s), "
                   "a repeated count is read from the cache")


# Commands of their own subsystems: name -> module with add_parser(sub) and
# run(args).  A new subsystem adds one line here and keeps its options and
# its code in its own package.
COMMAND_MODULES = {
    "session": "engine.cli.session",
    "messages": "engine.cli.messages",
    "cache": "engine.cli.cache",
    "purge": "engine.cli.purge",
    "memory": "engine.cli.memory",
    "trust": "engine.cli.trust",
    "replay": "engine.cli.replay",
    "doctor": "engine.cli.doctor",
}


def _add_profile_args(p, level=True):
    p.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    if level:
        p.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP + " (default: the profile's)")


def _compress(sub):
    p = sub.add_parser("compress", help="compress rule files and print (or write) the result",
                       epilog="--json: " + JSON_COUNT_HELP + ".")
    p.add_argument("files", nargs="+", metavar="FILE", help="rule files or globs ('rules/*.md'), or - for standard input")
    _add_profile_args(p)
    p.add_argument("--json", action="store_true", help="print the text and its figures (characters, tokens) as JSON "
                   "(one object; a list of them for several files)")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="tokenizer for --json figures (default: the profile's)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="FILE|DIR", help="write the result here instead of stdout "
                     "(a folder when several files are given: each keeps its name)")
    out.add_argument("-i", "--in-place", action="store_true", help="replace each file by its compressed text")


def _validate(sub):
    p = sub.add_parser("validate", help="check YAML documents: schema, patterns, self-tests")
    p.add_argument("files", nargs="*", help="YAML files (default: every built-in document, the active profile and your own content "
                   "cache settings)")
    _add_profile_args(p, level=False)
    p.add_argument("--json", action="store_true", help='print {"ok": bool, "problems": [{"file", "line", "col", "message"}]}')


def _diff(sub):
    p = sub.add_parser("diff", help="show what a level changes in a file")
    p.add_argument("file", help="rule file, or - for standard input")
    _add_profile_args(p)
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=COLOR_HELP)
    p.add_argument("--exit-code", action="store_true", help="exit 1 when the level would change the file, 0 when not")
    p.add_argument("--json", action="store_true", help="print the diff and the figures as one JSON object")


def _explain(sub):
    p = sub.add_parser("explain", help="list protected spans and every change, with the transform that made it")
    p.add_argument("file", help="rule file, or - for standard input")
    _add_profile_args(p)
    p.add_argument("--json", action="store_true", help="print the spans, changes and decisions as one JSON object")


def _stats(sub):
    p = sub.add_parser("stats", help="characters and tokens before and after, per file and level")
    p.add_argument("paths", nargs="+", help="files or folders (folders: every rule file inside, recursively: "
                   "compress.folder_suffixes and folder_names of pipelines/settings/engine.yaml)")
    _add_profile_args(p, level=False)
    p.add_argument("--levels", nargs="+", metavar="LEVEL", default=["off,light,standard,aggressive"],
                   help="levels to compare, as separate words (--levels light aggressive) or a comma list "
                   "(--levels light,aggressive); default: all four")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="default: the profile's")
    p.add_argument("--json", action="store_true", help="print the table as JSON")


def _golden(sub):
    p = sub.add_parser("golden", help="compare golden cases with what the engine produces now")
    p.add_argument("dir", nargs="?", default=None, help="folder of cases (default: tests/golden)")
    p.add_argument("--update", action="store_true", help="rewrite the expected files; review them with git diff")


def _hook(sub):
    p = sub.add_parser("hook", help="run as an agent hook: event JSON on stdin, one JSON object on stdout",
                       description="Run as an agent hook (engine install writes the command). Reads one event as "
                       "JSON on stdin and prints one JSON object for the agent, or nothing. Never fails: problems "
                       "go to the hook log (hook.log in the state folder) and the exit status is 0.")
    p.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    p.add_argument("--agent", metavar="NAME", help="the agent that runs the hook, one of the built-in agents "
                   "(pipelines/agents/NAME.yaml; default claude-code)")
    p.add_argument("--event", metavar="NAME", help="the event, as the agent names it, where its payload names none")


def _where(p):
    where = p.add_mutually_exclusive_group()
    where.add_argument("--project", action="store_true", help="the agent's hook settings in the working folder "
                       "(the default; the file: install.project of the agent's YAML, listed by the command)")
    where.add_argument("--user", action="store_true", help="your own hook settings for the agent, in its home folder "
                       "(the file: install.user of the agent's YAML, listed by the command)")


def _which(p, detect_help=DETECT_HELP):
    which = p.add_mutually_exclusive_group()
    which.add_argument("--agent", metavar="NAME", help=AGENT_HELP)
    which.add_argument("--detect", action="store_true", help=detect_help)


def _install(sub):
    p = sub.add_parser("install", help="add the hook entries to an agent's settings")
    _which(p, DETECT_HELP + "; one whose engine plugin (or extension) is on is left as it is")
    _where(p)
    p.add_argument("--profile", metavar="NAME|PATH", help=USER_PROFILE_HELP)


def _uninstall(sub):
    p = sub.add_parser("uninstall", help="remove exactly the entries `engine install` added")
    _which(p)
    _where(p)


def _refresh(sub):
    from .argparser import folder

    p = sub.add_parser("refresh", help="rule re-injection")
    rsub = p.add_subparsers(dest="refresh_command", metavar="SUBCOMMAND")
    rsub.required = True
    s = rsub.add_parser("preview", help="show what the refresh handlers would inject")
    s.add_argument("--turn", type=int, help="the prompt number to preview (default: every refresh handler, as if due)")
    s.add_argument("--cwd", type=folder, help="project folder (default: the working directory)")
    s.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    s.add_argument("--text", action="store_true", help="print the injected text too")
    s.add_argument("--touched", nargs="+", metavar="PATH", help="files the session touched (path-scoped rules)")
    s.add_argument("--transcript", metavar="FILE", help="read the touched files from this transcript's tool calls")
    s.add_argument("--agent", metavar="NAME", help="preview for this agent: its own rule files and what it loads "
                   "itself (" + AGENT_HELP + ")")


def _profile(sub):
    p = sub.add_parser("profile", help="profiles")
    psub = p.add_subparsers(dest="profile_command", metavar="SUBCOMMAND")
    psub.required = True
    s = psub.add_parser("show", help="print the resolved profile (after extends, add and remove), "
                        "and which file was chosen and why")
    s.add_argument("name", nargs="?", help="profile name or path (default: the active profile)").complete = "profile"
    s.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP)
    s.add_argument("--with-defaults", action="store_true",
                   help="show the hooks settings as a hook reads them: every default the schema gives "
                   "filled in, in the settings and in each handler")


def _completion(sub):
    p = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                       description="bash: eval \"$(engine completion bash)\" in ~/.bashrc; "
                       "zsh: eval \"$(engine completion zsh)\" in ~/.zshrc")
    p.add_argument("shell", choices=("bash", "zsh"))


# Built-in commands: name -> the function that adds its subparser.
BUILDERS = {
    "compress": _compress,
    "validate": _validate,
    "diff": _diff,
    "explain": _explain,
    "stats": _stats,
    "golden": _golden,
    "hook": _hook,
    "install": _install,
    "uninstall": _uninstall,
    "refresh": _refresh,
    "profile": _profile,
    "completion": _completion,
}


def command_of(argv):
    """The subcommand `argv` names first (the top level has no option that
    takes a value), or None (help, --version, a mistake)."""
    if argv and (argv[0] in BUILDERS or argv[0] in COMMAND_MODULES):
        return argv[0]
    return None


def build_parser(only=None):
    """The whole parser, or with `only` the top level and that subcommand
    alone: every subparser argparse builds costs a CLI call a fraction of a
    millisecond (its help strings go through gettext), so a command builds
    its own, and help, completion and mistakes build them all."""
    from engine.base.version import __version__

    from .argparser import Parser  # not at module level: `engine hook` never needs argparse

    parser = Parser(prog="engine", description="Compress and check the rule files of LLM coding agents.")
    parser.add_argument("--version", action="version", version=f"engine {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    from importlib import import_module

    for name, build in BUILDERS.items():
        if only is None or only == name:
            build(sub)
    for name, module in COMMAND_MODULES.items():
        if only is None or only == name:
            import_module(module).add_parser(sub)
    return parser
