"""Published parallel layouts, for ``estimate --layout NAME``.

BLOOM-176B (BigScience 2022, §3.4 and Table 3; 004's worked system): 384 A100 80 GB as
TP 4 × PP 12 × DP 8, ZeRO stage 1, bf16; 70 blocks split 5, 6 × 10, 5 with the (tied)
embedding on the first and last stage; global batch 2048 sequences of 2048 tokens in
micro-batches of 2; 366B tokens.
"""

from __future__ import annotations

from dataclasses import dataclass


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
