"""perf.pipeline.uneven against a replay of the 1F1B schedule, and the uneven stages of the predicted step.

The oracle is an event replay of one-forward-one-backward (Narayanan et al. 2021 §2.2, PipeDream-Flush): stage i runs
p − i − 1 warm-up forwards, then alternates one forward and one backward, then drains its backwards; a forward needs
the previous stage's forward of that micro-batch, a backward the next stage's backward; each stage runs one thing at a
time. The closed form (m − 1)·T_max + ΣT_i is what the model prices; the replay is what the schedule does.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from llm_formulas.formulas.data.layouts import balanced_stages
from llm_formulas.render.numeric.evaluator import numeric


def _one_f_one_b(forward: list[float], backward: list[float], m: int) -> float:
    """The makespan of 1F1B over stages with these per-micro-batch forward and backward times."""
    p = len(forward)
    orders = []
    for stage in range(p):
        warm = min(p - stage - 1, m)
        order = [("F", k) for k in range(warm)]
        for k in range(m - warm):
            order += [("F", warm + k), ("B", k)]
        order += [("B", k) for k in range(m - warm, m)]
        orders.append(order)
    done: dict[tuple[str, int, int], float] = {}
    clock, position = [0.0] * p, [0] * p
    while any(position[stage] < len(orders[stage]) for stage in range(p)):
        moved = False
        for stage in range(p):
            if position[stage] == len(orders[stage]):
                continue
            kind, k = orders[stage][position[stage]]
            if kind == "F":  # the activation from the stage before
                needs = ("F", stage - 1, k) if stage > 0 else None
            else:  # the gradient from the stage after (the last stage's own forward came earlier in its order)
                needs = ("B", stage + 1, k) if stage < p - 1 else None
            if needs is not None and needs not in done:
                continue
            start = max(clock[stage], done[needs] if needs is not None else 0.0)
            clock[stage] = start + (forward if kind == "F" else backward)[stage]
            done[(kind, stage, k)] = clock[stage]
            position[stage] += 1
            moved = True
        assert moved, "the schedule deadlocked"
    return max(clock)


def _closed_form(forward: list[float], backward: list[float], m: int) -> float:
    times = [f + b for f, b in zip(forward, backward)]
    return float(numeric("perf.pipeline.uneven", m=m, T_slow=max(times), T_stages=sum(times)))


@pytest.mark.parametrize("p, m", [(12, 128), (24, 512), (36, 64), (4, 8)])
def test_the_closed_form_matches_the_1f1b_schedule_on_bloom_partitions(p, m):
    # BLOOM's partition (type:transformer|embedding: 70 blocks and two embeddings as 72 items) with full recompute:
    # a block 1 unit forward, 3 backward (the recomputed forward and the two backward GEMMs); the last stage also runs
    # the logits, 0.9 of a block forward and twice that backward (no recompute)
    stages = balanced_stages(70, p)
    forward = [float(count) for count in stages]
    backward = [3.0 * count for count in stages]
    forward[-1] += 0.9
    backward[-1] += 1.8
    replay, closed = _one_f_one_b(forward, backward, m), _closed_form(forward, backward, m)
    assert closed == pytest.approx(replay, rel=0.01)
    assert closed >= replay  # the closed form never promises less than the schedule delivers


def test_equal_stages_give_the_balanced_pipeline():
    # four equal stages of 1 + 2 units, eight micro-batches: the textbook (m + p − 1)·T = 11 · 3
    assert _one_f_one_b([1.0] * 4, [2.0] * 4, 8) == 33.0
    assert _closed_form([1.0] * 4, [2.0] * 4, 8) == 33.0
    assert numeric("perf.pipeline.uneven", m=8, T_slow=Fraction(3), T_stages=Fraction(12)) == 33
