"""The sizing page's serving view: formulas.reports.serving_report.report traced with symbols and printed to JavaScript.

As ``jscodegen.report_javascript`` does for estimate: every model size and switch, the layout (t, p), the batch and the
request (b, s_in, s_out), the GPU's figures (X at the weights' precision, W_mem, W_link, M_GPU), the dtypes' bytes (q_Ψ,
q_KV), the serving constants, the rental price and board power (c_GPU·h, W_GPU) are the symbol table's symbols; the
network is the page's ``network`` setting and ``node_size`` the GPUs a node's NVLink joins (the GPU preset's, as
``serve`` takes it). The page therefore runs the report ``llm-formulas serve`` prints, not a copy.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.render.printers.jscodegen import SETTINGS, Report, Trace, _basic, _traced, _traced_choose, traced_function

GIVEN = ("X", "W_mem", "W_link", "M_gpu", "q_w", "q_kv", "c_rent", "W_gpu")
CONSTANTS = ("eta_pf", "eta_dec", "eta_hbm", "tau_L", "tau_ar")
NODE_SIZE = sp.Symbol("node_size", positive=True, integer=True)  # the GPUs one node's NVLink joins: the preset's (gpus.NODE_SIZE)


def serving_javascript(model_names: tuple[str, ...]) -> Report:
    """``function serving_report(given) {...}``: given maps every input name to a number; it returns {path: number}."""
    from llm_formulas.formulas.reports.estimate import Ops
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.data.serving_calibration import ServingConstants
    from llm_formulas.formulas.reports.serving_report import ServeInputs, report
    from llm_formulas.formulas.vocabulary.symbols import quantity

    def symbol(name: str) -> sp.Symbol:
        return quantity(name).symbol

    constants = ServingConstants(*(symbol(name) for name in CONSTANTS), provenance="the page's")
    inputs = ServeInputs({name: symbol(name) for name in model_names}, gpu("h100-sxm"), node_size=NODE_SIZE,
                         network=SETTINGS["network"], constants=constants)
    trace = Trace("y_")
    ops = Ops(where=trace.where, minimum=sp.Min, maximum=sp.Max, number=_basic, choose=_traced_choose, ceiling=sp.ceiling)
    traced = report(symbol("t"), symbol("p"), 1, 1, symbol("b"), symbol("s_in"), symbol("s_out"), inputs, _traced, ops,
                    given={name: symbol(name) for name in GIVEN})
    return traced_function("serving_report", traced, trace)
