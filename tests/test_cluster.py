"""Cluster sizing against the articles' worked examples (SOURCES.md S1–S5, S16, S17) and a simulated pipeline.

Every article figure sits beside the exact figure, the latter written out here as
arithmetic with Fractions (or taken from SOURCES.md's "exact arithmetic" column).
"""

import json
from fractions import Fraction

import pytest
import sympy as sp

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.symbols import quantity
from llm_formulas.formulas.vocabulary.examples import example
from helpers import run, value

DAY = 86400


# --- pipeline bubble ------------------------------------------------------------------


def simulate_gpipe(p, m):
    """Forward then backward of m micro-batches through p stages, one slot each; returns (slots, busy slots per stage)."""
    busy = {}
    for j in range(m):  # forward: stage i runs micro-batch j in slot i + j
        for i in range(p):
            busy.setdefault(i, set()).add(i + j)
    offset = m + p - 1
    for j in range(m):  # backward runs the stages in reverse
        for i in range(p):
            busy[i].add(offset + (p - 1 - i) + j)
    slots = max(max(s) for s in busy.values()) + 1
    return slots, {i: len(s) for i, s in busy.items()}


@pytest.mark.parametrize("p, m", [(2, 1), (4, 8), (8, 32), (5, 3)])
def test_bubble_matches_a_simulated_schedule(p, m):
    slots, busy = simulate_gpipe(p, m)
    idle = slots - busy[0]
    assert all(count == 2 * m for count in busy.values())
    assert Fraction(idle, busy[0]) == value("cluster.bubble", p=p, m=m)


def test_interleaved_bubble():
    # Narayanan et al. 2021 §2.2.2: the interleaved schedule divides the bubble by v: (1/v)·(p−1)/m.
    assert value("cluster.bubble.interleaved", p=8, m=16, v=4) == Fraction(7, 64) == value("cluster.bubble", p=8, m=16) / 4


# --- Amdahl (S1) ------------------------------------------------------------------------


def test_s1_amdahl():
    # 000 §3.5.1: speed-up = 1 / (0.05 % + 99.95 % / 512) = 407.8.
    exact = 1 / (Fraction(5, 10000) + Fraction(9995, 10000) / 512)
    assert example("S1").exact() == exact == Fraction(1024000, 2511)
    assert round(float(exact), 1) == float(example("S1").claimed) == 407.8
    assert round(float(exact), 3) == 407.806  # SOURCES.md exact column


def test_amdahl_ceiling_is_one_over_f():
    outcomes = derivation_of("cluster.amdahl").check()
    assert all(o.ok for o in outcomes) and outcomes[-1].claim == "approximates"
    assert value("cluster.amdahl", f=Fraction(1, 2000), n=10**9) < 2000


# --- training time (S2) --------------------------------------------------------------


def test_s2_training_days():
    # 000 §3.5.3: 1T parameters, 450B tokens, 3072 A100 at 312 TFLOPS, U = 0.5, recompute on: 8·P·D/(n·X·U).
    seconds = Fraction(8 * 10**12 * 450 * 10**9, 3072 * 312 * 10**12) / Fraction(1, 2)
    assert example("S2").exact() == seconds
    assert round(seconds / DAY, 2) == Fraction(8694, 100)  # SOURCES.md: 86.94 days (the article's figure was lost)
    assert example("S2").claimed is None
    assert value("cluster.training_time", P=10**12, D=450 * 10**9, n=3072, X=312 * 10**12, U="0.5") == seconds * Fraction(3, 4)


# --- GPUs for a deadline and implied utilization (S3–S5) ---------------------------


@pytest.mark.parametrize("case, params, tokens, days, article_gpus, sources_u", [
    ("S3", 175 * 10**9, 300 * 10**9, 23, 1110, "0.476"),    # GPT-3 175B
    ("S4", 65 * 10**9, 1400 * 10**9, 21, 2113, "0.475"),    # LLaMA-65B
    ("S5", 13 * 10**9, 10**12, 15, 422, "0.475"),           # LLaMA-13B
])
def test_s3_to_s5_implied_utilization(case, params, tokens, days, article_gpus, sources_u):
    # 000 §4.1.1 at 300 TFLOPS per GPU: U = 6·P·D / (n·X·τ)
    exact_u = Fraction(6 * params * tokens, article_gpus * 300 * 10**12 * days * DAY)
    assert example(case).exact() == exact_u
    assert round(float(exact_u), 3) == float(sources_u)  # SOURCES.md exact column
    # and back: at that utilization the deadline needs the article's GPU count
    gpus = value("cluster.gpus_for_deadline", P=params, D=tokens, X=300 * 10**12, U=exact_u, tau=days * DAY)
    assert gpus == article_gpus
    # at the rounded utilization the article's count is recovered to the nearest GPU
    rounded = value("cluster.gpus_for_deadline", P=params, D=tokens, X=300 * 10**12, U=sources_u, tau=days * DAY)
    assert abs(rounded - article_gpus) < 2


def test_mfu_and_hfu():
    # HFU counts the recomputed forward: 8ΨD vs 6ΨD for the same run (Korthikanti et al. 2022 §6).
    run_ = dict(P=175 * 10**9, D=300 * 10**9, n=1024, X=312 * 10**12, tau=34 * DAY)
    assert value("cluster.hfu", **run_) == Fraction(4, 3) * value("cluster.mfu", **run_)
    assert value("cluster.mfu", **run_) == Fraction(6 * 175 * 10**9 * 300 * 10**9, 1024 * 312 * 10**12 * 34 * DAY)


# --- LLaMA-2 GPU-hours (S16) and 002's slips (S17) ---------------------------------


@pytest.mark.parametrize("case, params, hours, article, sources_pct", [
    ("S16a", 7 * 10**9, 184320, Fraction(405, 1000), "40.6"),
    ("S16b", 34 * 10**9, 1038336, Fraction(350, 1000), "35.0"),
    ("S16c", 70 * 10**9, 1720320, Fraction(435, 1000), "43.5"),
])
def test_s16_llama2_utilization(case, params, hours, article, sources_pct):
    # 002 §1.2: U = 6·P·2e12 / (312e12 · 3600 · GPU-hours)
    exact = Fraction(6 * params * 2 * 10**12, 312 * 10**12 * 3600 * hours)
    assert example(case).exact() == exact
    assert f"{float(exact) * 100:.1f}" == sources_pct
    assert example(case).claimed == article
    assert abs(exact - article) < Fraction(1, 1000)  # 002 truncates 40.57 % to 40.5 %


def test_s17_flops_and_gpu_hours_slips():
    refutations = {o.label: o for o in derivation_of("cluster.gpu_hours").check() if o.claim == "refutes"}
    assert len(refutations) == 3 and all(o.ok for o in refutations.values())  # C, GPU-hours, days
    # 002 §1.1: C = 6 × 3.4e10 × 5e9 printed as 1.02e22; it is 1.02e21 (ten times less).
    flops = 6 * 34 * 10**9 * 5 * 10**9
    assert flops == 102 * 10**19
    assert refutations["002: C = 1.02e22"].lhs == str(102 * 10**20) and refutations["002: C = 1.02e22"].rhs == str(flops)
    # 002 §1.2.2: GPU-hours at 312 TFLOPS × 0.35 printed as 27700; the correct C gives 2595.
    hours = Fraction(flops, 312 * 10**12 * Fraction(35, 100) * 3600)
    assert example("S17").exact() == hours
    assert round(float(hours)) == 2595  # SOURCES.md exact column
    assert example("S17").claimed == 27700 and example("S17").slip
    assert refutations["S17: 27700 GPU-hours"].rhs == str(sp.Rational(hours.numerator, hours.denominator))


def test_gpus_and_utilization_are_solved_not_restated():
    for formula_id in ("cluster.gpus_for_deadline", "cluster.mfu", "cluster.hfu", "cluster.mfu.gpu_hours"):
        derivation = derivation_of(formula_id)
        assert any("solves" in step.why for step in derivation.steps), formula_id
        outcomes = derivation.check()
        assert outcomes and all(o.ok for o in outcomes), formula_id
    # and the solutions satisfy the equation they solve: T(n) = τ and T(U) = τ, by substitution
    training_time = get("cluster.training_time").expr
    n_, U_, tau_ = (quantity(name).symbol for name in ("n", "U", "tau"))
    assert sp.simplify(training_time.subs(n_, get("cluster.gpus_for_deadline").expr) - tau_) == 0
    assert sp.simplify(training_time.subs(U_, get("cluster.mfu").expr) - tau_) == 0


# --- the command line -------------------------------------------------------------------


def test_cli_evaluates_cluster_formulas(capsys):
    code, out, err = run(capsys, "eval", "cluster.amdahl", "f=0.0005", "n=512", "--json")
    assert code == 0 and err == "" and json.loads(out)["exact"] == "1024000/2511"
    code, out, _ = run(capsys, "eval", "cluster.training_time.recompute", "P=1e12", "D=450e9", "n=3072", "X=312e12", "U=0.5", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["unit"] == "second"
    assert Fraction(doc["exact"]) == Fraction(8 * 10**12 * 450 * 10**9 * 2, 3072 * 312 * 10**12)


@pytest.mark.parametrize("argv, fragment", [
    (["eval", "cluster.amdahl", "f=1.5", "n=512"], "at most 1"),
    (["eval", "cluster.amdahl", "f=0", "n=512"], "positive"),
    (["eval", "cluster.bubble", "p=4", "m=2.5"], "whole number"),
    (["eval", "cluster.training_time", "P=1e12", "D=4e11", "n=8", "X=3e14"], "missing"),
    (["eval", "cluster.gpu_hours", "P=1e12", "D=4e11", "X=3e14", "U=0.4", "H_gpu=3"], "does not use"),
])
def test_cli_bad_input_exits_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err
