"""001's price comparison of the H100 and the RTX 4090, and its NIC count for data parallelism over PCIe.

Expected values are the article's figures (Li Bojie, 001) or the arithmetic written out in the
comments, never the code's own output.
"""

import sympy as sp

from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.formulas.vocabulary.examples import example
from helpers import cli_json, run, value


def test_value_per_dollar_is_the_price_ratio_over_the_throughput_ratio():
    # 001: the H100 sells at about $30,000 ("2000 成本的东西卖 $30000"), the 4090 at $1,600, and LambdaLabs measures the
    # H100's single-GPU training throughput at about twice the 4090's: 30000 / 1600 / 2 = 9.375, "close to 10×"
    assert value("cost.value_ratio", c_gpu=30000, c_ref=1600, x_thr=2) == sp.Rational(75, 8)
    assert example("S24").claimed == 10
    # at the $40,000 of the Microsoft/OpenAI purchase arithmetic ($40,000 × 500,000 = $20 billion): 12.5
    assert value("cost.value_ratio", c_gpu=40000, c_ref=1600, x_thr=2) == sp.Rational(25, 2)


def test_compute_and_bandwidth_ratios():
    # 001: the H100's FP16 compute "about 3×" the 4090's: 989 / 330 TFLOP/s = 2.997
    assert value("cost.compute_ratio", X=989 * 10**12, X_ref=330 * 10**12) == sp.Rational(989, 330)
    # memory bandwidth "3.35×": the H100 SXM's 3.35 TB/s over the 4090's 1008 GB/s is 3.323
    ratio = value("cost.bandwidth_ratio", W_mem="3.35e12", W_ref="1.008e12")
    assert ratio == sp.Rational(3350, 1008)
    assert example("S26").claimed == sp.Rational("3.35") and example("S26").slip
    derivation = next(d for d in all_derivations() if d.id == "cost.bandwidth_ratio")
    assert all(o.ok for o in derivation.check())


def test_break_even_rent_of_a_seven_month_payback():
    # 001: an H100 rented out at list price "pays back in about 7 months"; the text does not give the price.
    # At $30,000: 30000 / (7 × 720 h) = $5.95 per GPU-hour; at DeepSeek's $2 the payback is 30000 / 1440 = 20.8 months
    assert value("cost.breakeven_rent", c_gpu=30000, N_pay=7) == sp.Rational(30000, 7 * 720)
    assert value("cost.payback_months", c_gpu=30000, c_rent=sp.Rational(30000, 7 * 720)) == 7
    assert example("S27").claimed is None


def test_nic_exchange_time_and_count():
    # 001: 80 stages of ~1B parameters, each GPU sends 4 GB of fp32 gradients and receives the averages (2 × 4 GB);
    # 8 GPUs a machine share its NICs, ConnectX-6 at 200 Gb/s = 25 GB/s. With 8 NICs: 8 × 8 GB / (8 × 25 GB/s) = 0.32 s
    nic = dict(g_node=8, P=10**9, W_nic=25 * 10**9)
    assert value("comms.nic.time", k_nic=8, **nic) == sp.Rational(32, 100)
    # under 1 s: 64 GB / (25 GB/s × 1 s) = 2.56 NICs, so 3 whole ones, not the article's 8
    assert value("comms.nic.count", tau=1, **nic) == sp.Rational(256, 100)
    assert value("comms.nic.time", k_nic=3, **nic) < 1 < value("comms.nic.time", k_nic=2, **nic)
    # at PCIe Gen4 x16's pace (32 GB/s one way: 8 GB in 0.25 s) it takes 10.24 NICs; 8 carry 200 of the 256 GB/s
    assert value("comms.nic.count", tau=sp.Rational(1, 4), **nic) == sp.Rational(1024, 100)
    assert example("S29").claimed == 8 and example("S30").claimed == 8
    derivation = next(d for d in all_derivations() if d.id == "comms.nic.count")
    assert all(o.ok for o in derivation.check())
    assert any(step.claim == "refutes" for step in derivation.steps)


def test_usable_from_eval(capsys):
    doc = cli_json(capsys, "eval", "comms.nic.count", "g_node=8", "P=1B", "tau=1", "W_nic=25e9")
    assert doc["value"] == 2.56
    code, out, err = run(capsys, "eval", "cost.value_ratio", "c_gpu=30000", "c_ref=1600", "x_thr=2")
    assert code == 0 and "9.375" in out
    code, out, err = run(capsys, "eval", "comms.nic.time", "g_node=8", "P=1B", "k_nic=0", "W_nic=25e9")
    assert code == 2 and "must be positive" in err and err.count("\n") == 1
