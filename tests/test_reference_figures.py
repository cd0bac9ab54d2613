"""The reference shows its plots beside their formulas, and worked examples in human units."""

from __future__ import annotations

import re
from fractions import Fraction

from build_session import built
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.symbols import quantity
from llm_formulas.render.documents.plots import MEMORY_SCENARIO, PLOTS


def test_memory_plot_crosses_the_80_gb_line():
    # 13B with LLaMA-13B's shape (h = 5120, 40 heads, 40 layers), s = 2048, t = 8, p = 1, by hand:
    # states 16 B × 13e9 / 8 = 26 GB; activations per sequence s·h·l·(10 + 24/t + 5as/(ht)) = 2048·5120·40·23 bytes.
    states = 16 * 13 * 10**9 // 8
    per_sequence = 2048 * 5120 * 40 * (10 + 3 + 10)
    assert states == 26 * 10**9 and per_sequence == 9_646_899_200
    values = {quantity(name).symbol: Fraction(value) for name, value in MEMORY_SCENARIO.items()}
    total = get("memory.per_gpu").expr.subs(values)
    at = {b: total.subs(quantity("b").symbol, b) for b in (1, 5, 6, 12)}
    assert at[5] == states + 5 * per_sequence and at[1] < 80 * 10**9  # the smallest micro-batch fits
    assert at[5] <= 80 * 10**9 < at[6] and at[12] > 80 * 10**9  # A100 80 GB: b = 5 fits, b = 6 does not


def test_html_embeds_each_plot_beside_its_formula():
    html = (built().out / "reference.html").read_text()
    for name, (needed, _draw, _caption) in PLOTS.items():
        anchor = needed[0].replace(".", "-").replace("_", "-")
        article = re.search(rf'<article class="formula" id="{anchor}">(.*?)</article>', html, flags=re.S)
        assert article, needed[0]
        assert f'<figure class="plot" id="plot-{name}">' in article.group(1) and "<svg" in article.group(1)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))  # four inline SVGs, no id twice


def test_pdf_source_includes_each_plot():
    tex = (built().out / "reference.tex").read_text()
    for name in PLOTS:
        assert rf"\includegraphics[width=0.85\linewidth]{{plots/{name}.pdf}}" in tex
        assert (built().out / "plots" / f"{name}.pdf").read_bytes().startswith(b"%PDF-")


def test_worked_examples_read_in_human_units():
    md = (built().out / "reference.md").read_text()
    # S19, BLOOM-176B: 3 × forward with the logits = 35,457,188,411,473,920 FLOP (SOURCES.md: 35.46 PFLOP)
    assert "gives **35.5 PFLOP**" in md and "exactly 35,457,188,411,473,920 FLOP" in md
    # S2: 8 × 1e12 × 450e9 / (3072 × 312e12 × 0.5) s = 86.94 days (SOURCES.md)
    assert "gives **86.9 days**" in md
    assert not re.search(r"gives \*\*[\d,]{9,}", md)  # no bare base-unit integer as the headline figure
