"""The sizing page's serving view: formulas.serving_report.report traced with symbols and printed to JavaScript.

As ``jscodegen.report_javascript`` does for estimate: every model size and switch, the layout (t, p), the batch and the
request (b, s_in, s_out), the GPU's figures (X at the weights' precision, W_mem, W_link, M_GPU), the dtypes' bytes (q_Ψ,
q_KV), the serving constants, the rental price and board power (c_GPU·h, W_GPU) are the symbol table's symbols; the
network is the page's ``network`` setting. The page therefore runs the report ``llm-formulas serve`` prints, not a copy.
"""

from __future__ import annotations

import json

import sympy as sp
from sympy.printing.jscode import jscode

from llm_formulas.render.printers.jscodegen import SETTINGS, Report, _basic, _flatten, _traced, _traced_choose, _traced_where

GIVEN = ("X", "W_mem", "W_link", "M_gpu", "q_w", "q_kv", "c_rent", "W_gpu")
CONSTANTS = ("eta_pf", "eta_dec", "eta_hbm", "tau_L", "tau_ar")


def serving_javascript(model_names: tuple[str, ...]) -> Report:
    """``function serving_report(given) {...}``: given maps every input name to a number; it returns {path: number}."""
    from llm_formulas.formulas.estimate import Ops
    from llm_formulas.formulas.gpus import gpu
    from llm_formulas.formulas.serving_calibration import ServingConstants
    from llm_formulas.formulas.serving_report import ServeInputs, report
    from llm_formulas.formulas.symbols import quantity

    def symbol(name: str) -> sp.Symbol:
        return quantity(name).symbol

    constants = ServingConstants(*(symbol(name) for name in CONSTANTS), provenance="the page's")
    inputs = ServeInputs({name: symbol(name) for name in model_names}, gpu("h100-sxm"), network=SETTINGS["network"],
                         constants=constants)
    ops = Ops(where=_traced_where, minimum=sp.Min, maximum=sp.Max, number=_basic, choose=_traced_choose, ceiling=sp.ceiling)
    traced = report(symbol("t"), symbol("p"), 1, 1, symbol("b"), symbol("s_in"), symbol("s_out"), inputs, _traced, ops,
                    given={name: symbol(name) for name in GIVEN})
    flat = _flatten(traced)
    names = tuple(sorted({s.name for expr in flat.values() for s in expr.free_symbols}))
    shared, reduced = sp.cse(list(flat.values()), symbols=sp.numbered_symbols("y_"), optimizations=None)
    lines = ["function serving_report(given) {"]
    lines += [f"  const {name} = given[{json.dumps(name)}];" for name in names]
    lines += [f"  const {temp} = {jscode(expr)};" for temp, expr in shared]
    lines.append("  return {")
    lines += [f"    {json.dumps(path)}: {jscode(expr)}," for path, expr in zip(flat, reduced)]
    lines += ["  };", "}"]
    return Report("\n".join(lines).replace("</", "<\\/") + "\n", names, tuple(flat))
