"""The sizing page never shows a wrong verdict (issue 27, items 1-4 and 11), in a real headless Chromium.

Every input the page reads is held to estimate's rules: the command line's number grammar, each symbol's
assumptions, the shared bounds (formulas/vocabulary/bounds.py), the model's rules, the layout's, the values a select or a
checkbox can hold; any finite figure is formatted (exponent notation far from 1); every condition the folded
catalogue shows is checked; an assumed U whose recomputation needs more than the peak is refused. The words
are the command line's (each compared with the Python function that states it), and a fuzz of random URL
states (LLM_FORMULAS_FUZZ=long for thousands) agrees with the command line's rules on every verdict.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from urllib.parse import urlencode

import pytest

from page_harness import CHROMIUM, fuzz, states
from page_oracle import expected, model_names, page_fields

pytestmark = pytest.mark.skipif((CHROMIUM is None) and not os.environ.get("CI"), reason="needs a Chromium (CI installs Debian's chromium)")
VERDICTS = ("fits: ", "does not fit: needs ", "invalid input", "invalid layout")


def _message(call) -> str:
    """The one line the command line's own rule says."""
    from llm_formulas.render.cli.numbers import InputError

    with pytest.raises(InputError) as raised:
        call()
    return str(raised.value)


ITEM_QUERIES: list[str] = []  # every URL the tests below read, loaded in one browser run (the fixture ``page``)


def queries(*items: str) -> list[str]:
    ITEM_QUERIES.extend(item for item in items if item not in ITEM_QUERIES)
    return list(items)


@pytest.fixture(scope="module")
def page() -> dict[str, dict]:
    return dict(zip(ITEM_QUERIES, states(ITEM_QUERIES)))


def assert_readable(row: dict) -> None:
    assert "error" not in row and row["ready"] == "1", row  # the script ran to its end: nothing threw
    assert row["verdict"].startswith(VERDICTS), row["verdict"]
    assert not row["unreadable"], (row["unreadable"], row["verdict"], row["reason"])


def test_the_pages_script_holds_no_python_literal():
    # SymPy 1.14's jscode writes Python's True and False: in the page a ReferenceError that left every layout of one
    # pipeline stage (p = 1) without a verdict
    import re

    from build_session import built

    html = (built().out / "calculator.html").read_text()
    scripts = "\n".join(re.findall(r"<script>(.*?)</script>", html, flags=re.S))
    code = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', scripts)  # string literals (meanings, sources) say what they like
    assert len(scripts) > 100_000 and re.findall(r"\b(?:True|False|None)\b", code) == []


# --- item 1: any finite number is formatted; the grammar's range refuses the rest -----------------------------


REFUSED = queries("U=1e-101", "X=1e-300", "W_mem=1e-300", "network=1e-300", "s=1e308", "v=1e300")
SHOWN = queries("U=1e-100", "X=1e-100", "network=1e-100", "W_link=1e-100")  # within the grammar: finite figures


def test_extreme_values_are_refused_by_the_grammar_or_shown_in_exponent_notation(page):
    # U=1e-101 threw "toFixed() digits argument must be between 0 and 100" in significant(): verdict "—", state
    # unsaved, stale figures below; the same for X=1e-300, W_mem=1e-300, network=1e-300, s=1e308, v=1e300
    rows = [page[query] for query in REFUSED + SHOWN]
    refused, shown = REFUSED, SHOWN
    for query, row in zip(refused, rows):
        assert_readable(row)
        name, text = query.split("=")
        assert row["verdict"] == "invalid input" and row["reason"] == f"{name}: '{text}' is out of range", row["reason"]
        assert f"{name}={text}" in row["state"]  # the state is saved as given
    for query, row in zip(shown, rows[len(refused):]):
        assert_readable(row)
        assert row["verdict"].startswith(("fits: ", "does not fit: ")), (query, row["verdict"], row["reason"])
        assert all(text != "—" for text, _ in row["figures"].values()), (query, row["figures"])
    assert "e+" in rows[len(refused)]["figures"]["time.training_days"][0]  # U = 1e-100: some 1e+100 years


# --- item 2: every input the report reads, the model's shape included, under estimate's rules -------------------


MODEL_CASES = [  # each was computed into "does not fit: needs — of 80 GB", or P = "Infinity" and "0 tokens/s"
    ("V", "0"), ("d_ff", "abc"), ("d_head", "0"), ("k", "0"), ("E", "abc"), ("g", "1e300"), ("g", "5e99"),
]


MODEL_QUERIES = queries(*(urlencode({name: text}) for name, text in MODEL_CASES), "g=7", "l=20000", "k=2")


def test_model_shape_inputs_are_validated_in_the_command_lines_words(page):
    from llm_formulas.formulas.vocabulary.bounds import model_violation
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.cli.inputs import check_value, parse_number
    from page_oracle import Expected

    rows = [page[query] for query in MODEL_QUERIES]
    for (name, text), row in zip(MODEL_CASES, rows):
        assert_readable(row)
        assert row["verdict"] == "invalid input", (name, text, row["verdict"])
        if name == "g" and text == "5e99":  # within the grammar, beyond a model's sizes
            want = model_violation({n: 1 for n in model_names()} | {"a": 96, "g": 5 * 10**99, "E": 1, "k": 1, "l": 96})
        else:
            want = _message(lambda: check_value(quantity(name), parse_number(text, name)))
        assert row["reason"] == want, (row["reason"], want)
    gpt3 = {n: 1 for n in model_names()} | {"a": 96, "g": 96, "E": 1, "k": 1, "l": 96}
    for row, change in zip(rows[len(MODEL_CASES):], ({"g": 7}, {"l": 20000}, {"k": 2})):
        assert row["verdict"] == "invalid input" and row["reason"] == model_violation(gpt3 | change), row["reason"]
    assert expected("g=7") == Expected("invalid input")  # the oracle of the fuzz below agrees


def test_the_page_validates_every_input_its_report_reads():
    import re

    from build_session import built
    from llm_formulas.render.documents.calculator import report_inputs as page_report_inputs
    from page_oracle import report_inputs

    # what the generated estimate_report(given) reads: one `const NAME = given["NAME"];` per input it was traced with
    # (the serving view's serving_report(given) reads its own: tests/test_html_serving.py)
    from llm_formulas.render.documents.calculator import PAGE_FRAMEWORKS

    page = (built().out / "calculator.html").read_text()
    for index, _ in enumerate(PAGE_FRAMEWORKS):  # one traced report per framework the page prices
        estimate_report = page[page.index(f"function estimate_report_{index}(given) {{"):]
        estimate_report = estimate_report[:estimate_report.index("\n}\n")]
        traced = tuple(re.findall(r'const (\w+) = given\["\1"\];', estimate_report))
        # the default's report reads every input; another framework's may read fewer (no MTP modules built: no n_mtp)
        read = set(page_report_inputs(traced))
        assert len(traced) > 50 and (set(report_inputs()) == read if index == 0 else read <= set(report_inputs()))
    assert set(report_inputs()) >= {"B", "V", "d_ff", "d_head", "k", "E", "g"}
    assert "m" not in report_inputs()  # m = B/(b·d) follows the layout


# --- item 3: a select holds one of its options, or the page says which value it could not take ----------------


SELECT_CASES = {"recompute=bogus": ("recompute", "recompute must be one of none, selective, full, got 'bogus'"),
                "zero=7": ("zero", "ZeRO stage must be one of 0, 1, 2, 3, got '7'"),
                "units=x": ("units", "units must be one of GB, GiB, got 'x'"),
                "model=GPT-5": ("model", "unknown model 'GPT-5': pick one of the list"),
                "sp=yes": (None, "sp must be 0 or 1, got 'yes'")}
queries(*SELECT_CASES)


def test_select_and_checkbox_values_the_page_cannot_hold_are_named_and_kept(page):
    from llm_formulas.formulas.reports.estimate import Layout, layout_violation

    cases = SELECT_CASES
    for query, (select, why) in cases.items():
        row = page[query]
        assert_readable(row)
        assert row["verdict"] == "invalid input" and row["reason"] == why, (query, row["reason"])
        assert query in row["state"]  # the URL keeps what it said (it was rewritten to recompute=)
        if select is not None:
            assert row["selects"][select] == ["", True], row["selects"]  # blank and marked, never computed with mode −1
    # estimate's own rule says the same of a recompute mode it does not know
    bad = Layout(n=1, t=1, p=1, d=1, b=1, m=1, s=1, recompute="bogus")
    assert layout_violation(bad, {"a": 1, "g": 1, "l": 1, "E": 1}) == cases["recompute=bogus"][1]


# --- item 4: every condition the page shows is checked, constants valued -----------------------------------


TINY_GPU = queries("M_gpu=0.000001")[0]


def test_every_condition_of_the_catalogue_is_checked_on_the_page(page):
    from llm_formulas.derivations.vocabulary.proof import valued
    from llm_formulas.formulas.vocabulary.catalogue import all_formulas

    inputs = set(page_fields())
    unchecked = [(f.id, c.text) for f in all_formulas() for c in f.conditions if c.predicate is not None
                 and not {s.name for s in valued(c.predicate).free_symbols} <= inputs]
    assert unchecked == []  # memory.max_micro_batch's names q_bf16, q_fp32: constants, now valued
    row = page[TINY_GPU]
    assert_readable(row)
    # 16Ψ/(t·p) bytes of states on a GPU of 1000 bytes: "-1 sequence" was shown without a word
    assert "requires the model states fit" in row["warnings"]["memory.max_micro_batch"]


# --- item 11 (the page): U = 1 with recomputation is above the GPU's peak ---------------------------------------


HFU_QUERIES = queries("U=1&framework=default&recompute=selective", "U=1&recompute=none&framework=default")


def test_an_hfu_above_the_peak_is_refused_not_shown(page):
    import sympy as sp

    from llm_formulas.formulas.reports.estimate import Inputs, Layout, estimate, model_values
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.data.presets import preset
    from llm_formulas.render.cli.estimate_command import floor_significant, peak_violation
    from llm_formulas.render.printers.human import significant

    on, off = (page[query] for query in HFU_QUERIES)  # the default: GPT-3 175B, t=8 p=8 d=16, selective recompute
    model = model_values(preset("gpt3-175b").architecture.values)
    layout = Layout(n=1024, t=8, p=8, d=16, b=1, m=96, s=2048, recompute="selective")
    report = estimate(layout, Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9,
                                     tokens=300 * 10**9, utilization=sp.Integer(1), overlap=sp.Rational(1, 2)))
    hfu = float(report["time"]["hfu"])
    assert hfu > 1  # 101 % was shown
    assert on["verdict"] == "invalid input"
    assert on["reason"] == peak_violation(hfu, "U = 1", f"U = {significant(floor_significant(1 / hfu))}")
    assert_readable(off)
    assert off["figures"]["time.hfu"][0] == "100 %"  # no recomputation: the peak itself, not above it


# --- the page's words are the command line's --------------------------------------------------------------------


GRAMMAR = [("U", "1/2/3"), ("U", "1/0"), ("s", "1e101"), ("t", "abc"), ("U", "1k"), ("h", "7" * 120), ("b", "\x1b[31m1"),
           ("B", "it's"), ("D", "１２"), ("X", "0x10"), ("W_mem", "Infinity"), ("s", " 4096.5 "), ("h", "1e-100")]


LAYOUT_BOUNDS = [("t", "20000000"), ("B", "1e8")]
WORD_QUERIES = queries(*(urlencode({name: text}) for name, text in GRAMMAR + LAYOUT_BOUNDS), "t=1000&p=1000&d=100&B=100000")


def test_the_pages_words_are_the_command_lines(page):
    from llm_formulas.formulas.vocabulary.bounds import bound_violation
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.cli.inputs import check_value, counts, parse_count, parse_number

    def cli(name: str, text: str) -> str:
        entry = quantity(name)
        scale = int(page_fields()[name].get("data-scale") or 1)
        if name in ("t", "p", "d", "b", "B", "v", "s"):
            return _message(lambda: parse_count(text, name))
        return _message(lambda: check_value(entry, parse_number(text, name, suffix_allowed=counts(entry)) * scale))

    rows = [page[query] for query in WORD_QUERIES]
    for (name, text), row in zip(GRAMMAR + LAYOUT_BOUNDS, rows):
        assert_readable(row)
        assert row["verdict"] == "invalid input" and row["reason"] == cli(name, text), (name, text, row["reason"])
    assert rows[-1]["reason"] == bound_violation("n", 10**8)


SUFFIXED_U = queries("U=1k")[0]


def test_a_suffix_on_u_says_what_the_command_line_says(page):
    row = page[SUFFIXED_U]
    assert row["verdict"] == "invalid input" and row["reason"] == "U: a k/M/B/T suffix is for counts, not for U ('1k')"


# --- the fuzz: random URL states, each judged by the command line's rules ------------------------------------

FUZZ_CASES = 5000 if os.environ.get("LLM_FORMULAS_FUZZ") == "long" else 300
ODD = ["", "0", "-1", "abc", " 7 ", "1/3", "1/0", "1/2/3", "0x10", "Infinity", "NaN", "1e", ".", "+", "１２", "١٢", "7B", "2T",
       "1k", "1e-100", "1e100", "1e-101", "1e101", "1e300", "1e-300", "1e308", "4096.0000000000000001", "1_000", "\x1b[2J",
       "a\nb", "'", "9" * 120, "1e7", "1e8", "2147483648", "10001", "3.5", "2e9", "\ufeff8", "\xa08"]


def _random_query(rng: random.Random, names: dict[str, list[str]]) -> str:
    """A URL state: presets (now and then a name no preset has), settings (now and then a value no select holds),
    a valid layout or a broken one, and random inputs set to plausible or hostile values."""
    from page_oracle import _presets

    presets = _presets()
    query: dict[str, str] = {}
    for kind in ("model", "gpu", "layout"):
        if rng.random() < 0.8:
            query[kind] = rng.choice(list(presets[kind + "s"])) if rng.random() < 0.92 else rng.choice(["GPT-5", "", "a100"])
    for key, options in (("zero", "0123"), ("recompute", ["none", "selective", "full"]), ("units", ["GB", "GiB"]),
                         ("sp", "01"), ("flash", "01"), ("derive-P", "01")):
        if rng.random() < 0.4:
            query[key] = rng.choice(list(options)) if rng.random() < 0.9 else rng.choice(["bogus", "-1", "", "7", "yes"])
    if rng.random() < 0.3:
        query["network"] = rng.choice(["25", "50", "400", "0.5"] * 4 + ODD)
    if rng.random() < 0.7:  # a layout that may well be valid
        t, p, d, b = rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4, 8, 16, 64]), rng.choice([1, 2, 4])
        query |= {"t": str(t), "p": str(p), "d": str(d), "b": str(b), "B": str(b * d * rng.choice([1, 2, 8, 32])),
                  "v": rng.choice(["1", "1", "2"]), "s": rng.choice(["512", "2048", "4096", "32768"])}
    for _ in range(rng.choice([0, 0, 0, 1, 1, 2, 4])):
        name = rng.choice(list(names))
        query[name] = rng.choice(names[name]) if rng.random() < 0.7 else rng.choice(ODD)
    return urlencode(query)


def _plausible() -> dict[str, list[str]]:
    """Per input the report reads, values within estimate's rules (from the presets, doubled, halved)."""
    from page_oracle import GPU_NAMES, LAYOUT_NAMES, _presets

    values: dict[str, set[str]] = {}
    for table in _presets().values():
        for preset in table.values():
            for name, value in preset["values"].items():
                values.setdefault(name, set()).add(value)
    names = [*model_names(), *GPU_NAMES, "D", "U", "r", *LAYOUT_NAMES]
    extra = {"U": ["0.3", "0.5", "1", "1/3"], "r": ["0", "0.25", "1"], "D": ["1", "2T", "300B", "1e100"]}
    return {name: sorted(values.get(name, set()) | set(extra.get(name, []))) or ["1"] for name in names}


def test_random_url_states_never_show_a_wrong_verdict():
    rng = random.Random(20271127)
    names = _plausible()
    queries = [_random_query(rng, names) for _ in range(FUZZ_CASES)]
    started = time.perf_counter()
    rows = fuzz(queries)
    browser_seconds = time.perf_counter() - started
    outcomes, wrong = Counter(), []
    for query, row in zip(queries, rows):
        assert_readable(row)
        want = expected(query)
        got = next(kind for kind in ("fits", "does not fit", "invalid input", "invalid layout") if row["verdict"].startswith(kind))
        outcomes[got] += 1
        if got != want.verdict and got not in want.either:
            wrong.append((query, row["verdict"], row["reason"], want))
        elif got in ("fits", "does not fit") and want.total is not None:
            assert float(row["total"]) == pytest.approx(want.total, rel=1e-9), (query, row["total"], want)
    print(f"\npage fuzz: {len(queries)} URL states in {browser_seconds:.1f} s: {dict(outcomes)}")
    assert wrong == [], wrong[:5]
    assert len(rows) == len(queries) and all(outcomes[v] for v in ("fits", "does not fit", "invalid input", "invalid layout"))
