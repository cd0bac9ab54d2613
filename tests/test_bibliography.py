"""The reference cites real works: no internal file name, a References section, arXiv ids, working links."""

from __future__ import annotations

import re

import pytest

from llm_formulas.formulas.vocabulary.bibliography import WORKS, Source, work
from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.symbols import all_quantities
from build_session import built

FILE_NAME = re.compile(r"\d{3}_[0-9a-f]{16}\.txt|DESIGN\.md|SOURCES\.md|PITFALLS\.md")
OUTPUTS = ("reference.md", "reference.html", "reference.tex")

# arXiv ids of papers the catalogue cites, from each paper's arXiv page.
ARXIV = {
    "2104.04473": "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
    "2205.05198": "Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models",
    "1910.02054": "Rajbhandari et al. 2020, ZeRO",
    "2101.06840": "Ren et al. 2021, ZeRO-Offload",
    "2205.14135": "Dao et al. 2022, FlashAttention",
    "2001.08361": "Kaplan et al. 2020, Scaling Laws for Neural Language Models",
    "2002.05202": "Shazeer 2020, GLU Variants Improve Transformer",
    "2305.13245": "Ainslie et al. 2023, GQA",
    "2101.03961": "Fedus et al. 2021, Switch Transformers",
}


@pytest.mark.parametrize("name", OUTPUTS)
def test_no_internal_file_name_in_the_reference(name):
    text = (built().out / name).read_text()
    assert FILE_NAME.findall(text) == []


@pytest.mark.parametrize("name", OUTPUTS)
def test_reference_has_references_with_arxiv_ids(name):
    text = (built().out / name).read_text()
    assert re.search(r"^## References$|<h2>References</h2>|\\section\{References\}", text, re.M)
    for arxiv in ARXIV:
        assert f"arXiv:{arxiv}" in text, ARXIV[arxiv]


def test_seeds_cited_by_author_title_and_date():
    # SOURCES.md, "Bibliography of the seeds"
    text = (built().out / "reference.md").read_text()
    assert "郁晨 (Yu Chen)" in text and "2024-07-30" in text and "万字长文解析：大模型需要怎样的硬件算力" in text
    assert "李博杰 (Li Bojie)" in text and "Training large models: why the A100 beats the 4090" in text
    assert "李威 (Li Wei)" in text and "chapter 9" in text


def test_citations_link_to_their_entry():
    html = (built().out / "reference.html").read_text()
    tex = (built().out / "reference.tex").read_text()
    md = (built().out / "reference.md").read_text()
    for key in {s.ref for f in all_formulas() for s in f.sources}:
        anchor = work(key).anchor  # an alias key (deepseek2024v3) names the same entry
        assert f'href="#{anchor}"' in html and f'id="{anchor}"' in html
        assert rf"\hyperlink{{{anchor}}}" in tex and rf"\hypertarget{{{anchor}}}" in tex
        assert f"](#{anchor})" in md and f'<a id="{anchor}"></a>' in md
    assert "[Narayanan et al. 2021](#ref-narayanan2021), §5.1" in md


def test_every_source_and_symbol_cites_a_known_work():
    assert all(isinstance(q.source, Source) for q in all_quantities())
    with pytest.raises(KeyError):
        Source("000_c9822ae60dc20d6b.txt")
    assert str(Source("000", "§3.1")) == "Yu 2024 (000), §3.1"
