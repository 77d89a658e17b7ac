"""`engine completion bash|zsh`: shell completion scripts, generated from the
argument parser so they always list the commands and options that exist."""


def _commands():
    """{command: [options]} and {command: {subcommand: [options]}}, from the parser."""
    import argparse

    from .parser import build_parser

    def sub_of(parser):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action.choices
        return {}

    def options(parser):
        return sorted(o for a in parser._actions for o in a.option_strings if o.startswith("--"))

    flat, nested = {}, {}
    for name, p in sub_of(build_parser()).items():
        inner = sub_of(p)
        if inner:
            nested[name] = {n: options(q) for n, q in inner.items()}
        flat[name] = options(p)
    return flat, nested


def script(shell):
    flat, nested = _commands()
    return _bash(flat, nested) if shell == "bash" else _zsh(flat, nested)


def _bash(flat, nested):
    cases = []
    for cmd, opts in sorted(flat.items()):
        words = " ".join(sorted(nested.get(cmd, {})) + opts)
        cases.append(f"        {cmd}) words=\"{words}\" ;;")
    subcases = []
    for cmd, subs in sorted(nested.items()):
        for sub, opts in sorted(subs.items()):
            subcases.append(f"        {cmd}/{sub}) words=\"{' '.join(opts)}\" ;;")
    return f"""# bash completion for engine: eval "$(engine completion bash)"
_engine_complete() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" cmd="${{COMP_WORDS[1]}}" sub="${{COMP_WORDS[2]}}" words=""
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{' '.join(sorted(flat))} --help --version" -- "$cur"))
        return
    fi
    case "$cmd/$sub" in
{chr(10).join(subcases)}
        *) case "$cmd" in
{chr(10).join(cases)}
        esac ;;
    esac
    if [[ "$cur" == -* || -n "$words" && "$COMP_CWORD" -eq 2 && "$cmd" =~ ^({'|'.join(sorted(nested)) or 'none'})$ ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _engine_complete engine
"""


def _zsh(flat, nested):
    lines = []
    for cmd, opts in sorted(flat.items()):
        words = " ".join(sorted(nested.get(cmd, {})) + opts)
        lines.append(f"        {cmd}) opts=({words}) ;;")
    return f"""#compdef engine
# zsh completion for engine: eval "$(engine completion zsh)"
_engine() {{
    local -a opts  # $words is zsh's own: the command line
    if (( CURRENT == 2 )); then
        compadd -- {' '.join(sorted(flat))} --help --version
        return
    fi
    case $words[2] in
{chr(10).join(lines)}
    esac
    compadd -- $opts
    _files
}}
compdef _engine engine 2>/dev/null || true
"""
