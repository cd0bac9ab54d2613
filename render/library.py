"""The library's public functions: read the catalogue, evaluate, render and turn into NumPy code any formula or
expression.

Each function takes a catalogue id (``"params.total"``), a ``Formula`` (the built-in catalogue's or a user's) or, where
it makes sense, a plain SymPy expression built from the catalogue's symbols. ``llm_formulas`` re-exports them; this
module is their one implementation, shared with the command line (``eval``) and the generated NumPy module
(``numpy_function`` prints its expression with the generated module's printer).
"""

from __future__ import annotations

import inspect
from typing import Callable, Mapping, Protocol

import numpy
import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.latex import derivation_latex, step_latex
from llm_formulas.formulas.vocabulary.catalogue import Condition, Formula, get, lookup, within
from llm_formulas.formulas.vocabulary.dimensions import units_of
from llm_formulas.formulas.vocabulary.errors import InputError
from llm_formulas.formulas.vocabulary.evaluation import check_value, evaluate as evaluate_formula
from llm_formulas.formulas.vocabulary.numbers import exact_number
from llm_formulas.formulas.vocabulary.latex import formula_latex, latex as expression_latex
from llm_formulas.formulas.vocabulary.symbols import Quantity, constant_values, quantity, resolve
from llm_formulas.formulas.vocabulary.units import Unit
from llm_formulas.render.cli.inputs import counts, parse_number
from llm_formulas.render.results import Real, Whole, as_number

__all__ = ["NumpyFunction", "as_formula", "evaluate", "latex", "markdown", "model", "numpy_function", "symbol",
           "symbols", "unit_of"]

Target = str | Formula | sp.Basic


def as_formula(target: Target, name: str = "expression") -> Formula:
    """A catalogue id or a Formula as it is; a plain expression as an unregistered Formula named ``name`` (its unit
    read from its unit marks), so that every function below treats the three alike."""
    if isinstance(target, str):
        return get(target)
    if isinstance(target, Formula):
        return target
    if isinstance(target, sp.Basic):
        return Formula(id=name, dimensioned=target, unit=units_of(target), meaning=name, sources=())
    raise TypeError(f"expected a formula id, a Formula or a SymPy expression, got {type(target).__name__}")


def symbol(name: str) -> sp.Symbol:
    """The catalogue's symbol called ``name`` (``"h"``, ``"d_ff"``), with its assumptions (``sympy.Symbol("h")`` is
    another symbol that only prints alike); an unknown name raises with the nearest names."""
    return resolve(name)


def symbols(names: str) -> tuple[sp.Symbol, ...]:
    """Several catalogue symbols at once: ``h, l, s = symbols("h l s")``."""
    return tuple(resolve(name) for name in names.replace(",", " ").split())


def model(name: str) -> dict[str, object]:
    """A named model's sizes and switches by symbol name: one registered with ``Catalogue.model`` in an active
    catalogue, else a built-in preset (``llm-formulas params --model NAME`` lists them)."""
    return _sizes(name)


def _sizes(name: str) -> dict[str, object]:
    from llm_formulas.formulas.vocabulary import scope
    from llm_formulas.formulas.data.presets import preset

    own = scope.find("presets", name)
    if own is not None:
        return dict(own)
    return {symbol.name: value for symbol, value in preset(name).architecture.values.items()}


def evaluate(target: Target, values: Mapping[str | sp.Symbol, object] | None = None, /, *, numeric: bool = False,
             model: str | None = None, **named: object) -> Whole | Real:
    """The value of a formula (or expression) at the given inputs, as a Python number that keeps its exact value:
    an ``int`` when whole, else a ``float``, each with ``.exact``, the exact SymPy value (render/results.py);
    ``numeric=True`` gives a float (with ``.exact``) even for a whole value.

    Inputs are named by string or symbol, in a mapping or as keywords (``evaluate("params.total", l=12, h=768,
    V=50257, s=1024)`` is 124,439,808); numbers may be ints (NumPy's too), Fractions, floats or strings in the command
    line's grammar (``"7B"``, ``"1e9"``, ``"3/4"``). Each value is checked as the command line checks it (``l`` whole
    and positive, ``f`` at most 1), with the same words, and bad input raises ``InputError`` (a ValueError). Structural
    switches left out take their classic values; an unknown name raises with a "did you mean", a missing input
    names what is missing, a violated condition says which. Values of symbols the formula does not use are accepted
    (a whole model's values may be passed), but a classic formula refuses values it does not describe
    (``params.total`` at a gated, untied model names ``params.decoder.total``). ``model="llama2-70b"`` (a built-in
    preset or one of an active catalogue) supplies the model's sizes; values given beside it win. A discrete result
    whose meaning says how it rounds (a batch that fits, rounded down) is rounded so.
    """
    formula = as_formula(target)
    with within(formula.catalogue):
        sizes = _sizes(model) if model is not None else {}
        given = {name: _exact(name, value) for name, value in {**sizes, **dict(values or {}), **named}.items()}
    return as_number(evaluate_formula(formula, given), formula.id, numeric=numeric)


def _exact(name: str | sp.Symbol, value: object) -> sp.Rational:
    """A value as an exact number: a string read by the command line's own grammar (a k/M/B/T suffix for counts),
    anything else by formulas.vocabulary.numbers.exact_number."""
    if isinstance(value, str):
        entry = quantity(name)
        return parse_number(value, entry.name, suffix_allowed=counts(entry))
    return exact_number(value)


def latex(target: Target | Derivation) -> str:
    """LaTeX of a formula (``lhs = expression``), an expression, or a whole derivation (aligned numbered steps)."""
    if isinstance(target, Derivation):
        return derivation_latex(target)
    if isinstance(target, sp.Basic):
        return expression_latex(target)
    formula = as_formula(target)
    with within(formula.catalogue):
        return formula_latex(formula)


def markdown(target: Target | Derivation) -> str:
    """Markdown that renders on GitHub and in Jupyter: a formula with its meaning, unit, inputs, conditions and
    sources; an expression as display math; a derivation as numbered steps, each with its reason."""
    if isinstance(target, Derivation):
        with within(target.catalogue):
            steps = [f"{index}. *{step.claim}* — $${step_latex(step, lookup)}$$ — {step.why}"
                     for index, step in enumerate(target.steps, start=1)]
        return f"**{target.title}** (`{target.id}`)\n\n" + "\n".join(steps) + "\n"
    if isinstance(target, sp.Basic):
        return f"$${expression_latex(target)}$$\n"
    formula = as_formula(target)
    with within(formula.catalogue):
        inputs = ", ".join(f"`{s.name}`" for s in formula.required)
        switches = ", ".join(f"`{s.name}` = {v}" for s, v in formula.defaults.items())
        lines = [f"**`{formula.id}`** [{formula.unit}]: {formula.meaning}", "", f"$${formula_latex(formula)}$$", ""]
        lines.append(f"Inputs: {inputs or 'none'}" + (f"; switches at their classic values unless given: {switches}"
                                                     if switches else ""))
        if formula.conditions:
            lines += ["", "Valid when: " + "; ".join(c.text for c in formula.conditions)]
        if formula.sources:
            lines += ["", "Sources: " + "; ".join(str(s) for s in formula.sources)]
    return "\n".join(lines) + "\n"


class NumpyFunction(Protocol):
    """What ``numpy_function`` returns: called with its inputs by name, scalars or arrays, it gives float64 values
    (a NumPy scalar, a float, for scalar inputs; an array for arrays)."""

    __name__: str

    def __call__(self, **values: object) -> numpy.ndarray | float: ...


REFUSED_NOT_MASKED = ("Inputs by name only. A value that breaks its symbol's assumptions (positive, whole, within its "
                      "bounds) or a condition, anywhere in the arrays, raises InputError: nothing is masked.")


def numpy_function(target: Target) -> NumpyFunction:
    """A NumPy-vectorised Python function of a formula or expression, like ``sympy.lambdify``: every argument by name
    (keyword-only: a positional call is refused, naming the inputs), switches at their classic values, scalars or
    arrays cast to float64 and broadcast. Values are checked as ``evaluate`` checks them (each symbol's assumptions,
    the formula's testable conditions), over whole arrays: a violation anywhere raises InputError, nothing is
    masked. Its expression is printed by the same printer, with the same arguments and the same rule for
    switch-gated sizes, as the generated module ``build`` writes, so the two agree to the bit; its docstring states
    the formula, units, conditions and sources."""
    import functools

    from llm_formulas.render.numeric.gating import _gated, _times
    from llm_formulas.render.printers.codegen import docstring, function_name, gating, numeric_form, numpy_printer, signature

    formula = as_formula(target)
    name = function_name(formula.id)
    with within(formula.catalogue):
        arguments = signature(formula)
        gates = {size: gating(formula, size) for size in arguments
                 if size not in formula.required and size not in formula.defaults}
        doc = docstring(formula, arguments) + "\n" + REFUSED_NOT_MASKED + "\n"
        entries = {s.name: quantity(s) for s in arguments}
    core = sp.lambdify(arguments, numeric_form(formula), modules=[{"functools": functools, "_times": _times}, "numpy"],
                       printer=numpy_printer(), docstring_limit=0)
    conditions = _testable_conditions(formula, set(arguments))
    parameters = [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY) for s in formula.required]
    parameters += [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=int(v)) for s, v in formula.defaults.items()]
    parameters += [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=None) for s in gates]
    call_signature = inspect.Signature(parameters)
    inputs = ", ".join(s.name for s in formula.required)

    def function(*args: object, **kwargs: object) -> numpy.ndarray | float:
        if args:
            raise TypeError(f"{name}() takes its inputs by name ({inputs}), not by position: "
                            f"{name}({', '.join(f'{s.name}=...' for s in formula.required)})")
        given = call_signature.bind(**kwargs)
        given.apply_defaults()
        values = dict(given.arguments)
        for size, (switches, neutral) in gates.items():
            values[size.name] = _gated(formula.id, size.name, values[size.name],
                                       {s.name: (values[s.name], int(v)) for s, v in switches.items()}, neutral)
        arrays = {s: numpy.asarray(values[s.name], dtype=numpy.float64) for s in arguments}
        for symbol in arguments:
            if kwargs.get(symbol.name) is not None:
                _check_array(entries[symbol.name], arrays[symbol], formula)
        unset = {size for size in gates if given.arguments[size.name] is None}  # a gated size left out: not judged
        for condition, symbols, test in conditions:
            if unset & set(symbols):
                continue
            holds = numpy.asarray(test(*(arrays[s] for s in symbols)))
            if not holds.all():
                where = f" (false at {holds.size - int(holds.sum())} of {holds.size} points)" if holds.size > 1 else ""
                raise InputError(f"{formula.id} requires {condition.text}{where}")
        result: numpy.ndarray | float = core(*(arrays[s] for s in arguments))
        return result

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__signature__ = call_signature  # type: ignore[attr-defined]
    return function  # type: ignore[return-value]  # a function with __name__ and a keyword call is the Protocol


def _predicate_symbols(condition: Condition) -> list[sp.Symbol]:
    """The symbols of a condition's predicate (its constants put in), in one order."""
    assert condition.predicate is not None
    return sorted(condition.predicate.xreplace(constant_values()).free_symbols, key=lambda s: s.name)


def _testable_conditions(formula: Formula, arguments: set[sp.Symbol]
                         ) -> list[tuple[Condition, list[sp.Symbol], Callable[..., object]]]:
    """Each condition whose predicate reads only the function's arguments, with those symbols and the predicate as a
    NumPy function of them."""
    testable = [(c, _predicate_symbols(c)) for c in formula.conditions if c.predicate is not None]
    return [(c, symbols, sp.lambdify(symbols, c.predicate.xreplace(constant_values()), modules="numpy"))
            for c, symbols in testable if set(symbols) <= arguments]


def _check_array(entry: Quantity, values: numpy.ndarray, formula: Formula) -> None:
    """Refuse an array holding a value that breaks the symbol's assumptions, with the words of check_value."""
    bad = ~numpy.isfinite(values)
    bad |= values <= 0 if entry.symbol.is_positive else values < 0
    if entry.is_integer:
        bad |= values != numpy.floor(values)
    if entry.maximum is not None:
        bad |= values > float(entry.maximum)
    if entry.minimum is not None:
        bad |= values < float(entry.minimum)
    if bad.any():
        first = float(values[bad].flat[0])
        if first != first or first in (float("inf"), float("-inf")):
            raise InputError(f"{entry.name} ({entry.meaning}) must be a finite number, got {first}")
        with within(formula.catalogue):
            check_value(entry, exact_number(first))


def unit_of(target: Target) -> Unit:
    """The unit of a formula (declared) or of an expression (read from its unit marks and symbols)."""
    return target.unit if isinstance(target, Formula) else as_formula(target).unit if isinstance(target, str) else units_of(target)
