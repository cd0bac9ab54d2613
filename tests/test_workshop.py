"""Issue 32 (the workshop), items 2-6: defects a teacher found, each read back from the surface that showed it."""

from __future__ import annotations

import pytest

from helpers import cli_json

from llm_formulas.render.cli.main import main

LLAMA_T8_P8 = ("estimate", "--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", "8", "--pp", "8", "--seq", "4096",
               "--mfu", "0.4")


def test_estimate_says_it_took_one_micro_batch_and_that_the_bubble_dominates(capsys):
    # issue 32 item 4: without --micro-batches the report took m = 1 silently ("MFU 5.1 %, 19.1 years"); at m = 1 on
    # p = 8 stages the bubble is (p − 1)/m = 7 times the compute (Narayanan et al. 2021 §2.2)
    notes = cli_json(capsys, *LLAMA_T8_P8)["notes"]
    assert any("m = 1" in note and "--micro-batches" in note for note in notes)
    assert any("m = 1 micro-batch < p = 8" in note and "700 %" in note for note in notes)
    assert main(list(LLAMA_T8_P8)) == 0
    text = capsys.readouterr().out
    assert "note: m = 1 micro-batch taken" in text


@pytest.mark.parametrize("m, warned", [("4", True), ("8", False), ("64", False)])
def test_the_bubble_note_appears_only_when_m_is_below_p(capsys, m, warned):
    # m = 4 on p = 8: (8 − 1)/4 = 175 % of the compute idles; m = p = 8 gives 7/8 = 87.5 %, no longer the majority of
    # the step by the rule m ≥ p the note asks for
    notes = cli_json(capsys, *LLAMA_T8_P8, "--micro-batches", m)["notes"]
    assert any("175 %" in note for note in notes) if warned else notes == []
