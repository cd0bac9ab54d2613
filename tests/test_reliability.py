"""Failures and checkpoints: 001's figures, and Young's interval checked against a brute-force minimum."""

import math

import sympy as sp

from llm_formulas.formulas.vocabulary.examples import example
from helpers import value

MONTH = 30 * 86400  # 001: "each card fails once a month"


def test_001_one_failure_every_20_minutes_on_2048_gpus():
    # 30 days × 86400 s / 2048 GPUs = 1265.625 s = 21.1 minutes (001: "about 20 minutes")
    assert value("reliability.cluster_mtbf", M_fail=MONTH, n=2048) == sp.Rational(1265625, 1000)
    assert example("S21").claimed == 1200


def test_001_a_10_minute_restore_loses_about_half():
    # 600 s of every 1265.625 s: 47.4 % (001: "half of the effective compute")
    share = value("reliability.restart_share", M_fail=MONTH, n=2048, R_restore=600)
    assert share == sp.Rational(600 * 2048, MONTH)
    assert abs(float(share) - 0.474) < 0.001


def test_young_interval_is_the_minimum_of_the_wasted_share():
    inputs = dict(M_fail=MONTH, n=2048, R_restore=600, delta_ckpt=60)
    optimum = float(value("reliability.young_daly", **{k: inputs[k] for k in ("M_fail", "n", "delta_ckpt")}))
    # √(2 · 60 s · 1265.625 s) = 389.7 s
    assert abs(optimum - math.sqrt(2 * 60 * 1265.625)) < 1e-9
    # brute force over a grid of intervals, independent of SymPy's solve: the waste is
    # δ/τ + (R + τ/2)/M_cluster, evaluated by hand here
    def waste(tau):
        return 60 / tau + (600 + tau / 2) / 1265.625
    best = min((waste(t / 10), t / 10) for t in range(10, 20000))
    assert abs(best[1] - optimum) < 0.1
    assert abs(float(value("reliability.wasted", tau_ckpt=optimum, **inputs)) - waste(optimum)) < 1e-12
    # goodput at the optimum: 1 − √(2·60/1265.625) − 600/1265.625 = 0.2181
    assert abs(float(value("reliability.goodput", M_fail=MONTH, n=2048, R_restore=600, delta_ckpt=60)) - (1 - waste(optimum))) < 1e-12


def test_checkpoint_size_and_write_time():
    # 70e9 parameters × (2 + 4 + 4 + 4) bytes = 980 GB; at 2 TB/s (Llama 3's sustained storage
    # throughput, §3.3.4) it takes 0.49 s
    assert value("reliability.checkpoint.size", P=70 * 10**9) == 980 * 10**9
    assert value("reliability.checkpoint.time", P=70 * 10**9, W_store=2 * 10**12) == sp.Rational(49, 100)
