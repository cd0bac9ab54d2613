"""``check --mutations``: every one-place change of a formula makes some proof or unit check fail.

The whole run (11,165 mutants: symbols of one unit are swapped along a chain, not every pair) is
``llm-formulas check --mutations``, which CI runs (.ci/run); here a random sample runs, and the machinery is shown to
report a survivor when nothing pins a formula.
"""

import json
import random
from collections import Counter

from llm_formulas.derivations.reports.mutations import Mutant, chosen, kill, mutants_of, run
from llm_formulas.formulas.vocabulary.catalogue import all_formulas, catalogue, get
from llm_formulas.formulas.vocabulary.symbols import h, quantity, u_param
from helpers import run as run_cli


def test_every_kind_of_change_is_made():
    changes = [m.change for m in mutants_of(get("params.total"))]  # (l(12h² + 13h) + Vh + sh + 2h)·u_param
    assert "coefficient 12 → 13 in 12*h**2" in changes
    assert "exponent h**2 → power 3" in changes
    assert any(c.startswith("drop term V*h") for c in changes)
    assert "swap V and h" in changes and "swap l and s" in changes
    # the unit mark is a constant, never swapped; symbols of different units are never swapped
    assert not [c for c in changes if "u_param" in c.split(" of ")[0]]
    assert not [c for c in mutants_of(get("cluster.training_time")) if c.change == "swap D and P"]


def test_symbols_of_one_unit_are_swapped_along_a_chain_not_every_pair():
    # params.total's inputs V, h, l, s are all counts (unit 1): in name order (capitals first) the chain V–h, h–l,
    # l–s, three swaps, where every pair made six (V–l, V–s and h–s too)
    swaps = sorted(m.change for m in mutants_of(get("params.total")) if m.change.startswith("swap"))
    assert swaps == ["swap V and h", "swap h and l", "swap l and s"]
    # the largest family formula: one swap per symbol but one of each unit, every symbol in some swap
    formula = get("params.decoder.total")
    inputs = [symbol for symbol in formula.dimensioned.free_symbols if not quantity(symbol).is_constant]
    units = {str(quantity(symbol).unit) for symbol in inputs}
    swapped = [m.swap for m in mutants_of(formula) if m.swap is not None]
    assert len(swapped) == len(inputs) - len(units)
    assert {symbol for pair in swapped for symbol in pair} == {s for s in inputs
                                                               if sum(str(quantity(t).unit) == str(quantity(s).unit) for t in inputs) > 1}


def test_every_formula_with_two_inputs_of_one_unit_still_has_a_swap():
    for formula in all_formulas():
        units = [str(quantity(symbol).unit) for symbol in formula.dimensioned.free_symbols
                 if not quantity(symbol).is_constant]
        if len(units) > len(set(units)):  # some pair shares a unit: the old every-pair list swapped it
            assert any(m.swap is not None for m in mutants_of(formula)), formula.id


def test_a_sample_of_mutants_is_all_killed_by_proofs_and_unit_checks():
    report = run(sample=25, seed=2025)  # a sample of 25; the grown catalogue (2026-12, 454 formulas) draws two equivalent
    assert len(report.verdicts) >= 23  # a change SymPy proves equivalent is not counted as a mutant
    assert report.survivors == [], report.text()
    assert {v.killed_by.split(" ")[0] for v in report.verdicts} - {"unit"}  # proofs do most of the killing


def test_a_unit_change_is_killed_by_the_unit_check():
    mutant = Mutant("params.layer", "demo", get("params.layer").dimensioned / u_param)  # a pure number declared in parameters
    assert kill(mutant, [], random.Random(1)).startswith("unit check")


def test_a_formula_no_derivation_pins_survives():
    # the same formula with its concluding derivation taken away: the change goes unnoticed, and is reported
    entry = catalogue()["params.layer"]
    mutant = Mutant("params.layer", "coefficient 13 → 14", (12 * h**2 + 14 * h) * u_param)
    assert kill(mutant, [], random.Random(1)) is None
    assert catalogue()["params.layer"] is entry  # the catalogue is restored after each mutant


def test_the_command_prints_the_rate_and_json(capsys):
    code, out, err = run_cli(capsys, "check", "--mutations", "--sample", "6", "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert set(doc) == {"mutants", "killed", "survivors"} and doc["killed"] == doc["mutants"] >= 5
    code, out, _ = run_cli(capsys, "check", "--mutations", "--sample", "3")
    assert code == 0 and "killed (100.0 %), 0 survived" in out
    code, _, err = run_cli(capsys, "check", "--mutations", "--sample", "0")
    assert code == 2 and "--sample" in err
    code, _, err = run_cli(capsys, "check", "--mutations", "--workers", "0")
    assert code == 2 and "--workers" in err
    code, _, err = run_cli(capsys, "check", "--mutations", "--per-formula", "0")
    assert code == 2 and "--per-formula" in err


def test_a_cap_per_formula_still_tries_every_formula():
    # CI's run: every formula mutated at a few random places, the big family sums (2,350 mutants of
    # params.stage.first) no more than the small ones; the same seed picks the same mutants
    capped = chosen(per_formula=3)
    counts = Counter(m.formula_id for m in capped)
    whole = {f.id: len(mutants_of(f)) for f in all_formulas()}
    assert set(counts) == {fid for fid, n in whole.items() if n}
    assert all(counts[fid] == min(3, n) for fid, n in whole.items() if n)
    assert [m.change for m in chosen(per_formula=3)] == [m.change for m in capped]


def test_workers_give_the_same_verdicts():
    alone, shared = run(sample=6, seed=5), run(sample=6, seed=5, workers=2)
    assert [(v.mutant.change, v.killed_by) for v in alone.verdicts] == [(v.mutant.change, v.killed_by) for v in shared.verdicts]
