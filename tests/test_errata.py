"""Every erratum of the sources that SOURCES.md lists is a refutation the engine proves.

Each row: the refutation's label, the source's figure, and the correct figure as
SOURCES.md (and the article's own arithmetic, written out) gives it. The check
must prove the step (the two differ), the step must carry exactly the article's
figure, and its correct value must equal SOURCES.md's to the digits printed there.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.examples import all_examples

GIB = 2**30
DAY = 86400

# (label, the source's figure, the correct figure, relative tolerance of the correct figure as printed)
ERRATA = [
    # 000 §3.2: inference "6 FLOPs per parameter"; the forward alone is 2 (a ratio of 3, checked below).
    ("000: 6Ψ per token", None, None, None),
    # 000 §3.4.2.1: norms under TP as 4bsht; every rank holds 4bsh (a ratio of t).
    ("000: norms 4bsht", None, None, None),
    # 001: "5 GB per prompt"; 2 × 80 × 8192 × 4096 × 2 bytes = 10 GiB without GQA.
    ("001: 5 GB per prompt", 5 * GIB, 10 * GIB, 0),
    # 001: "16K FLOPs saved per byte"; 640 Ti FLOPs / 80 GiB = 8K.
    ("001: 16K FLOPs per byte", 16 * 1024, 8 * 1024, 0),
    # 002 §1.1: C = 6 × 3.4e10 × 5e9 printed as 1.02e22; it is 1.02e21.
    ("002: C = 1.02e22", Fraction("1.02e22"), Fraction("1.02e21"), 0),
    # 002 §1.2.2 (S17): 27700 GPU-hours; 1.02e21 / (312e12 × 0.35) / 3600 = 2595.
    ("S17: 27700 GPU-hours", 27700, 2595, Fraction(1, 2000)),
    # 002 §1.2.2: "80 A100 need 14.5 days" inherits the 10× error; 2595 / 80 / 24 = 1.35 days.
    ("002: 14.5 days on 80 A100", Fraction("14.5") * DAY, Fraction("1.35") * DAY, Fraction(1, 200)),
    # 002 §3: "(4466) × 1.2 = 5280"; 4466 × 1.2 = 5359.2.
    ("002: 4466 × 1.2 = 5280", 5280, Fraction("5359.2"), 0),
    # 002 §1.2.1 (S16a): 74800 / 184320 printed 40.5 %; SOURCES.md gives 40.6 (truncated).
    ("S16a: LLaMA-2 7B at 40.5 %", Fraction("0.405"), Fraction("0.406"), Fraction(1, 400)),
    # 002 §3 (S18): the formula's 8·a·b·s·h term matches no stored tensor (symbolic).
    ("S18: 8·a·b·s·h", None, None, None),
    # 001 (S11e): H800 t ≤ 4.8; 2·3·8192·400e9 / (2·2·989e12) = 4.97.
    ("S11e: H800 t ≤ 4.8", Fraction("4.8"), Fraction("4.97"), Fraction(1, 400)),
    # 001: H100 ratio "1100"; 989e12 / (900e9 / 2) ≈ 2198.
    ("001: H100 needs 1100", 1100, 2198, Fraction(1, 2000)),
    # 001: with 1100 the bound would be 2·3·8192 / 2 / 1100 = 22.3, not 11.
    ("001: 1100 gives t ≤ 11", 11, Fraction("22.3"), Fraction(1, 200)),
    # 001 (S12): "80 GB" of KV cache; 2 × 80 × 8192 × 4096 × 8 × 2 bytes = 80 GiB = 85.9 GB.
    ("S12: 80 GB", 80 * 10**9, 80 * GIB, 0),
    # 001 (S15b): 16 KB × 330 = 5.28 MB; 16384 × 330 = 5,406,720 bytes = 5.41 MB.
    ("S15b: 5.28 MB at b = 330", 5_280_000, 5_406_720, 0),
    # 001 (S15d): 41 ms; 5,406,720 bytes / 125e6 bytes/s = 43.25 ms.
    ("S15d: 41 ms at b = 330", Fraction("0.041"), Fraction("0.04325"), Fraction(1, 4000)),
    # 001: 16 KB over 1 Gbps in 0.25 ms; 16384 / 125e6 s = 0.131 ms.
    ("001: 16 KB over 1 Gbps in 0.25 ms", Fraction("0.25e-3"), Fraction("0.131e-3"), Fraction(1, 200)),
    # 001: 0.33 s of hops → 3 tokens/s leaves out the 0.14 s of compute: 0.14 + 8 × 0.04325 = 0.486 s.
    ("001: 0.33 s, 3 tokens/s", Fraction(1, 3), Fraction("0.14") + 8 * Fraction("0.04325376"), 0),
    # 001 (S15e): batch ≤ 60; 125e6 × (0.2 − 0.14) / (8 × 8192 × 2) = 57.2.
    ("S15e: batch ≤ 60", 60, Fraction("57.2"), Fraction(1, 200)),
]


def refutations() -> dict:
    found = {}
    for derivation in all_derivations():
        for step, outcome in zip(derivation.steps, derivation.check()):
            if step.claim == "refutes":
                found[step.label] = (step, outcome)
    return found


def exact(value) -> Fraction:
    number = valued(value)
    return Fraction(int(number.p), int(number.q))


@pytest.fixture(scope="module")
def found():
    return refutations()


@pytest.mark.parametrize("label, claimed, correct, tolerance", ERRATA, ids=[row[0] for row in ERRATA])
def test_erratum_is_proved(found, label, claimed, correct, tolerance):
    step, outcome = found[label]
    assert outcome.ok and outcome.method == "refutation", outcome.describe()
    if claimed is None:
        return
    assert exact(step.expr) == claimed
    assert abs(exact(step.correct) / Fraction(correct) - 1) <= tolerance


def test_symbolic_errata_ratios(found):
    import sympy as sp

    from llm_formulas.formulas.vocabulary.symbols import t

    # 000's 6Ψ against 2Ψ: three times the forward; 000's 4bsht against 4bsh: t times.
    assert sp.simplify(valued(found["000: 6Ψ per token"][0].expr / found["000: 6Ψ per token"][0].correct)) == 3
    assert sp.simplify(valued(found["000: norms 4bsht"][0].expr / found["000: norms 4bsht"][0].correct)) == t


def test_s19_slides_figure_is_the_blocks_without_logits():
    # 004 (BLOOM-176B, B = 16, s = 2048, l = 70, h = 14336): 72·B·s·l·h²·(1 + s/6h) by hand.
    B, s, l, h = 16, 2048, 70, 14336
    blocks = Fraction(72 * B * s * l * h**2) * (1 + Fraction(s, 6 * h))
    assert round(blocks / 10**12) == 34_750  # SOURCES.md S19: 34.750 PFLOP, printed as 34.8
    from sympy import Integer

    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.vocabulary.symbols import b as b_, h as h_, l as l_, s as s_

    three_forwards = 3 * l_ * get("flops.layer.forward").expr  # the unit mark (1 FLOP) put in
    assert Integer(three_forwards.subs({b_: B, s_: s, l_: l, h_: h})) == Integer(blocks.numerator) / blocks.denominator


def test_every_slip_of_a_worked_example_is_refuted(found):
    slipped = [example.case for example in all_examples() if example.slip]
    assert slipped  # the sources do slip
    for case in slipped:
        assert any(label.startswith(f"{case}:") for label in found), f"{case} has a slip but no refutes step"


def test_every_listed_erratum_is_in_the_table(found):
    assert {row[0] for row in ERRATA} <= set(found)
