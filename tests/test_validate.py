"""``llm-formulas validate``: published figures reproduced or explained by a proved convention.

Expected values here are the papers' printed figures or hand arithmetic written
out in the comments, never the code's own output.
"""

import dataclasses
import json

import pytest
import sympy as sp

import llm_formulas.derivations.reports.published as published
from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.published import last_digit, published_rows
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
    # Megatron's Eq. 4 (2 estimates), Chinchilla's pinned 67B row, PaLM's 529.6B for MT-NLG (2 figures)
    assert len(explained) == 11
    derivations = {d.id for d in all_derivations()}
    for row in explained.values():
        # ours does not print as the paper's figure: it lies outside half a printed digit of it
        assert abs(row["ours"] - float(row["printed"])) > float(last_digit(row["printed"])) / 2
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
    from llm_formulas.formulas.reports.footprint import DEFAULT_INTENSITY, DEFAULT_PRICE, DEFAULT_PUE, footprint

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


def rows_by_id(capsys) -> dict:
    return {row["id"]: row for row in cli_json(capsys, "validate")["rows"]}


def test_every_row_says_which_sources_confirmed_it(capsys):
    doc = cli_json(capsys, "validate")
    # the research report of issue 14: 131 of the 132 rows it checked confirmed, palm2022.compute.540B
    # (2527.2 ZFLOP) found in no source; the rows added since each name the source they were read from
    assert doc["summary"]["unverified"] == ["palm2022.compute.540B"]
    assert doc["summary"]["confirmed"] == doc["summary"]["rows"] - 1
    for row in doc["rows"]:
        assert bool(row["confirmed_by"]) != ("unverified" in row), row["id"]
    rows = {row["id"]: row for row in doc["rows"]}
    assert any("50a4b5fa02" in source for source in rows["megatron2021.t1.1T.params"]["confirmed_by"])
    assert any("841f789f48" in source for source in rows["korthikanti2022.t5.530B.hfu"]["confirmed_by"])
    assert not any("841f789f48" in source for source in rows["korthikanti2022.t4.22B.full"]["confirmed_by"])
    code, out, err = run(capsys, "validate", "--paper", "PaLM")
    assert "[unverified: no source found" in out
    assert "sources: 3 of 4 rows confirmed" in out


def test_the_reports_locator_fixes():
    rows = {row.id: row for row in published_rows()}
    # Korthikanti's "save 70% and 65% of the required memory for activations" sits in §5, not §4.2.2
    assert rows["korthikanti2022.s5.gpt3.memory_saving"].where.startswith("§5")
    # Llama 3's 3.8 × 10^25 FLOPs: §1 "Scale"
    assert rows["llama3.s3.flops"].where.startswith("§1")
    # §5.1 prints no P for the 1T model: the row reads Table 1's 1008.0B, which prints 84 days, where 1e12 gives 83.2
    assert "Table 1" in rows["megatron2021.s5.1T"].configuration
    # BLOOM's 1,082,990 GPU-hours (Luccioni et al.; the BLOOM paper §3.4.1), LLaMA Table 15's 1,082,880 noted, not used
    assert dict(rows["bloom.energy"].inputs)["H_gpu"] == 1082990 and "1,082,880" in rows["bloom.energy"].note


def test_narayanan_table2_rows_use_eq3_from_the_printed_rates(capsys):
    rows = rows_by_id(capsys)
    for key in ("ptd.175B.384", "ptd.175B.768", "zero3.530B.1120", "zero3.530B.2240"):
        assert rows[f"megatron2021.t2.{key}"]["verdict"] == "reproduced"
    # PTD-P 174.6B (l = 96, h = 12288) on 384 GPUs at 153 TFLOP/s, 300B tokens, Table 2 prints 84 days.
    # Eq. 3: 96·T·l·h²(1 + s/6h + V/16lh)/(nX) = 96·3e11·96·12288²·1.0306/(384·153e12) s = 84.75 days;
    # the printed 153 is 153 ± 0.5, and at 153.5 it is 84.47 days, which prints as 84
    assert abs(rows["megatron2021.t2.ptd.175B.384"]["ours"] - 84.75) < 0.01
    assert abs(rows["megatron2021.t2.ptd.175B.384"]["ours_range"][0] - 84.47) < 0.01
    # Eq. 4's 8TP/(nX) = 8·3e11·174.6e9/(384·153e12) s = 82.55 days: the days column is not Eq. 4
    assert abs(value("conventions.megatron.eq4", D="300e9", P="174.6e9", n=384, X_run="153e12") / 86400 - 82.55) < 0.01
    # ZeRO-3 529.6B on 2240 GPUs at 48 TFLOP/s: Eq. 3 gives 139.0 days, Table 2 prints 140 (48.5 → 137.6, 47.5 → 140.5)
    assert abs(rows["megatron2021.t2.zero3.530B.2240"]["ours"] - 139.01) < 0.01


def test_korthikanti_table4_overheads_and_table5_throughput(capsys):
    rows = rows_by_id(capsys)
    # Table 4, 22B, one layer, forward + backward against the baseline's 7.7 + 11.9 = 19.6 ms:
    # full recompute 27.2/19.6 − 1 = 38.8 % (printed 39), selective 20.9/19.6 − 1 = 6.6 % (7),
    # sequence parallelism 19.0/19.6 − 1 = −3.1 % (−3), selective + sequence parallelism 20.3/19.6 − 1 = 3.6 % (4)
    for key, by_hand in (("full", 27.2 / 19.6 - 1), ("selective", 20.9 / 19.6 - 1), ("sp", 19.0 / 19.6 - 1),
                         ("selective_sp", 20.3 / 19.6 - 1)):
        row = rows[f"korthikanti2022.t4.22B.{key}"]
        assert row["verdict"] == "reproduced" and abs(row["ours"] - 100 * by_hand) < 1e-9
    assert rows["korthikanti2022.t4.22B.sp"]["printed"] == "-3"
    # Table 5's throughput increase over full recompute: 1.42/1.10 − 1 = 29.1 % (printed 29.0: 1.425/1.095 − 1 = 30.1 %
    # and 1.415/1.105 − 1 = 28.05 % bound the printed times), 18.13/13.75 − 1 = 31.9 % (31.8), 49.05/37.83 − 1 = 29.7 %,
    # 94.42/71.49 − 1 = 32.1 %
    for model, full, present in (("22B", 1.42, 1.10), ("175B", 18.13, 13.75), ("530B", 49.05, 37.83), ("1T", 94.42, 71.49)):
        row = rows[f"korthikanti2022.t5.{model}.throughput"]
        assert row["verdict"] == "reproduced" and abs(row["ours"] - 100 * (full / present - 1)) < 1e-9
    # §6: 530B with 8-way data parallelism, 2240 GPUs, B = 2240, 39.15 s per iteration: "MFU drop from 56.0% to 54.2%".
    # 72·B·s·l·h²(1 + s/6h + V/12lh) = 72·2240·2048·105·20480²·(1 + 2048/122880 + 51200/25804800) = 1.48315e19 FLOPs
    # over 2240 · 312e12 · 39.15 s = 2.73617e19: 54.16 %
    row = rows["korthikanti2022.s6.530B.2240.mfu"]
    assert row["verdict"] == "reproduced" and abs(row["ours"] - 54.157) < 0.001


def test_palm_computes_mtnlg_with_529_6B(capsys):
    rows = rows_by_id(capsys)
    # PaLM Table 3: MT-NLG 530B on 2240 A100 (312 TFLOP/s), 65.43K tokens/s: 29.7 % without attention, 30.2 % with it.
    # 65430 · 6 · 529.6e9 / (2240 · 312e12) = 29.749 %; with 12·L·H·Q·T = 12·105·128·160·2048 = 52,848,230,400 FLOPs
    # per token more, 65430 · (3.1776e12 + 5.2848e10) / 6.9888e17 = 30.244 %. At 530B: 29.772 % and 30.266 %.
    no_attention, attention = rows["palm2022.t3.mtnlg.mfu_no_attention"], rows["palm2022.t3.mtnlg.mfu"]
    assert abs(no_attention["ours"] - 29.772) < 0.001 and abs(no_attention["paper_convention_value"] - 29.749) < 0.001
    assert abs(attention["ours"] - 30.266) < 0.001 and abs(attention["paper_convention_value"] - 30.244) < 0.001
    assert no_attention["verdict"] == attention["verdict"] == "explained"
    # the count of MT-NLG's shape by Narayanan's Eq. 2, 12lh² + 13lh + (V + s)h with l = 105, h = 20480, V = 51200,
    # s = 2048: 528,482,304,000 + 27,955,200 + 1,090,519,040 = 529,600,778,240, Table 1's 529.6B
    assert value("params.narayanan", l=105, h=20480, V=51200, s=2048) == 529_600_778_240
    derivation = next(d for d in all_derivations() if d.id == "utilization.mfu.throughput.weights")
    assert all(o.ok for o in derivation.check())
    assert valued(derivation.step("N = 530B").correct) == 529_600_778_240


def test_bloom_checkpoints_are_du_sizes_rounded_up(capsys):
    rows = rows_by_id(capsys)
    # bigscience-workshop/bigscience train/tr11-176B-ml/README.md: "each checkpoint with fp32 optim states and
    # bf16+fp32 weights is 2.3TB - just the bf16 weights are 329GB", checked there with `du -sh .` → 2.3T and
    # `du -ch mp* layer*` → 329G. 176,247,271,424 × 14 bytes = 2,467,461,799,936 B = 2.2441 TiB, which du rounds up
    # to 2.3T; × 2 bytes = 352,494,542,848 B = 328.29 GiB, rounded up 329G
    full, bf16 = rows["bigscience2022.checkpoint.full"], rows["bigscience2022.checkpoint.bf16"]
    assert full["rounding"] == bf16["rounding"] == "ceiling"
    assert abs(full["ours"] - 2.2441) < 0.0001 and abs(bf16["ours"] - 328.29) < 0.01
    assert full["verdict"] == bf16["verdict"] == "reproduced"
    # its planning estimate: Btokens=450, Bmodel=167, n_gpus=384, Tflops=150: 8·450e9·167e9/(384·150e12) s = 120.80 days
    assert rows["bigscience2022.estimate.days"]["verdict"] == "reproduced"
    assert abs(rows["bigscience2022.estimate.days"]["ours"] - 120.804) < 0.001


def test_ceiling_rounding_takes_the_digit_below_not_the_digit_above():
    row = next(r for r in published_rows() if r.id == "bigscience2022.checkpoint.full")
    assert published.judge(row).verdict == "reproduced"
    # 2.2441 TiB rounded up is 2.3: a printed 2.2 or 2.4 is not what du would print
    for wrong in ("2.2", "2.4"):
        assert published.judge(dataclasses.replace(row, printed_text=wrong)).verdict == "differs"


def test_korthikanti_table2_equals_the_catalogue():
    # Korthikanti et al. 2022 Table 2, activation memory per transformer layer in bytes, each written here as the
    # paper prints it, against the catalogue's formula for the same case
    from llm_formulas.formulas.vocabulary.symbols import a, b, h, s, t

    printed = {
        "memory.activations.layer": s * b * h * (34 + 5 * a * s / h),                              # no parallelism
        "memory.activations.layer.tp": s * b * h * (10 + 24 / t + 5 * a * s / (h * t)),            # tensor parallel
        "memory.activations.layer.tp_sp": s * b * h * (34 / t + 5 * a * s / (h * t)),              # + sequence parallel
        "memory.activations.layer.selective": s * b * h * (10 + 24 / t),                           # TP + selective recompute
        "memory.activations.layer.selective_sp": s * b * h * (34 / t),                             # TP + SP + selective
        "memory.activations.layer.full_recompute": s * b * h * 2,                                  # full recompute
    }
    for formula_id, paper in printed.items():
        assert sp.expand(get(formula_id).expr - paper) == 0, formula_id


def test_validate_reports_the_performance_model_beside_the_published_runs(capsys):
    # issue 16: each predicted run's error is in validate too; the published figures are the papers'
    # (Narayanan et al. 2021 Table 1: 163 TFLOP/s for 1T; Smith et al. 2022 §2.4: 113 TFLOP/s on 420 nodes)
    code, out, _ = run(capsys, "validate", "--json")
    predictions = json.loads(out)["predictions"]
    assert code == 0 and len(predictions["calibration"]) == 10 and len(predictions["layers"]) == 5
    by_run = {row["run"]: row for group in predictions.values() for row in group}
    assert by_run["Megatron-LM 2021 Table 1, 1008.0B"]["published"] == 163
    mtnlg = by_run["MT-NLG 530B, 420 nodes"]
    assert mtnlg["published"] == 113 and mtnlg["error"] == pytest.approx(mtnlg["predicted"] / 113 - 1, abs=1e-4)
    assert "largest bubble" in mtnlg["note"]  # a miss over 10 % says why
    code, out, _ = run(capsys, "validate", "--paper", "MT-NLG")
    assert code == 0 and "113 TFLOP/s" in out and "published step times" not in out and "sources:" not in out
    assert out.splitlines()[-1] == "validate: no published figure matches 'MT-NLG', 3 predicted runs do (above)"


def test_palm_partial_rematerialization():
    # Chowdhery et al. 2022 §4.1: MFU 46.2 %, HFU 57.8 % "which includes rematerialization FLOPs"; the share of the
    # forward those two imply, by hand: 3 × (0.578/0.462 − 1) = 0.7532 (a full recompute would be 1)
    share = value("utilization.remat_share", U="0.462", U_hw="0.578")
    assert share == sp.Rational(3) * (sp.Rational("0.578") / sp.Rational("0.462") - 1)
    assert abs(float(share) - 0.7532) < 1e-4
    # at f = 1 the HFU is 4/3 of the MFU, as full recompute's 8ΨD against 6ΨD (cluster.hfu)
    assert value("utilization.hfu.remat", U="0.45", f_remat=1) == sp.Rational("0.45") * sp.Rational(4, 3)
    assert value("utilization.hfu.remat", U="0.462", f_remat=share) == sp.Rational("0.578")
