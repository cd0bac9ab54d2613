"""The library's public functions: read the catalogue, evaluate, render and turn into NumPy code any formula or
expression.

Each function takes a catalogue id (``"params.total"``), a ``Formula`` (the built-in catalogue's or a user's) or, where
it makes sense, a plain SymPy expression built from the catalogue's symbols. ``llm_formulas`` re-exports them; this
module is their one implementation, shared with the command line (``eval``) and the generated NumPy module
(``numpy_function`` prints its expression with the generated module's printer).
"""

from __future__ import annotations

import inspect
from typing import Callable, Mapping

import sympy as sp

from llm_formulas.derivations.engine import Derivation
from llm_formulas.derivations.latex import derivation_latex, step_latex
from llm_formulas.formulas.catalogue import Formula, get, lookup, within
from llm_formulas.formulas.dimensions import units_of
from llm_formulas.formulas.evaluation import evaluate as evaluate_formula
from llm_formulas.formulas.latex import formula_latex, latex as expression_latex
from llm_formulas.formulas.symbols import resolve
from llm_formulas.formulas.units import Unit

__all__ = ["as_formula", "evaluate", "latex", "markdown", "model", "numpy_function", "symbol", "symbols", "unit_of"]

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
    from llm_formulas.formulas import scope
    from llm_formulas.formulas.presets import preset

    own = scope.find("presets", name)
    if own is not None:
        return dict(own)
    return {symbol.name: value for symbol, value in preset(name).architecture.values.items()}


def evaluate(target: Target, values: Mapping[str | sp.Symbol, object] | None = None, /, *, numeric: bool = False,
             model: str | None = None, **named: object) -> sp.Expr | float:
    """The exact value of a formula (or expression) at the given inputs; ``numeric=True`` gives a float.

    Inputs are named by string or symbol, in a mapping or as keywords (``evaluate("params.total", l=12, h=768,
    V=50257, s=1024)`` is 124,439,808); numbers may be ints, Fractions, decimal strings or floats. Structural
    switches left out take their classic values; an unknown name raises with a "did you mean", a missing input
    names what is missing, a violated condition says which. Values of symbols the formula does not use are
    accepted (a whole model's values may be passed). ``model="llama2-70b"`` (a built-in preset or one of an active
    catalogue) supplies the model's sizes; values given beside it win.
    """
    formula = as_formula(target)
    with within(formula.catalogue):
        sizes = _sizes(model) if model is not None else {}
    return evaluate_formula(formula, {**sizes, **dict(values or {}), **named}, numeric=numeric)


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


def numpy_function(target: Target) -> Callable[..., object]:
    """A NumPy-vectorised Python function of a formula or expression, like ``sympy.lambdify``: arguments by name
    (the inputs it needs positionally, switches as keywords at their classic values), scalars or arrays cast to
    float64 and broadcast. Its expression is printed by the same printer, with the same arguments and the same
    rule for switch-gated sizes, as the generated module ``build`` writes, so the two agree to the bit; its
    docstring states the formula, units and sources."""
    import functools

    import numpy

    from llm_formulas.derivations.proof import valued
    from llm_formulas.render.numeric.gating import _gated
    from llm_formulas.render.printers.codegen import docstring, function_name, gating, numpy_printer, signature

    formula = as_formula(target)
    with within(formula.catalogue):
        arguments = signature(formula)
        gates = {size: gating(formula, size) for size in arguments
                 if size not in formula.required and size not in formula.defaults}
        doc = docstring(formula, arguments)
    core = sp.lambdify(arguments, valued(formula.expr), modules=[{"functools": functools}, "numpy"],
                       printer=numpy_printer(), docstring_limit=0)
    parameters = [inspect.Parameter(s.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for s in formula.required]
    parameters += [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=int(v)) for s, v in formula.defaults.items()]
    parameters += [inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=None) for s in gates]
    call_signature = inspect.Signature(parameters)

    def function(*args: object, **kwargs: object) -> object:
        given = call_signature.bind(*args, **kwargs)
        given.apply_defaults()
        values = dict(given.arguments)
        for size, (switches, neutral) in gates.items():
            values[size.name] = _gated(formula.id, size.name, values[size.name],
                                       {s.name: (values[s.name], int(v)) for s, v in switches.items()}, neutral)
        return core(*(numpy.asarray(values[s.name], dtype=numpy.float64) for s in arguments))

    function.__name__ = function.__qualname__ = function_name(formula.id)
    function.__doc__ = doc
    function.__signature__ = call_signature
    return function


def unit_of(target: Target) -> Unit:
    """The unit of a formula (declared) or of an expression (read from its unit marks and symbols)."""
    return target.unit if isinstance(target, Formula) else as_formula(target).unit if isinstance(target, str) else units_of(target)
