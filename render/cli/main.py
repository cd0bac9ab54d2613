"""``llm-formulas``: the command line (contract in DESIGN.md).

Every subcommand accepts ``--json``. Exit codes: 0 success (a layout that does
not fit is a result), 1 a failed proof or an unexplained ``validate`` row, 2 bad
input (one line on stderr), 3 an internal error, 130 interrupted. No traceback
reaches a user: a closed pipe ends quietly, a full or closed stdout is one
error line, Ctrl-C is one line.

Start-up is lazy: the table below names each command's module and help, so
``--help`` and argument errors import nothing but argparse; only the chosen
command's module is imported, and each module loads SymPy, NumPy or the
planner inside its handler, when it needs them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from typing import Callable

from llm_formulas.render.cli.numbers import QUOTE_LENGTH, InputError, error_line, printable, quote

# command → (module with register(add_command), one-line help shown by --help)
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("llm_formulas.render.cli.catalogue_commands", "list every formula with its unit and inputs"),
    "show": ("llm_formulas.render.cli.catalogue_commands", "show a formula, its inputs, sources and derivation steps"),
    "eval": ("llm_formulas.render.cli.catalogue_commands", "evaluate a formula exactly: llm-formulas eval params.total l=12 h=768 V=50257 s=1024"),
    "check": ("llm_formulas.render.cli.catalogue_commands", "prove every derivation step, unit and cross-check; exit 1 if any fails"),
    "families": ("llm_formulas.render.cli.families_command", "every model type a config.json may name, the transformers version its counts were checked against, and the commands that price it"),
    "params": ("llm_formulas.render.cli.model_commands", "exact parameter count of a config.json or named model, total, active and by component"),
    "flops": ("llm_formulas.render.cli.model_commands", "forward, backward and training FLOPs of one step of b sequences of s tokens (eager attention, every GEMM)"),
    "kv-cache": ("llm_formulas.render.cli.kv_cache_command", "bytes a decoding KV cache holds for b sequences of s tokens, per layer kind (default: what transformers' cache holds)"),
    "estimate": ("llm_formulas.render.cli.estimate_command", "the training and inference report for a model, a GPU and a parallel layout"),
    "plan": ("llm_formulas.render.cli.plan_command", "search parallel layouts of a model on n GPUs, fastest first"),
    "compare": ("llm_formulas.render.cli.compare_command", "the other calculators' figures (Megatron-LM, DeepSpeed, llm-analysis, Transformer Math) beside ours and the measured form, each difference a proved claim"),
    "validate": ("llm_formulas.render.cli.validate_command", "reproduce the published figures of 12 papers at their printed precision; exit 1 on an unexplained difference"),
    "serve": ("llm_formulas.render.cli.serve_command", "serving a model on a GPU layout: memory and the KV wall, TTFT, TPOT, tokens/s, cost; --slo searches the fewest GPUs"),
    "sweep": ("llm_formulas.render.cli.sweep_command", "rank the layouts of many models × GPUs × cluster sizes, in process or on Dask"),
    "build": ("llm_formulas.render.cli.build_command", "render the reference (md, html, tex, pdf), numeric code, calculator, plots and notebooks"),
}

OK, FAILED, BAD_INPUT, INTERNAL_ERROR, INTERRUPTED = 0, 1, 2, 3, 130


_TYPED = re.compile(r"'((?:[^'\\]|\\.)*)'|\S{%d,}" % (QUOTE_LENGTH + 1))  # a repr'd value ('x', 'don\'t'), a long word


def _typed_at_most(message: str) -> str:
    """argparse's words with each value it quotes back (an invalid choice, an ambiguous option) cut to QUOTE_LENGTH
    characters, as our own messages quote input."""
    def cut(found: re.Match) -> str:
        inner = found[1]
        if inner is None:
            return printable(found[0])
        return quote(inner) if len(inner) > QUOTE_LENGTH else found[0]

    return _TYPED.sub(cut, message)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage over several lines
        raise InputError(_typed_at_most(message))

    def parse_args(self, args=None, namespace=None):  # argparse's own joins every unrecognized argument, raw
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            shown = ", ".join(quote(word) for word in extras[:3]) + (f" and {len(extras) - 3} more" if len(extras) > 3 else "")
            raise InputError(f"unrecognized arguments: {shown}")
        return namespace


def _chosen_command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser, with arguments only for the command ``argv`` names (the others get their help line)."""
    parser = _Parser(
        prog="llm-formulas",
        description="Checked SymPy derivations of parameters, FLOPs, memory, communication and cluster sizing of large models.",
        epilog="exit codes: 0 success (a layout that does not fit is a result), 1 a failed proof, 2 bad input, "
        "3 an internal error, 130 interrupted. Numbers: digits, one optional a/b, an exponent (1e9), "
        "and for counts a k/M/B/T suffix (7B = 7·10⁹).",
    )
    parser.add_argument("--version", action="version", version=f"llm-formulas {_version()}",
                        help="print the package version and exit")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")
    chosen = _chosen_command(argv)

    def add_command(name: str, help_text: str, handler: Callable) -> argparse.ArgumentParser:
        sub = registered[name]
        sub.set_defaults(handler=handler)
        return sub

    registered: dict[str, argparse.ArgumentParser] = {}
    for name, (_, help_text) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--json", action="store_true", help="print one JSON document on stdout (non-ASCII escaped)")
        registered[name] = sub
    if chosen in COMMANDS:
        module = importlib.import_module(COMMANDS[chosen][0])
        module.register(lambda name, help_text, handler: add_command(name, help_text, handler) if name == chosen else _Parser())
    return parser


def _version() -> str:
    """The package's one version constant (llm_formulas.__version__, equal to pyproject.toml's)."""
    from llm_formulas import __version__

    return __version__


def _emit(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _ascii_safe_output() -> None:
    """An encoding that cannot hold Ψ or ≈ (PYTHONIOENCODING=ascii) gets escapes instead of a crash,
    for our output and argparse's help alike."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _json(doc: object) -> str:
    """One JSON document, ASCII only; NaN and infinities are refused, never printed."""
    try:
        return json.dumps(doc, ensure_ascii=True, allow_nan=False)
    except ValueError:
        raise InputError("a result is not a finite number (NaN or infinity): check the inputs' magnitudes") from None


def _fail(message: str, code: int) -> int:
    try:
        print(error_line(f"llm-formulas: {message}"), file=sys.stderr)
    except (OSError, ValueError):  # stderr closed too: the exit code still tells
        pass
    return code


def _quiet_broken_pipe() -> int:
    """The reader went away (``| head``): end quietly, and keep Python from complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return OK


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if sys.stdout is None:  # started with stdout closed (>&-): nowhere to print a result
        return _fail("error: standard output is closed", BAD_INPUT)
    _ascii_safe_output()
    try:
        try:
            args = build_parser(argv).parse_args(argv)
        except SystemExit as done:  # --help and --version print, then end: an exit code, not an exception
            return done.code if isinstance(done.code, int) else OK
        result = args.handler(args)
        if args.json:
            _emit(_json(result.doc))
        else:
            _emit(result.text)
        return result.code
    except InputError as error:
        return _fail(f"error: {error}", BAD_INPUT)
    except KeyboardInterrupt:
        return _fail("interrupted", INTERRUPTED)
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except OSError as error:  # stdout on a full disk, or closed: the result did not reach anyone
        _quiet_broken_pipe()
        return _fail(f"error: cannot write the output: {error.strerror or error}", BAD_INPUT)
    except ValueError as error:
        if "closed file" in str(error):
            return _fail("error: standard output is closed", BAD_INPUT)
        return _fail(f"internal error (please report): ValueError: {str(error)[:200]}", INTERNAL_ERROR)
    except Exception as error:  # a bug must still not print a traceback at a user
        return _fail(f"internal error (please report): {type(error).__name__}: {str(error)[:200]}", INTERNAL_ERROR)


def entry_point() -> None:
    """The console script: run main, flush what is left (quietly if the reader is gone), exit with its code.

    Interrupted, it ends with os._exit(130): one CI run saw the process print its one line and still die by SIGINT
    (exit −2) during CPython's finalization; leaving at once keeps the documented exit code."""
    code = main()
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        code = _quiet_broken_pipe()
    except (OSError, ValueError):
        pass
    if code == INTERRUPTED:  # leave at once: finalization could still report the interrupt as a death by SIGINT
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry_point()
