"""``llm-formulas``: the command line (contract in DESIGN.md).

Every subcommand accepts ``--json``; errors are one line on stderr with exit
code 2 for bad input and 1 for a failed check; no traceback reaches a user.
"""

from __future__ import annotations

import argparse
import json
import sys

from formulas.catalogue import UnknownFormula
from render import catalogue_commands
from render.inputs import InputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage over several lines
        raise InputError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="llm-formulas",
        description="Checked SymPy derivations of parameters, FLOPs, memory, communication and cluster sizing of large models.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        return sub

    command("list", "list every formula with its unit and inputs")
    show = command("show", "show a formula, its inputs, sources and derivation steps")
    show.add_argument("id", help="formula id, e.g. params.total")
    show.add_argument("--latex", action="store_true", help="print the formula as LaTeX")
    evaluate = command("eval", "evaluate a formula exactly: llm-formulas eval params.total l=12 h=768 V=50257 s=1024")
    evaluate.add_argument("id", help="formula id")
    evaluate.add_argument("assignments", nargs="*", metavar="name=value", help="a value for each input symbol")
    check = command("check", "prove every derivation step, unit and cross-check; exit 1 if any fails")
    check.add_argument("--verbose", action="store_true", help="list every check, not only failures")
    return parser


def run(args: argparse.Namespace) -> catalogue_commands.Result:
    if args.command == "list":
        return catalogue_commands.list_formulas()
    if args.command == "show":
        return catalogue_commands.show(args.id, args.latex)
    if args.command == "eval":
        return catalogue_commands.evaluate(args.id, args.assignments)
    return catalogue_commands.check(args.verbose)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        result = run(args)
    except (InputError, UnknownFormula) as error:
        print(f"llm-formulas: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug must still not print a traceback at a user
        print(f"llm-formulas: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.doc, ensure_ascii=False))
    else:
        print(result.text)
    return result.code


if __name__ == "__main__":
    sys.exit(main())
