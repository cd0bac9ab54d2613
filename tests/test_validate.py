"""``llm-formulas validate``: published figures reproduced or explained by a proved convention.

Expected values here are the papers' printed figures or hand arithmetic written
out in the comments, never the code's own output.
"""

import dataclasses

import sympy as sp

import derivations.published as published
from derivations.catalogue import all_derivations
from formulas.published import last_digit, published_rows
from helpers import cli_json, run, value

PAPERS = ("Narayanan", "Korthikanti", "ZeRO", "Kaplan", "Chinchilla", "PaLM", "Llama 2", "BLOOM", "DeepSeek-V3", "Llama 3")


def test_every_row_is_reproduced_or_explained(capsys):
    code, out, err = run(capsys, "validate")
    assert code == 0, out[-2000:]
    assert "0 differ" in out.splitlines()[-1]
    doc = cli_json(capsys, "validate")
    assert doc["summary"]["rows"] >= 80
    assert doc["summary"]["differs"] == 0
    papers = " ".join(row["paper"] for row in doc["rows"])
    for paper in PAPERS:
        assert paper in papers, paper


def test_explained_rows_differ_and_the_papers_convention_reproduces_them(capsys):
    doc = cli_json(capsys, "validate")
    explained = {row["id"]: row for row in doc["rows"] if row["verdict"] == "explained"}
    # the conventions the issue names: Korthikanti's Eq. 8 (4 HFU figures and 2 overheads),
    # Megatron's Eq. 4 (2 estimates), Chinchilla's pinned 67B row
    assert len(explained) == 9
    derivations = {d.id for d in all_derivations()}
    for row in explained.values():
        assert abs(row["relative_difference"]) > 0.005  # ours is visibly not the printed figure
        assert row["derivation"] in derivations and row["cause"]
    # Korthikanti Table 5, 22B: HFU 43.7 % printed. Physically the hardware runs
    # 72Bslh²(1 + s/6h + V/12lh) + 4Bs²hl; with B=4 s=2048 l=48 h=6144 V=51200 that is
    # 1.14357e15 + 4·4·2048²·6144·48 = 1.14357e15 + 0.01979e15 = 1.16336e15 over
    # 1.10 s × 8 × 312e12 = 2.7456e15: 42.37 %.
    assert abs(explained["korthikanti2022.t5.22B.hfu"]["ours"] - 42.37) < 0.01
    # GPT-3 175B on 1024 GPUs at 140 TFLOP/s: 8·300e9·175e9/(1024·140e12) s = 33.9 days (Eq. 4, printed 34)
    assert round(explained["megatron2021.s5.gpt3"]["paper_convention_value"]) == 34
    # Chinchilla 67B: 6 · 67e9 · 1.5e12 = 6.03e23 against the printed 5.76e23
    assert explained["hoffmann2022.t3.67B"]["ours"] == 603 * 10**21


def test_a_wrong_printed_value_is_an_unexplained_difference(capsys, monkeypatch):
    rows = list(published_rows())
    # ZeRO Figure 1 prints 120 GB for 16 × 7.5e9 bytes; 121 cannot be reproduced
    rows[[r.id for r in rows].index("zero2020.f1.baseline")] = dataclasses.replace(
        next(r for r in rows if r.id == "zero2020.f1.baseline"), printed_text="121")
    monkeypatch.setattr(published, "published_rows", lambda: tuple(rows))
    code, out, err = run(capsys, "validate")
    assert code == 1
    assert "zero2020.f1.baseline  paper 121 GB  ours 120" in out
    assert out.splitlines()[-1].endswith("1 differ")


def test_a_convention_that_does_not_reproduce_is_not_an_explanation(monkeypatch):
    row = next(r for r in published_rows() if r.id == "korthikanti2022.t5.22B.hfu")
    # the same row with the physical count as "the paper's formula" explains nothing
    bogus = dataclasses.replace(row, explanation=dataclasses.replace(row.explanation, formula="utilization.hfu.selective"))
    assert published.judge(bogus).verdict == "differs"


def test_printed_precision_is_the_last_printed_digit():
    assert last_digit("1.88") == sp.Rational(1, 100)
    assert last_digit("8.64e19") == 10**17
    assert last_digit("2664") == 1
    assert last_digit("3.64e3") == 10


def test_measured_inputs_carry_their_printed_precision():
    # Megatron Table 1, 76.1B: 140 TFLOP/s × 1024 GPUs = 143.36 PF/s, printed 143.8: the
    # printed rate is 140 ± 0.5, and 140.5 × 1024 = 143.87 PF/s covers 143.8
    row = next(r for r in published_rows() if r.id == "megatron2021.t1.76.1B.aggregate")
    verdict = published.judge(row)
    assert verdict.verdict == "reproduced"
    assert verdict.ours.low == sp.Rational(1395, 10) * 10**12 * 1024
    assert verdict.ours.high == sp.Rational(1405, 10) * 10**12 * 1024


def test_energy_and_emissions_reproduce_llama2():
    # Llama 2 7B: 184320 GPU-hours × 0.4 kW = 73728 kWh; × PUE 1.1 = 81100.8 kWh;
    # × 0.385 kg/kWh = 31223.808 kg (printed 31.22 t)
    assert value("energy.emissions", H_gpu=184320, W_gpu=400, PUE="1.1", I_co2=385) == 31223808
    # one PF-day: 10^15 × 24 × 3600 = 8.64e19 FLOPs (Kaplan et al. 2020 §1.3)
    assert value("energy.pf_day") == 864 * 10**17
    # DeepSeek-V3: 2788K H800 GPU-hours at $2 = $5.576M
    assert value("cost.training", H_gpu=2788000, c_rent=2) == 5576000


def test_the_new_derivations_are_proved():
    for derivation in all_derivations():
        if derivation.id.split(".")[0] in ("utilization", "conventions", "energy", "cost"):
            failed = [o.describe() for o in derivation.check() if not o.ok]
            assert not failed, failed


def test_estimate_reports_the_footprint_with_cited_defaults(capsys):
    from formulas.footprint import DEFAULT_INTENSITY, DEFAULT_PRICE, DEFAULT_PUE, footprint

    # Llama 2 70B's 1,720,320 A100 GPU-hours at 400 W, PUE 1.1, 385 g/kWh:
    # 1720320 × 0.4 kW × 1.1 × 385 g = 291,422,208 g (Llama 2 Table 2: 291.42 tCO2eq)
    doc = footprint(sp.Rational(1720320, 24), 1, sp.Integer(400), DEFAULT_PUE, DEFAULT_INTENSITY, DEFAULT_PRICE)
    assert doc["emissions_grams"] == 291_422_208
    assert doc["energy_joules"] == 1720320 * 400 * 3600 * sp.Rational(11, 10)
    assert doc["cost_dollars"] == 2 * 1720320
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "h100-sxm", "--seq", "4096", "--achieved", "395.8")
    # --achieved 395.8 TFLOP/s on an H100 SXM (989.5 dense): U = 0.4 exactly
    assert report["assumptions"]["U"] == 0.4
    assert report["footprint"]["board_watts"] == 700


def test_chinchilla_counts_the_embedding_and_the_softmax():
    # Chinchilla Appendix F, Chinchilla 70B's shape (h = 8192, l = 80, a = 64, V = 32000, s = 2048),
    # its terms written out: embeddings 2·s·V·h; per layer KQV 2·3·s·h·h, KQ logits 2·s·s·h,
    # softmax 3·a·s·s, softmax@V 2·s·s·h, projection 2·s·h·h, MLP 2·s·(h·4h·2); logits 2·s·h·V
    s_, V_, h_, a_, l_ = 2048, 32000, 8192, 64, 80
    layer = 2 * 3 * s_ * h_ * h_ + 2 * s_ * s_ * h_ + 3 * a_ * s_ * s_ + 2 * s_ * s_ * h_ + 2 * s_ * h_ * h_ + 2 * s_ * h_ * 4 * h_ * 2
    by_hand = 2 * s_ * V_ * h_ + l_ * layer + 2 * s_ * h_ * V_
    assert value("conventions.chinchilla.forward", s=s_, V=V_, h=h_, a=a_, l=l_) == by_hand
    gemms = value("flops.forward", b=1, s=s_, V=V_, h=h_, l=l_)
    # the two refinements: the embedding matmul and 3 FLOPs per softmax entry, 0.41 % of the GEMMs here
    assert by_hand - gemms == 2 * s_ * V_ * h_ + 3 * a_ * s_ * s_ * l_
    assert 0.0041 < (by_hand - gemms) / gemms < 0.0042
