"""``check``'s kept proofs and slices (issue 36, item 2): a kept proof only ever stands for a hash-equal step, a
changed formula is proved afresh (and a wrong one fails though its old proof was kept), and ``check ID`` proves
that formula's derivation with the ones it rests on, not the catalogue."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from llm_formulas.derivations.reports.catalogue import all_derivations, topic_derivations
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof_cache import ProofCache, proofs_cached
from llm_formulas.formulas.vocabulary.catalogue import catalogue
from llm_formulas.formulas.vocabulary.symbols import h, l, u_param
from llm_formulas.render.cli.main import main


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "llm-formulas" / "proofs"


@pytest.fixture
def rebuilt():
    """Derivations read the catalogue when built and are cached: rebuild them around a swapped formula."""
    for cached in (all_derivations, topic_derivations):
        cached.cache_clear()
    yield
    for cached in (all_derivations, topic_derivations):
        cached.cache_clear()


def run(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def demo() -> Derivation:
    d = Derivation("demo.square", "a square")
    d.defines("x", (h + 1) ** 2, "a square")
    d.equals("expanded", h**2 + 2 * h + 1, "the binomial", aside=True)
    return d


def test_a_kept_proof_gives_the_same_verdict_without_proving_again(tmp_path):
    with proofs_cached(tmp_path) as first:
        cold = demo().check()
    assert first.added == 1 and first.reused == 0  # one identity proved (a bare definition proves nothing)
    with proofs_cached(tmp_path) as second:
        warm = demo().check()
    assert second.reused == 1 and second.added == 0
    assert warm == cold and all(o.ok for o in warm)


def test_a_failure_is_never_kept_and_a_changed_step_is_proved_afresh(tmp_path):
    with proofs_cached(tmp_path):
        demo().check()
    wrong = Derivation("demo.square", "a square")
    wrong.defines("x", (h + 1) ** 2, "a square")
    wrong.equals("expanded", h**2 + 3 * h + 1, "a slip in the cross term", aside=True)  # same labels, other content
    for _ in range(2):
        with proofs_cached(tmp_path) as kept:
            verdicts = wrong.check()
        assert kept.reused == 0 and not verdicts[1].ok and verdicts[1].method == "counterexample"
    assert len(ProofCache(tmp_path).proved) == 1  # the slip was never kept


def test_check_id_proves_its_slice_and_what_it_rests_on(capsys, cache_home):
    code, doc = run(capsys, "params.layer")
    assert code == 0 and doc["failed"] == []
    # derivations/topics/params.py: params.layer (2 steps) sums what it reads, params.layer.attention (4 steps), .mlp (2)
    # and .norms (2), each concluded by its own derivation: 4 derivations, 10 steps, 4 units and 1 coverage check
    assert doc["derivations"] == 4 and doc["steps"] == 10 + 4 + 1
    code, whole = run(capsys, "params.total")
    rests_on = {d.id for d in all_derivations() if "params.total" in d.established}
    assert code == 0 and whole["derivations"] >= len(rests_on) + 1  # params.total reads params.layer, among others
    assert doc["derivations"] < whole["derivations"] < len(all_derivations())


def test_check_topic_and_unknown_names_are_bad_input(capsys, cache_home):
    assert main(["check", "--topic", "no_such_topic"]) == 2
    assert "unknown topic 'no_such_topic'" in capsys.readouterr().err
    assert main(["check", "params.no_such"]) == 2
    assert "unknown formula id" in capsys.readouterr().err
    code, doc = run(capsys, "--topic", "params")
    assert code == 0 and doc["failed"] == [] and doc["derivations"] >= 1


def test_a_changed_formula_is_proved_afresh_and_fails_though_its_old_proof_was_kept(capsys, monkeypatch, cache_home,
                                                                                     rebuilt):
    code, _ = run(capsys, "params.layer")
    assert code == 0 and any(cache_home.iterdir())  # proved, and kept
    code, _ = run(capsys, "params.layer")
    assert code == 0  # from the kept proofs
    entries = catalogue()
    broken = dataclasses.replace(entries["params.layer"], dimensioned=entries["params.layer"].dimensioned + h * u_param)
    monkeypatch.setitem(entries, "params.layer", broken)
    for cached in (all_derivations, topic_derivations):
        cached.cache_clear()
    code, doc = run(capsys, "params.layer")
    assert code == 1  # 12h² + 14h is not what the steps build, whatever was kept before
    # and the form it prints (its composed form, 12h² + 13h as written) no longer states what it computes
    assert [f["where"] for f in doc["failed"]] == ["params.layer step 2 (params.layer)", "composition step 1 (params.layer)"]


def test_clear_cache_and_no_cache(capsys, cache_home):
    run(capsys, "params.layer")
    assert any(cache_home.iterdir())
    assert main(["check", "--clear-cache"]) == 0
    assert "cleared the proof cache" in capsys.readouterr().out and not cache_home.exists()
    code, doc = run(capsys, "params.layer", "--no-cache")
    assert code == 0 and doc["failed"] == [] and not cache_home.exists()  # proved, nothing kept
    assert main(["check", "--clear-cache", "params.layer"]) == 2


def test_the_key_covers_every_expression_of_a_claim(tmp_path):
    # an approximation kept once must not stand for one with another condition or another dropped part
    from llm_formulas.derivations.vocabulary.proof import much_less

    def approximation(dropped_coefficient: int, condition) -> Derivation:
        d = Derivation("demo.approx", "an approximation")
        d.defines("x", 12 * l * h**2 + dropped_coefficient * l * h, "exact")
        d.approximates("x≈", 12 * l * h**2, "drop the linear term", condition=condition,
                       dropped=dropped_coefficient * l * h)
        return d

    with proofs_cached(tmp_path) as kept:
        assert all(o.ok for o in approximation(13, much_less(1, h)).check())
    assert kept.added == 1
    with proofs_cached(tmp_path) as kept:
        approximation(13, much_less(1, h)).check()
        approximation(14, much_less(1, h)).check()
        approximation(13, much_less(h, 1)).check()
    assert kept.reused == 1 and kept.added == 1  # the dropped part changed: proved; the condition reversed: fails, unkept


def test_check_module_proves_the_catalogue_entries_the_users_derivations_read(tmp_path, monkeypatch, capsys, cache_home):
    (tmp_path / "layers_of_mine.py").write_text(
        "import llm_formulas as lf\n"
        "from llm_formulas.formulas.vocabulary.symbols import h, l\n"
        "def layers():\n"
        "    d = lf.Derivation('mine.layers', 'l layers')\n"
        "    d.defines('Ψ', l * lf.get('params.layer').dimensioned, 'l layers of params.layer')\n"
        "    d.equals('expanded', l * lf.get('params.layer').dimensioned, 'the same', aside=True)\n"
        "    return d\n"
        "DERIVATIONS = [layers]\n")
    monkeypatch.chdir(tmp_path)
    code, doc = run(capsys, "--module", "layers_of_mine")
    sys.modules.pop("layers_of_mine", None)
    # the user's derivation (2 steps) and params.layer's slice: its own and its three parts' (10 steps, see above),
    # without their units and coverage (the user's module states no formula) and nothing else of the catalogue
    assert code == 0 and doc["failed"] == []
    assert doc["derivations"] == 1 + 4 and doc["steps"] == 2 + 10
