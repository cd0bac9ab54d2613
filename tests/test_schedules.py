"""The schedule pictures' replay (render/documents/schedules.py) against the catalogue's bubbles and against the
independent 1F1B replay of tests/test_uneven_pipeline.py."""

from __future__ import annotations

from fractions import Fraction

import pytest

from llm_formulas.formulas.reports import estimate
from llm_formulas.render.documents.schedules import idle_share, interleaved, makespan, one_f_one_b
from test_uneven_pipeline import _one_f_one_b


@pytest.mark.parametrize("p, m", [(4, 8), (4, 16), (8, 64), (12, 128)])
def test_1f1b_idles_the_bubble_p_minus_1_over_m(p, m):
    events = one_f_one_b(p, m)
    assert idle_share(events) == estimate.exact("cluster.bubble", p=p, m=m)
    assert float(makespan(events)) == _one_f_one_b([1.0] * p, [2.0] * p, m)


@pytest.mark.parametrize("p, v, m", [(4, 2, 8), (4, 2, 16), (4, 4, 8), (8, 2, 64)])
def test_the_interleaved_schedule_idles_a_vth_of_it(p, v, m):
    assert idle_share(interleaved(p, v, m)) == estimate.exact("cluster.bubble.interleaved", p=p, m=m, v=v)


def test_each_gpu_runs_every_pass_once_and_one_at_a_time():
    events = interleaved(4, 2, 8)
    assert sorted((e.gpu, e.kind, e.chunk, e.micro_batch) for e in events) == sorted(
        (g, kind, c, k) for g in range(4) for kind in "FB" for c in range(2) for k in range(8))
    for gpu in range(4):
        mine = sorted((e.start, e.end) for e in events if e.gpu == gpu)
        assert all(end <= start for (_, end), (start, _) in zip(mine, mine[1:]))
    with pytest.raises(ValueError, match="multiple of p"):
        interleaved(4, 2, 6)
    assert makespan(one_f_one_b(1, 3)) == Fraction(9)
