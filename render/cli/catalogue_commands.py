"""The catalogue commands: ``list``, ``show``, ``eval`` and ``check``.

Each returns a Result: the JSON document of the contract (DESIGN.md) and the
human-readable text, so the two can never disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from llm_formulas.render.cli.numbers import InputError, quote
from llm_formulas.render.cli.result import Result, number_json

if TYPE_CHECKING:
    from llm_formulas.derivations.reports.catalogue import Report
    from llm_formulas.derivations.vocabulary.steps import Step
    from llm_formulas.derivations.vocabulary.read_record import Reads
    from llm_formulas.formulas.vocabulary.catalogue import Formula


def _known_formula(formula_id: str) -> None:
    """Refuse an unknown id as bad input (exit 2), naming the closest ids."""
    from llm_formulas.formulas.vocabulary.catalogue import UnknownFormula, get

    try:
        get(formula_id)
    except UnknownFormula:
        raise InputError(f"unknown formula id {quote(formula_id)} (see 'llm-formulas list')") from None


def list_formulas() -> Result:
    from llm_formulas.formulas.vocabulary.catalogue import all_formulas

    rows = []
    for f in all_formulas():
        rows.append(
            {
                "id": f.id,
                "unit": str(f.unit),
                "meaning": f.meaning,
                "symbols": [s.name for s in f.inputs],
                "sources": [str(src) for src in f.sources],
            }
        )
    width = max(len(r["id"]) for r in rows)
    text = "\n".join(f"{r['id']:<{width}}  [{r['unit']}]  {r['meaning']}" for r in rows)
    return Result(rows, text)


def show(formula_id: str, as_latex: bool, expanded: bool = False, family: str | None = None) -> Result:
    """A formula as composed of its named parts (``expanded``: every part spelled out), with its inputs, sources
    and derivation; with ``family``, its own form at that family's switches (render/cli/family_command.py)."""
    import sympy as sp

    if family is not None:
        from llm_formulas.render.cli.family_command import show_family

        if expanded:
            raise InputError("--family prints the family's own closed form; it does not take --expanded")
        return show_family(formula_id, family, as_latex)

    from llm_formulas.derivations.reports.catalogue import derivation_of
    from llm_formulas.derivations.vocabulary.proof import valued
    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.formulas.vocabulary.latex import formula_latex
    from llm_formulas.derivations.vocabulary.latex import step_latex

    _known_formula(formula_id)
    formula = get(formula_id)
    derivation = derivation_of(formula_id)
    steps = derivation.steps if derivation else []
    doc = {
        "id": formula.id,
        "latex": formula_latex(formula, expanded=expanded),
        "expression": sp.sstr(valued(formula.expr)),
        "parts": list(formula.parts),
        "unit": str(formula.unit),
        "meaning": formula.meaning,
        "inputs": [{"name": s.name, "meaning": quantity(s).meaning, "unit": str(quantity(s).unit)} for s in formula.inputs],
        "defaults": {s.name: int(v) for s, v in formula.defaults.items()},
        "conditions": [c.text for c in formula.conditions],
        "sources": [str(src) for src in formula.sources],
        "notes": formula.notes,
        "steps": [{"latex": step_latex(step, get), "claim": step.claim, "why": step.why} for step in steps],
    }
    return Result(doc, _show_text(formula, doc, as_latex, expanded))


def _show_text(formula: Formula, doc: dict, as_latex: bool, expanded: bool) -> str:
    import sympy as sp

    from llm_formulas.derivations.reports.catalogue import derivation_of
    from llm_formulas.derivations.vocabulary.proof import valued
    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.derivations.vocabulary.latex import step_latex

    from llm_formulas.formulas.vocabulary.latex import abbreviated

    body = doc["latex"] if as_latex else sp.pretty(abbreviated(valued(formula.expr if expanded else formula.composed)),
                                                   use_unicode=True)
    lines = [f"{formula.id} — {formula.meaning}", f"unit: {formula.unit}", "", body, ""]
    if formula.parts and not expanded:
        lines += ["parts (show ID each; --expanded spells them out): " + ", ".join(formula.parts), ""]
    needed = {s.name for s in formula.required}
    lines.append("inputs: " + ", ".join(f"{i['name']} ({i['meaning']})" for i in doc["inputs"] if i["name"] in needed))
    under_switch = [i["name"] for i in doc["inputs"] if i["name"] not in needed and i["name"] not in doc["defaults"]]
    if under_switch:
        lines.append("needed only when a switch leaves its classic value: " + ", ".join(under_switch))
    if doc["defaults"]:
        lines.append("switches, at their classic values unless given: "
                     + ", ".join(f"{name} = {value}" for name, value in doc["defaults"].items()))
    if doc["conditions"]:
        lines.append("valid when: " + "; ".join(doc["conditions"]))
    lines.append("sources: " + "; ".join(doc["sources"]))
    if formula.notes:
        lines.append("notes: " + formula.notes)
    derivation = derivation_of(formula.id)
    if derivation:
        lines.append("derivation:")
        for number, step in enumerate(derivation.steps, start=1):
            shown = step_latex(step, get) if as_latex else step_text(step)
            lines.append(f"  {number}. [{step.claim}] {shown}")
            lines.append(f"     {step.why}")
    return "\n".join(lines)


_PLAIN = {"defines": ":=", "equals": "=", "solves": "=", "approximates": "≈"}


def step_text(step: Step) -> str:
    """One derivation step in plain text (``show`` without ``--latex``)."""
    import sympy as sp

    from llm_formulas.derivations.vocabulary.proof import valued
    from llm_formulas.formulas.vocabulary.catalogue import get

    def plain(expr: sp.Basic) -> str:
        return sp.sstr(valued(expr))

    if step.claim == "refutes":
        claimed, correct = valued(step.expr), valued(step.correct)
        if step.unit and claimed.is_Rational and correct.is_Rational:  # figures: in human units, exact beside
            from llm_formulas.render.printers.human import exact, human

            shown = (f"{human(v, step.unit, binary=step.binary)} ({exact(v)})" for v in (claimed, correct))
            return "{} claimed ≠ {} correct".format(*shown)
        return f"claimed {plain(step.expr)} ≠ {plain(step.correct)}"
    if step.claim == "concludes":
        bindings = ", ".join(f"{symbol} = {plain(value)}" for symbol, value in step.where.items())
        return f"{step.formula_id} ≡ {plain(get(step.formula_id).dimensioned)}" + (f"   (with {bindings})" if bindings else "")
    if step.claim == "bounds":
        return f"{step.reference} {'≤' if step.direction == 'upper' else '≥'} {plain(step.expr)}"
    text = f"{step.label} {_PLAIN[step.claim]} {plain(step.expr)}"
    if step.claim == "approximates":
        text += f"   (relative error {plain(step.error)}; {step.condition})"
    return text


# Dimensionless formulas whose value counts something a person names (the unit algebra has no "GPU" or "hour")
COUNTED_AS = {"cluster.gpu_hours": "GPU-hours"}


def evaluate(formula_id: str, assignments: list[str], unit: str | None = None) -> Result:
    """The value in the unit a person reads first (84 ZFLOP, 7.61 days), then exactly; ``unit`` converts."""
    from llm_formulas.render.printers.human import exact

    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.vocabulary.evaluation import bind, value_at
    from llm_formulas.render.cli.inputs import parse_assignments

    _known_formula(formula_id)
    formula = get(formula_id)
    values = parse_assignments(assignments)
    unused = [s.name for s in values if s not in formula.inputs]
    if unused:
        raise InputError(f"{formula_id} does not use {', '.join(unused)}")
    try:
        bound = bind(formula, values)
    except ValueError as error:  # a missing input, a violated condition: one line
        raise InputError(str(error)) from None
    value = value_at(formula, bound)
    doc = {
        "id": formula.id,
        "value": number_json(value),
        "exact": str(value),
        "unit": str(formula.unit),
        "inputs": {s.name: number_json(v) for s, v in values.items()},
        "defaults": {s.name: int(v) for s, v in bound.items() if s not in values},
    }
    if formula.id in COUNTED_AS:
        doc["counts"] = COUNTED_AS[formula.id]
    shown = shown_value(formula, value)
    if unit is not None:
        from llm_formulas.render.printers.human import significant

        converted = _converted(value, formula, unit)
        doc["converted"] = {"value": number_json(converted), "unit": unit}
        shown = f"{significant(float(converted), 3)} {unit}"  # as every figure a person reads; the exact value follows
    exact_unit = COUNTED_AS.get(formula.id, "" if formula.unit.is_dimensionless else str(formula.unit))
    return Result(doc, f"{formula.id} = {shown}   (exactly {exact(value)}{' ' + exact_unit if exact_unit else ''})")


def shown_value(formula: Formula, value) -> str:
    """The value in the unit a person reads: 84 ZFLOP, 60.9 days, 187k GPU-hours."""
    from llm_formulas.render.printers.human import human

    if formula.id in COUNTED_AS:
        return f"{human(value, '1')} {COUNTED_AS[formula.id]}"
    return human(value if value.is_Rational else float(value), formula.unit)


def _converted(value, formula: Formula, unit: str) -> object:
    """``value`` in the display unit ``unit`` (``eval --unit GiB``); a unit of another dimension is bad input."""
    import sympy as sp

    from llm_formulas.render.printers.human import UnitMismatch, convert

    try:
        return sp.Rational(convert(value if value.is_Rational else float(value), formula.unit, unit))
    except UnitMismatch as error:
        raise InputError(f"--unit {quote(unit)}: {error}") from None


def check(verbose: bool, modules: list[str] | None = None, ids: list[str] | None = None,
          topics: list[str] | None = None, cached: bool = True) -> Result:
    """Prove the catalogue; with ids or ``--topic`` a slice of it and what the slice rests on; with ``--module`` a
    user's own modules and the catalogue entries they read, with the same engine and units. Proofs are kept by
    content between runs unless ``cached`` is False (``derivations/vocabulary/proof_cache.py``), and so is a passing check of
    the catalogue or a slice, answered whole while nothing it read has changed (``derivations/reports/check_record.py``:
    for the whole catalogue, the release's committed check first)."""
    from llm_formulas.derivations.vocabulary.read_record import cache_directory, catalogue_unloaded, reading

    replayable = cached and catalogue_unloaded()  # nothing held in memory yet can differ from its files
    with reading() as reads:
        from llm_formulas.derivations.reports.catalogue import Report, check_all, check_slice
        from llm_formulas.derivations.vocabulary.proof_cache import proofs_cached

        def answered(request: tuple[str, ...], run: Callable[[], Report]) -> Report:
            return _kept_report(request, run, reads) if replayable else run()

        with proofs_cached(cache_directory() if cached else None):
            if modules:
                if ids or topics:
                    raise InputError("--module proves your modules; it does not take formula ids or --topic")
                report = _check_modules(modules)
            elif ids or topics:
                chosen = _slice(ids or [], topics or [])
                report = answered(("slice", *chosen), lambda: check_slice(chosen))
            else:
                report = answered(("all",), check_all)
    doc = report.as_json()
    lines = [o.describe() for o in (report.outcomes if verbose else report.failed)]
    summary = f"{doc['derivations']} derivations, {doc['steps']} checks, {len(report.failed)} failed"
    return Result(doc, "\n".join(lines + [summary]), 0 if report.ok else 1)


def _kept_report(request: tuple[str, ...], run: Callable[[], Report], reads: Reads) -> Report:
    """``run()``'s report, or that of an earlier passing run of the same request (for the whole catalogue, the
    release's committed one first) while nothing it read has changed (``derivations/reports/check_record.py``)."""
    from llm_formulas.derivations.reports.catalogue import Report
    from llm_formulas.derivations.reports.check_record import kept_outcomes

    return Report.from_outcomes(kept_outcomes(request, run, reads))


def _check_modules(modules: list[str]) -> Report:
    """``check --module``: the user's modules, each imported and checked, their prints sent to stderr."""
    import contextlib
    import sys

    from llm_formulas.derivations.reports.catalogue import Report, check_module

    outcomes = []
    with contextlib.redirect_stdout(sys.stderr):  # the user's prints must not corrupt --json
        for name in modules:
            try:
                outcomes.extend(check_module(_import_user_module(name)).outcomes)
            except ValueError as error:
                raise InputError(str(error)) from None
    return Report(tuple(outcomes))


def _slice(ids: list[str], topics: list[str]) -> list[str]:
    """The formula ids ``check ID... --topic T...`` names, each known."""
    from llm_formulas.derivations.reports.catalogue import topic_formula_ids

    for formula_id in ids:
        _known_formula(formula_id)
    chosen = list(ids)
    for topic in topics:
        try:
            chosen += topic_formula_ids(topic)
        except ValueError as error:
            raise InputError(f"--topic: {error}") from None
    return chosen


def clear_cache() -> Result:
    """``check --clear-cache``: forget every kept proof."""
    from llm_formulas.derivations.vocabulary.proof_cache import clear

    directory = clear()
    return Result({"cleared": str(directory)}, f"cleared the proof cache {directory}")


def _import_user_module(name: str) -> object:
    """``PKG.MODULE`` imported as ``python -m`` would (the working directory first on the path); a module that
    cannot be imported is bad input, named with its error."""
    import importlib
    import os
    import sys

    if not all(part.isidentifier() for part in name.split(".")):
        raise InputError(f"--module {quote(name)} is not a dotted module name (PKG.MODULE)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except SystemExit as done:  # an exit at import must not read as "proved"
        raise InputError(f"cannot import {quote(name)}: it called sys.exit({done.code!r}) while imported") from None
    except Exception as error:  # the user's code: any failure to import is theirs to fix, in one line
        raise InputError(f"cannot import {quote(name)}: {type(error).__name__}: {str(error)[:120]}") from None


def check_mutations(sample: int | None, workers: int, per_formula: int | None = None) -> Result:
    """``check --mutations``: change each formula one place at a time; every change must make a check fail."""
    from llm_formulas.derivations.reports.mutations import run
    from llm_formulas.render.cli.progress import Progress

    if sample is not None and sample < 1:
        raise InputError("--sample must be a positive number of mutants")
    if per_formula is not None and per_formula < 1:
        raise InputError("--per-formula must be a positive number of mutants")
    if workers < 1:
        raise InputError("--workers must be a positive number of processes")
    progress = Progress("mutants")
    try:
        report = run(sample=sample, progress=progress.update, workers=workers, per_formula=per_formula)
    finally:
        progress.close()
    return Result(report.as_json(), report.text(), 0 if not report.survivors else 1)


def _check(args) -> Result:
    if args.clear_cache:
        if args.mutations or args.module or args.ids or args.topic:
            raise InputError("--clear-cache clears the proof cache and proves nothing; run check again after it")
        return clear_cache()
    if args.mutations and (args.module or args.ids or args.topic):
        raise InputError("--mutations mutates the whole built-in catalogue; it does not take --module, ids or --topic")
    if args.mutations:
        return check_mutations(args.sample, args.workers, args.per_formula)
    return check(args.verbose, args.module, args.ids, args.topic, cached=not args.no_cache)


def register(add_command) -> None:
    add_command("list", "list every formula with its unit and inputs", lambda args: list_formulas())
    shown = add_command("show", "show a formula, its inputs, sources and derivation steps",
                        lambda args: show(args.id, args.latex, args.expanded, args.family))
    shown.add_argument("id", help="formula id, e.g. params.total")
    shown.add_argument("--family", metavar="FAMILY", help="the formula at one family's switches, e.g. llama (its own form)")
    shown.add_argument("--latex", action="store_true", help="print the formula as LaTeX")
    shown.add_argument("--expanded", action="store_true",
                       help="spell out every named part (by default a formula built from others names them)")
    evaluated = add_command(
        "eval",
        "evaluate a formula exactly: llm-formulas eval params.total l=12 h=768 V=50257 s=1024",
        lambda args: evaluate(args.id, args.assignments, args.unit),
    )
    evaluated.add_argument("--unit", metavar="UNIT",
                           help="show the value in UNIT: B kB MB GB TB GiB TiB, FLOP TFLOP PFLOP EFLOP ZFLOP, FLOP/s, B/s, "
                                "s ms minutes hours days years (the formula's dimension must match)")
    evaluated.add_argument("id", help="formula id")
    evaluated.add_argument("assignments", nargs="*", metavar="name=value", help="a value for each input symbol")
    checked = add_command(
        "check",
        "prove every derivation step, unit and cross-check; exit 1 if any fails",
        lambda args: _check(args),
    )
    checked.add_argument("ids", nargs="*", metavar="ID",
                         help="prove only these formulas and what their derivations rest on (default: everything)")
    checked.add_argument("--topic", action="append", metavar="TOPIC",
                         help="prove only a topic's formulas (params, flops, memory, ...) and what they rest on; repeat for several")
    checked.add_argument("--no-cache", action="store_true",
                         help="prove every step afresh, neither reading nor keeping proofs "
                              "(kept by content in $XDG_CACHE_HOME/llm-formulas, ~/.cache by default; a passing "
                              "check is answered whole while no file it read has changed)")
    checked.add_argument("--clear-cache", action="store_true", help="forget every kept proof and check, then exit")
    checked.add_argument("--verbose", action="store_true", help="list every check, not only failures")
    checked.add_argument("--module", action="append", metavar="PKG.MODULE",
                         help="prove a module of your own instead of the catalogue: its Catalogue objects (units, "
                              "derivations, coverage) and its DERIVATIONS list; repeat for several")
    checked.add_argument(
        "--mutations",
        action="store_true",
        help="change every formula one place at a time (coefficient, exponent, same-unit symbol swap, dropped term) "
        "and show each change makes a proof or unit check fail; prints the kill rate and every survivor, exit 1 if any survives",
    )
    checked.add_argument("--sample", type=int, default=None, metavar="N", help="with --mutations: try N random mutants only")
    checked.add_argument("--per-formula", type=int, default=None, metavar="N",
                         help="with --mutations: try at most N random mutants of each formula (every formula is tried)")
    checked.add_argument("--workers", type=int, default=1, metavar="N", help="with --mutations: try them on N processes")
