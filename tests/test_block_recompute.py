"""Block recompute (``estimate --recompute full --recompute-layers K``): K of each chunk's layers recomputed in full.

Megatron-LM's ``--recompute-method block --recompute-num-layers K`` (megatron/core/transformer/transformer_block.py,
``_checkpointed_forward``): the first K layers of each model chunk run their forward again in the backward and keep
only their input, the other layers keep everything. The expectations come from the two whole-model reports it
mixes (recompute full and recompute none of the same layout), never from the mixed path itself.
"""

import pytest

from helpers import cli_json, run, value

LAYOUT = ["--model", "gpt3-175b", "--gpu", "a100-80gb", "--tp", "8", "--pp", "4", "--dp", "2", "--global-batch", "64",
          "--seq", "2048"]
CHUNK = 96 // 4  # GPT-3 175B's 96 layers over p = 4 stages, v = 1


def _report(capsys, *extra):
    return cli_json(capsys, "estimate", *LAYOUT, *extra)


@pytest.mark.parametrize("mode", [[], ["--mfu", "0.45"]], ids=["predicted", "given-mfu"])
def test_all_layers_of_a_chunk_is_full_recompute(capsys, mode):
    full = _report(capsys, "--recompute", "full", *mode)
    block = _report(capsys, "--recompute", "full", "--recompute-layers", str(CHUNK), *mode)
    assert block["memory"]["activations"] == full["memory"]["activations"]
    assert block["flops"]["recomputed"] == full["flops"]["recomputed"] > 0
    assert block["time"]["step_seconds"] == pytest.approx(full["time"]["step_seconds"], rel=1e-12)
    assert block["time"]["hfu"] == pytest.approx(full["time"]["hfu"], rel=1e-12)


def test_no_layer_of_a_chunk_is_no_recompute(capsys):
    none = _report(capsys, "--recompute", "none")
    block = _report(capsys, "--recompute", "full", "--recompute-layers", "0")
    assert block["memory"]["activations"] == none["memory"]["activations"]
    assert block["flops"]["recomputed"] == 0
    assert block["time"]["step_seconds"] == pytest.approx(none["time"]["step_seconds"], rel=1e-12)
    assert block["time"]["mfu"] == pytest.approx(none["time"]["mfu"], rel=1e-12)


def test_a_block_mixes_the_two_layer_by_layer(capsys):
    k = 6  # a quarter of each stage's 24 layers
    full, none = _report(capsys, "--recompute", "full"), _report(capsys, "--recompute", "none")
    block = _report(capsys, "--recompute", "full", "--recompute-layers", str(k))
    share = k / CHUNK
    # the first stage's memory is the sum over its layers: k at full recompute's bytes, the rest at no recompute's,
    # for each of the p micro-batches in flight, and once the one layer the backward rebuilds (issue 25), which full
    # recompute holds and no recompute does not: full = p(L·f + E) + (n − f), none = p(L·n + E), so the rebuilt
    # layer's n − f is (none − full)/(p·L − 1), and the block holds it whole where the mix holds its share
    in_flight = 4  # 1F1B's first stage: p = 4 micro-batches (m = 32 ≥ p)
    rebuilt = (none["memory"]["activations"] - full["memory"]["activations"]) / (in_flight * CHUNK - 1)
    assert block["memory"]["activations"] == pytest.approx(
        share * full["memory"]["activations"] + (1 - share) * none["memory"]["activations"] + (1 - share) * rebuilt, rel=1e-12)
    assert block["flops"]["recomputed"] == share * full["flops"]["recomputed"]
    # every stage sum of the performance model is linear in the layers recomputed; the DP all-reduce it hides
    # behind the last backward is not, so the step lies between the two, not on their line
    assert none["time"]["step_seconds"] < block["time"]["step_seconds"] < full["time"]["step_seconds"]
    slot = block["time"]["predicted"]
    layers_share = share * (full["time"]["predicted"]["compute_seconds"] - none["time"]["predicted"]["compute_seconds"])
    assert slot["compute_seconds"] == pytest.approx(none["time"]["predicted"]["compute_seconds"] + layers_share, rel=1e-9)


def test_palms_partial_rematerialization_is_a_block(capsys):
    # Chowdhery et al. 2022 (PaLM) §4.1: HFU = MFU·(1 + f/3) for a share f of the forward rematerialized
    # (utilization.hfu.remat). A block of 18 of 24 layers is f = 3/4, about PaLM's 0.753 (46.2 % MFU, 57.8 % HFU);
    # the report counts the layers' forward only (not the logits'), so its HFU sits just below the formula's
    report = _report(capsys, "--recompute", "full", "--recompute-layers", "18", "--mfu", "0.462")
    formula = float(value("utilization.hfu.remat", U=0.462, f_remat=0.75))
    assert formula == pytest.approx(0.462 * 1.25)
    assert 0.99 * formula < report["time"]["hfu"] < formula


@pytest.mark.parametrize("extra, words", [
    (["--recompute", "full", "--recompute-layers", "25"], "between 0 and the 24 layers of a chunk"),
    (["--recompute", "full", "--recompute-layers", "-1"], "whole number"),
    (["--recompute", "full", "--recompute-layers", "2.5"], "whole number"),
    (["--recompute", "full", "--recompute-layers", "all"], "not a number"),
    (["--recompute", "selective", "--recompute-layers", "4"], "needs recompute full"),
    (["--recompute", "full", "--recompute-layers", "4", "--stages", "20,24,24,28"], "not both"),
])
def test_a_block_that_cannot_exist_is_one_line(capsys, extra, words):
    code, out, err = run(capsys, "estimate", *LAYOUT, *extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err


def test_a_published_layout_refuses_a_block(capsys):
    code, out, err = run(capsys, "estimate", "--model", "bloom-176b", "--layout", "bloom-176b", "--gpu", "a100-80gb",
                         "--seq", "2048", "--recompute-layers", "2")
    assert code == 2 and out == "" and err.count("\n") == 1 and "drop --recompute-layers" in err
