"""The one table of symbols: every quantity has one SymPy symbol, made here only.

Each entry carries the SymPy assumptions (counts are ``positive, integer``),
its LaTeX, a one-line meaning, a unit and where the notation comes from
(``000`` Table 3 of the Bilibili article, extended as DESIGN.md says).
Constants that carry a unit (``c_flop`` = 2 FLOP per parameter per token) are
symbols too, with a value: formulas keep them symbolic so that dimensional
analysis sees their unit, and every proof or evaluation substitutes the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from formulas.units import Unit, as_unit


@dataclass(frozen=True)
class Quantity:
    """Metadata of one symbol; the registry is keyed by the symbol itself."""

    symbol: sp.Symbol
    latex: str
    meaning: str
    unit: Unit
    source: str
    value: sp.Rational | None = None
    maximum: sp.Rational | None = None

    @property
    def name(self) -> str:
        return self.symbol.name

    @property
    def is_integer(self) -> bool:
        return bool(self.symbol.is_integer)

    @property
    def is_constant(self) -> bool:
        return self.value is not None


_REGISTRY: dict[str, Quantity] = {}


def declare(
    name: str,
    latex: str,
    meaning: str,
    unit: Unit | str,
    *,
    integer: bool,
    source: str = "000 Table 3",
    maximum: int | None = None,
) -> sp.Symbol:
    """Create and register a positive symbol; a second, different declaration is refused."""
    symbol = sp.Symbol(name, positive=True, integer=integer) if integer else sp.Symbol(name, positive=True)
    bound = None if maximum is None else sp.Integer(maximum)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source, maximum=bound)
    _register(entry)
    return symbol


def constant(name: str, latex: str, value: int | Fraction, meaning: str, unit: Unit | str, source: str) -> sp.Symbol:
    """Register a unit-carrying constant; it prints as its value."""
    symbol = sp.Symbol(name, positive=True)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source, sp.Rational(value))
    _register(entry)
    return symbol


def _register(entry: Quantity) -> None:
    existing = _REGISTRY.get(entry.name)
    if existing is not None and existing != entry:
        raise ValueError(f"symbol {entry.name!r} is already declared differently")
    _REGISTRY[entry.name] = entry


def quantity(name_or_symbol: str | sp.Symbol) -> Quantity:
    """The registry entry of a symbol, by name or by symbol."""
    name = name_or_symbol if isinstance(name_or_symbol, str) else name_or_symbol.name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown symbol {name!r}") from None


def is_declared(name: str) -> bool:
    return name in _REGISTRY


def all_quantities() -> list[Quantity]:
    return list(_REGISTRY.values())


def table_order(symbol: sp.Symbol) -> int:
    """Position of a symbol in the table (the order help and reports list inputs in)."""
    return list(_REGISTRY).index(symbol.name)


def constant_values() -> dict[sp.Symbol, sp.Rational]:
    """Substitution that replaces every unit-carrying constant by its value."""
    return {q.symbol: q.value for q in _REGISTRY.values() if q.value is not None}


def latex_names() -> dict[sp.Symbol, str]:
    """``symbol_names`` for ``sympy.latex``, built from the registry."""
    return {q.symbol: q.latex for q in _REGISTRY.values() if q.value is None}


# --- batch and sequence -------------------------------------------------------
b = declare("b", "b", "micro-batch size", "1", integer=True)
B = declare("B", "B", "global batch size", "1", integer=True)
s = declare("s", "s", "sequence length", "1", integer=True)
# --- model shape ----------------------------------------------------------------
h = declare("h", "h", "hidden size", "1", integer=True)
a = declare("a", "a", "attention heads", "1", integer=True)
g = declare("g", "g", "key/value heads", "1", integer=True, source="DESIGN.md (GQA/MQA)")
d_head = declare("d_head", "d_{head}", "head dimension", "1", integer=True, source="DESIGN.md")
d_ff = declare("d_ff", "d_{ff}", "MLP inner width", "1", integer=True, source="DESIGN.md")
l = declare("l", "l", "layers", "1", integer=True)  # noqa: E741 - the sources' name
V = declare("V", "V", "vocabulary size", "1", integer=True)
E = declare("E", "E", "experts", "1", integer=True, source="DESIGN.md (MoE)")
k = declare("k", "k", "experts per token", "1", integer=True, source="DESIGN.md (MoE)")
# --- parallel layout ------------------------------------------------------------
t = declare("t", "t", "tensor parallel degree", "1", integer=True)
p = declare("p", "p", "pipeline parallel degree", "1", integer=True)
d = declare("d", "d", "data parallel degree", "1", integer=True)
n = declare("n", "n", "GPUs (workers)", "1", integer=True)
m = declare("m", "m", "micro-batches per iteration", "1", integer=True)
v = declare("v", "v", "virtual pipeline stages per GPU", "1", integer=True, source="Narayanan et al. 2021")
# --- model and data size --------------------------------------------------------
P = declare("P", r"\Psi", "parameters", "parameter", integer=False)
D = declare("D", "D", "training tokens", "token", integer=False)
# --- hardware and efficiency ------------------------------------------------------
X = declare("X", "X", "peak FLOP/s of one GPU", "FLOP/second", integer=False)
U = declare("U", "U", "utilization (MFU)", "1", integer=False, maximum=1)
W_mem = declare("W_mem", r"W_{mem}", "memory bandwidth", "byte/second", integer=False, source="DESIGN.md")
W_link = declare("W_link", r"W_{link}", "link bandwidth", "byte/second", integer=False, source="DESIGN.md")
r = declare("r", "r", "allowed communication-to-compute time ratio", "1", integer=False)
f = declare("f", "f", "serial fraction (Amdahl)", "1", integer=False, maximum=1)

# --- one matrix multiplication [M, K] x [K, N] ------------------------------------
M_rows = declare("M_rows", "M", "rows of a GEMM's left operand", "1", integer=True, source="000 §3.2")
K_inner = declare("K_inner", "K", "inner (contracted) dimension of a GEMM", "1", integer=True, source="000 §3.2")
N_cols = declare("N_cols", "N", "columns of a GEMM's right operand", "1", integer=True, source="000 §3.2")

# --- constants that carry a unit -----------------------------------------------
c_flop = constant(
    "c_flop",
    "c_{flop}",
    2,
    "FLOPs per parameter per token in one pass: a multiply and an add",
    "FLOP/(parameter*token)",
    "001 (3 multiplies and 3 adds per weight per token in training)",
)
