"""`engine completion bash|zsh`: shell completion scripts, generated from the
argument parser so they always list the commands and options that exist.

The rule it keeps: a word is completed with what the parser accepts there.
After a command come its subcommands and options; after an option that
takes a value come that value's words (its `choices`, the built-in level
names after --level/--levels, profile names after --profile, the built-in
agents after --agent), never file
names; file names only where a file is meant.  Profile names are the
built-in ones, known when the script is generated, plus the profile files
of the user's config folder and ~/.engine, looked up when the user presses
Tab (a profile written later is offered too)."""

# What an option or argument without `choices` completes with, by its dest;
# a parser argument may say otherwise with a `complete` attribute (a kind of
# document, see engine.core.documents.FOLDERS, or "files").
_BY_DEST = {"level": "level", "levels": "level", "profile": "profile", "agent": "agent"}


def _spec(action):
    """("words", [...]) for an argument with fixed values, ("profile", [names]),
    or None (file names, the shell's default)."""
    from engine.core.documents import FOLDERS, builtin_names

    if action.choices:
        return ("words", sorted(str(c) for c in action.choices))
    if action.type in (int, float):
        return ("words", [])  # a number: nothing to offer, and no file name either
    kind = getattr(action, "complete", None) or _BY_DEST.get(action.dest)
    if kind == "profile":
        return ("profile", builtin_names("profile"))
    if kind in FOLDERS:
        return ("words", builtin_names(kind))
    return None


def _tree():
    """{key: entry} for every command ("stats") and subcommand ("cache/pin"):
    entry = {"subs": [names], "opts": [--options], "values": {option: spec},
    "many": [options taking several values], "positional": spec or None}."""
    import argparse

    from .parser import build_parser

    def walk(parser, key, out):
        entry = {"subs": [], "opts": [], "values": {}, "many": [], "positional": None}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                entry["subs"] = sorted(action.choices)
                for name, p in action.choices.items():
                    walk(p, f"{key}/{name}" if key else name, out)
                continue
            longs = [o for o in action.option_strings if o.startswith("--")]
            if not action.option_strings:
                if entry["positional"] is None:
                    entry["positional"] = _spec(action)
                continue
            entry["opts"].extend(longs)
            if action.nargs == 0 or not longs:
                continue  # a flag: nothing to complete after it
            spec = _spec(action)
            for o in longs:
                entry["values"][o] = spec
                if action.nargs in ("+", "*"):
                    entry["many"].append(o)
        entry["opts"].sort()
        out[key] = entry
        return out

    return walk(build_parser(), "", {})


def script(shell):
    tree = _tree()
    return _bash(tree) if shell == "bash" else _zsh(tree)


def _words(spec):
    return " ".join(spec[1]) if spec else ""


def _value_cases(tree, indent):
    """Shell `case` arms: "KEY OPTION") kind=...; words=... ;;"""
    arms = []
    for key, entry in sorted(tree.items()):
        if not key:
            continue
        for opt, spec in sorted(entry["values"].items()):
            kind = spec[0] if spec else "files"
            arms.append(f'{indent}"{key} {opt}") kind={kind}; words="{_words(spec)}" ;;')
    return "\n".join(arms)


def _many_cases(tree, indent):
    arms = [f'{indent}"{key} {opt}") many=1 ;;' for key, e in sorted(tree.items()) if key for opt in e["many"]]
    return "\n".join(arms) or f'{indent}"") ;;'


def _key_cases(tree, indent):
    """Per command key: its words (subcommands and options) and what its
    positional argument completes with."""
    arms = []
    for key, entry in sorted(tree.items()):
        if not key:
            continue
        spec = entry["positional"]
        kind = spec[0] if spec else "files"
        words = " ".join(entry["subs"] + entry["opts"])
        arms.append(f'{indent}"{key}") opts="{words}"; pkind={kind}; pwords="{_words(spec)}" ;;')
    return "\n".join(arms)


def _nested(tree):
    return "|".join(sorted(k for k, e in tree.items() if k and "/" not in k and e["subs"])) or "none"


PROFILE_DIRS = '"${XDG_CONFIG_HOME:-$HOME/.config}/rules-engine" "$HOME/.engine"'


def _bash(tree):
    """The bash script: the command's key, then an option's values, then the
    options and positional arguments of the command."""
    return _bash_command(tree) + _bash_option(tree) + _BASH_ARGUMENTS


def _bash_command(tree):
    """From the top of the bash script to the command's key (its options and
    positional argument chosen by `case $key`)."""
    top = " ".join(tree[""]["subs"])
    return f"""# bash completion for engine: eval "$(engine completion bash)"
_engine_profiles() {{
    # the user's own profile files: the config folder's and ~/.engine's (kind: profile)
    local dir f
    for dir in {PROFILE_DIRS}; do
        for f in "$dir"/*.yaml "$dir"/*.yml; do
            [ -f "$f" ] && grep -qsE '^kind:[[:space:]]*["'"'"']?profile' "$f" && printf '%s\\n' "$f"
        done
    done
}}
_engine_complete() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" cmd="${{COMP_WORDS[1]}}" key i=2 kind="" words="" many=""
    local opts="" pkind=files pwords="" prev="" opt=""
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{top} --help --version" -- "$cur"))
        return
    fi
    key="$cmd"
    if [[ "$cmd" =~ ^({_nested(tree)})$ ]]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            case "$key" in
{_key_cases(tree, " " * 16)}
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return
        fi
        key="$cmd/${{COMP_WORDS[2]}}"
        i=3
    fi
    case "$key" in
{_key_cases(tree, " " * 8)}
    esac
"""


def _bash_option(tree):
    """The bash script's completion of an option's value(s)."""
    return f"""    # the option whose value(s) this word is: the one just before it, or for
    # an option taking several values (--levels a b), the last one before them
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    if [[ "$prev" == --* && "$cur" != -* ]]; then
        opt="$prev"
    elif [[ "$cur" != -* ]]; then
        local j=$((COMP_CWORD-1))
        while [ "$j" -ge "$i" ] && [[ "${{COMP_WORDS[j]}}" != -* ]]; do j=$((j-1)); done
        if [ "$j" -ge "$i" ]; then
            case "$key ${{COMP_WORDS[j]}}" in
{_many_cases(tree, " " * 16)}
            esac
            [ -n "$many" ] && opt="${{COMP_WORDS[j]}}"
        fi
    fi
    if [ -n "$opt" ]; then
        kind=none
        case "$key $opt" in
{_value_cases(tree, " " * 12)}
        esac
        case "$kind" in
            words) COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
            profile) COMPREPLY=($(compgen -W "$words $(_engine_profiles)" -- "$cur")) ;;
            files) COMPREPLY=($(compgen -f -- "$cur")) ;;
        esac
        if [ -z "$many" ] || [ "$opt" == "$prev" ] || [ "$kind" == files ]; then
            return
        fi
        # after the first value of --levels a b: more values, or the command's own arguments
        local more=("${{COMPREPLY[@]}}")
        COMPREPLY=("${{more[@]}}" $(compgen -f -- "$cur"))
        return
    fi
"""


_BASH_ARGUMENTS = """    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
        return
    fi
    case "$pkind" in
        words) COMPREPLY=($(compgen -W "$pwords" -- "$cur")) ;;
        profile) COMPREPLY=($(compgen -W "$pwords $(_engine_profiles)" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
}
complete -o filenames -F _engine_complete engine
"""


def _zsh(tree):
    """The zsh script: as _bash, in zsh's words."""
    return _zsh_command(tree) + _zsh_option(tree) + _ZSH_ARGUMENTS


def _zsh_command(tree):
    top = " ".join(tree[""]["subs"])
    return f"""#compdef engine
# zsh completion for engine: eval "$(engine completion zsh)"
_engine_profiles() {{
    local dir f
    for dir in {PROFILE_DIRS}; do
        for f in "$dir"/*.y(a|)ml(N); do
            grep -qsE '^kind:[[:space:]]*["'"'"']?profile' "$f" && print -r -- "$f"
        done
    done
}}
_engine() {{
    # $words and $CURRENT are zsh's own: the command line and the word being completed
    local cmd=$words[2] key i=3 kind="" vals="" many="" opts="" pkind=files pwords="" prev="" opt="" cur=$words[CURRENT]
    if (( CURRENT == 2 )); then
        compadd -- {top} --help --version
        return
    fi
    key=$cmd
    if [[ $cmd == ({_nested(tree)}) ]]; then
        if (( CURRENT == 3 )); then
            case $key in
{_key_cases(tree, " " * 16)}
            esac
            compadd -- ${{=opts}}
            return
        fi
        key="$cmd/$words[3]"
        i=4
    fi
    case $key in
{_key_cases(tree, " " * 8)}
    esac
"""


def _zsh_option(tree):
    return f"""    prev=$words[CURRENT-1]
    if [[ $prev == --* && $cur != -* ]]; then
        opt=$prev
    elif [[ $cur != -* ]]; then
        local j=$((CURRENT-1))
        while (( j >= i )) && [[ $words[j] != -* ]]; do j=$((j-1)); done
        if (( j >= i )); then
            case "$key $words[j]" in
{_many_cases(tree, " " * 16)}
            esac
            [[ -n $many ]] && opt=$words[j]
        fi
    fi
    if [[ -n $opt ]]; then
        kind=none
        case "$key $opt" in
{_value_cases(tree, " " * 12).replace('words="', 'vals="')}
        esac
        case $kind in
            words) compadd -- ${{=vals}} ;;
            profile) compadd -- ${{=vals}} $(_engine_profiles) ;;
            files) _files ;;
        esac
        [[ -z $many || $opt == $prev || $kind == files ]] && return
        _files
        return
    fi
"""


_ZSH_ARGUMENTS = """    if [[ $cur == -* ]]; then
        compadd -- ${=opts} --help
        return
    fi
    case $pkind in
        words) compadd -- ${=pwords} ;;
        profile) compadd -- ${=pwords} $(_engine_profiles) ;;
        *) _files ;;
    esac
}
compdef _engine engine 2>/dev/null || true
"""
