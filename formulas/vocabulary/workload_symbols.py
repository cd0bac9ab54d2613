"""The layout and workload symbols as plain data: what formulas/vocabulary/symbols.py declares them from, and the rules
``plan`` and ``sweep`` hold their inputs to without loading the symbol table (SymPy).

Counts of the layout (n, t, p, d, b, m, v, e, c, B, s) are positive integers; D (tokens), U (MFU, at most 1),
r (the overlap ratio) and X_run (a measured FLOP/s) positive reals.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_formulas.formulas.vocabulary.bibliography import Source
from llm_formulas.formulas.vocabulary.units import as_unit
from llm_formulas.formulas.vocabulary.value_rules import Rule

TABLE3 = Source("000", "Table 3")  # the foundation's table of notation


@dataclass(frozen=True)
class Declaration:
    """One symbol as ``formulas.vocabulary.symbols.declare`` takes it."""

    name: str
    latex: str
    meaning: str
    unit: str
    integer: bool
    source: Source
    maximum: int | None = None

    @property
    def rule(self) -> Rule:
        return Rule(self.name, self.meaning, as_unit(self.unit), self.integer, maximum=self.maximum)


DECLARATIONS: dict[str, Declaration] = {entry.name: entry for entry in (
    Declaration("b", "b", "micro-batch size", "1", True, TABLE3),
    Declaration("B", "B", "global batch size", "1", True, TABLE3),
    Declaration("s", "s", "sequence length", "1", True, TABLE3),
    Declaration("t", "t", "tensor parallel degree", "1", True, TABLE3),
    Declaration("p", "p", "pipeline parallel degree", "1", True, TABLE3),
    Declaration("d", "d", "data parallel degree", "1", True, TABLE3),
    Declaration("n", "n", "GPUs (workers)", "1", True, TABLE3),
    Declaration("m", "m", "micro-batches per iteration", "1", True, TABLE3),
    Declaration("v", "v", "virtual pipeline stages per GPU", "1", True, Source("narayanan2021", "§2.2.2, interleaved schedule")),
    Declaration("D", "D", "training tokens", "token", False, TABLE3),
    Declaration("U", "U", "utilization (MFU)", "1", False, TABLE3, maximum=1),
    Declaration("r", "r", "allowed communication-to-compute time ratio", "1", False, TABLE3),
    Declaration("e", "e", "expert parallel degree: the GPUs one MoE layer's experts are spread over", "1", True,
                Source("lepikhin2020", "§3.2, experts sharded over devices")),
    Declaration("c", "c", "context parallel degree: the GPUs one sequence is split over", "1", True,
                Source("megatron-cp", "context_parallel_size")),
    Declaration("X_run", r"X_{run}", "achieved (measured) FLOP/s of one GPU, counted as the paper counts model FLOPs",
                "FLOP/second", False, Source("narayanan2021", "Table 1, achieved teraFLOP/s per GPU")),
)}


def rule(name: str) -> Rule:
    """The rule of a layout or workload symbol (KeyError for any other: its rule is the symbol table's)."""
    return DECLARATIONS[name].rule
