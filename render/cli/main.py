"""``llm-formulas``: the command line (contract in DESIGN.md).

Every subcommand accepts ``--json``; errors are one line on stderr with exit
code 2 for bad input and 1 for a failed check; no traceback reaches a user.
"""

from __future__ import annotations

import argparse
import json
import sys

import importlib

from formulas.catalogue import UnknownFormula
from render.cli.inputs import InputError

# Each module adds its subcommands with register(add_command); a handler
# takes the parsed arguments and returns a render.cli.catalogue_commands.Result.
COMMAND_MODULES: tuple[str, ...] = (
    "render.cli.catalogue_commands",
    "render.cli.model_commands",
    "render.cli.estimate_command",
    "render.cli.plan_command",
    "render.cli.validate_command",
    "render.documents.build",
)


INTERNAL_ERROR = 3  # neither bad input (2) nor a failed check (1): a bug


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage over several lines
        raise InputError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="llm-formulas",
        description="Checked SymPy derivations of parameters, FLOPs, memory, communication and cluster sizing of large models.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    def add_command(name: str, help_text: str, handler) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sub.set_defaults(handler=handler)
        return sub

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(add_command)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        result = args.handler(args)
    except (InputError, UnknownFormula) as error:
        print(f"llm-formulas: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a bug must still not print a traceback at a user
        print(f"llm-formulas: internal error (please report): {type(error).__name__}: {error}", file=sys.stderr)
        return INTERNAL_ERROR
    if args.json:
        print(json.dumps(result.doc, ensure_ascii=False))
    else:
        print(result.text)
    return result.code


if __name__ == "__main__":
    sys.exit(main())
