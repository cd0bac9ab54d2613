"""Published parallel layouts, for ``estimate --layout NAME``.

BLOOM-176B (BigScience 2022, §3.4 and Table 3; 004's worked system): 384 A100 80 GB as
TP 4 × PP 12 × DP 8, ZeRO stage 1, bf16; 70 blocks split 5, 6 × 10, 5 with the (tied)
embedding on the first and last stage; global batch 2048 sequences of 2048 tokens in
micro-batches of 2; 366B tokens.
"""

from __future__ import annotations

from dataclasses import dataclass


def balanced_stages(layers: int, p: int) -> tuple[int, ...] | None:
    """Megatron-DeepSpeed's ``--pp-partition-method type:transformer|embedding`` (BLOOM's): the l blocks and the two
    embedding matrices (the input one and the tied output head) are l + 2 items split as DeepSpeed's
    ``partition_uniform`` splits them, ⌊(l + 2)/p⌋ per stage and one more on each of the first (l + 2) mod p; the
    first and last stage then hold one embedding each in place of a block. BLOOM's 70 blocks over 12 stages:
    72 items, 6 a stage, so 5, 6 × 10, 5. None when a stage would hold no block (p > 1 and (l + 2)/p < 2)."""
    if p == 1:
        return (layers,)
    items, extra = divmod(layers + 2, p)
    stages = [items + (1 if index < extra else 0) for index in range(p)]
    stages[0] -= 1
    stages[-1] -= 1
    return tuple(stages) if min(stages) >= 1 else None


@dataclass(frozen=True)
class LayoutPreset:
    """A published layout: the estimate options it stands for, and where it is printed."""

    name: str
    source: str
    tp: int
    pp: int
    dp: int
    stages: tuple[int, ...]
    embedding_stages: str
    micro_batch: int
    global_batch: int
    zero: int
    recompute: str
    tokens: str


LAYOUTS: dict[str, LayoutPreset] = {
    "bloom-176b": LayoutPreset(
        name="bloom-176b",
        source="BigScience 2022, §3.4; Li Wei (004), TP 4 × PP 12 × DP 8",
        tp=4, pp=12, dp=8, stages=(5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5), embedding_stages="first,last",
        micro_batch=2, global_batch=2048, zero=1, recompute="full", tokens="366e9",
    ),
}
