"""``luoshod completion bash|zsh``: a completion script for the commands, subcommands,
options and option choices, read from the argument parsers themselves (so it never lists
an option that does not exist). zsh loads the bash script through ``bashcompinit``.

The command line (``main.py``) hands it its commands and the function that builds their
parser: this module imports nothing of it."""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable, Iterable, Sequence

#: Builds the command line's parser for the given arguments (``main._parser``).
ParserOf = Callable[[Sequence[str]], argparse.ArgumentParser]


def _options(p: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    words: list[str] = []
    choices: dict[str, list[str]] = {}
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue  # a hidden option (an old name kept for a release) is not offered
        words += [o for o in action.option_strings if o.startswith("--")]
        if action.option_strings and action.choices:
            for o in action.option_strings:
                choices[o] = [str(c) for c in action.choices]
    return words, choices


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def table(commands: Iterable[str], parser: ParserOf) -> dict[str, list[str]]:
    """``"cmd"``, ``"cmd sub"`` → the words that may follow; ``"cmd sub --opt"`` → its
    choices. The empty key: the commands. ``parser([name])``: the parser with the command
    ``name``."""
    commands = list(commands)
    out: dict[str, list[str]] = {"": [*commands, "--help", "--version"]}
    for name in commands:
        top = _subparsers(parser([name]))[name]
        subs = _subparsers(top)
        targets = {f"{name} {s}": p for s, p in subs.items()} if subs else {name: top}
        if subs:
            out[name] = [*subs, "--help"]
        for key, p in targets.items():
            words, choices = _options(p)
            positional = [
                str(c) for a in p._actions if not a.option_strings and a.choices for c in a.choices
            ]
            out[key] = positional + words
            for option, values in choices.items():
                out[f"{key} {option}"] = values
    return out


BASH = """# luoshod completion (bash; zsh through bashcompinit)
_luoshod() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} key=luoshod i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in -*) ;; *)
            if [[ -n ${_luoshod_words["$key ${COMP_WORDS[i]}"]+set} ]]; then
                key="$key ${COMP_WORDS[i]}"
            fi ;;
        esac
    done
    if [[ -n ${_luoshod_words["$key $prev"]+set} ]]; then
        COMPREPLY=($(compgen -W "${_luoshod_words["$key $prev"]}" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "${_luoshod_words["$key"]}" -- "$cur"))
    fi
}
complete -F _luoshod luoshod
"""


def script(shell: str, commands: Iterable[str], parser: ParserOf) -> str:
    lines = ["declare -gA _luoshod_words=("]
    for key, words in table(commands, parser).items():
        quoted = shlex.quote(" ".join(["luoshod", key]).strip())
        lines.append(f"    [{quoted}]={shlex.quote(' '.join(words))}")
    lines.append(")")
    body = "\n".join(lines) + "\n" + BASH
    if shell == "zsh":
        return "#compdef luoshod\nautoload -U +X bashcompinit && bashcompinit\n" + body
    return body


__all__ = ["script", "table"]
