"""The reference as a site (OUT/reference/, render/documents/reference_site.py; issue 31 item 4).

In a real headless Chromium at 1280 × 800 (tests/site_probe.py): the index, a topic page and a family page load and lay
out their questions and equations (the seconds each took are printed, not asserted: tests/benchmarks/bench_reference_site.py
measures them), no page scrolls sideways, and the search box, typed into, finds ``kv cache``, ``12lh``, ``Mixtral``
and ``TTFT``. Without a browser: every formula sits at an anchor that is its id, every link between pages lands on
an anchor that exists, a formula's parts and "used by" are each other's inverse, each family's page holds its forms
proved and evaluated, and nothing is fetched from a network.
"""

from __future__ import annotations

import html
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from build_session import reference_site, scratch
from llm_formulas.derivations.data.family_forms import FORMULAS, families_with_forms
from llm_formulas.formulas.vocabulary.catalogue import all_formulas, get
from llm_formulas.formulas.vocabulary.symbols import quantity
from llm_formulas.render.documents.notebooks import LESSONS
from llm_formulas.render.documents.reference import topic_of
from llm_formulas.render.printers.mathml import expr_mathml, fragment_mathml
from site_probe import CHROMIUM, load, widths

browser = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="needs a Chromium (CI installs Debian's chromium)")
QUERIES = ("kv cache", "12lh", "Mixtral", "TTFT", "Ψ_emb")


class _Page(HTMLParser):
    """The ids a page defines, the links it holds, the articles (formula id → its text, its links) and the scripts and
    styles it loads."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.loads: list[str] = []
        self.articles: dict[str, str] = {}
        self.article_links: dict[str, list[str]] = {}
        self._article: str | None = None
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
            if self._article:
                self.article_links[self._article].append(attrs["href"])
        if tag in ("script", "link", "img", "iframe") and (attrs.get("src") or attrs.get("href")):
            self.loads.append(attrs.get("src") or attrs.get("href"))
        if tag == "article":
            self._article, self._depth = attrs["id"], 0
            self.articles[self._article] = ""
            self.article_links[self._article] = []
        if self._article and tag == "article":
            self._depth += 1

    def handle_endtag(self, tag):
        if tag == "article" and self._article:
            self._depth -= 1
            if self._depth == 0:
                self._article = None

    def handle_data(self, data):
        if self._article:
            self.articles[self._article] += data


def _pages() -> dict[str, _Page]:
    pages = {}
    for path in sorted(reference_site().glob("*.html")):
        page = _Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path.name] = page
    return pages


def test_every_formula_sits_at_its_id_on_its_topic_page():
    pages = _pages()
    for formula in all_formulas():
        page = pages[topic_of(formula.id) + ".html"]
        assert page.ids.count(formula.id) == 1, formula.id
    assert all(len(page.ids) == len(set(page.ids)) for page in pages.values())  # an anchor names one place


def test_every_link_lands_on_an_anchor_and_nothing_comes_from_a_network():
    pages = _pages()
    followed = 0
    for name, page in pages.items():
        for target in page.links:
            if target.startswith(("http://", "https://")):
                continue  # a source's own address, for a reader to follow; the site itself loads nothing from it
            if target.startswith("../"):  # the calculator, the guide, a lesson's slides: other stages write them beside the site
                lesson = re.fullmatch(r"\.\./slides/([a-z0-9_]+)\.html", target)
                assert (lesson[1] in LESSONS) if lesson else target in ("../calculator.html", "../guide.html"), f"{name}: {target}"
                continue
            file, _, anchor = target.partition("#")
            landing = pages[file or name] if (file or name).endswith(".html") else None
            assert landing is not None, f"{name}: {target}"
            assert not anchor or anchor in landing.ids, f"{name}: {target}"
            followed += 1
        assert all(not re.match(r"[a-z]+:", loaded) and (reference_site() / loaded).is_file() for loaded in page.loads), page.loads
    assert followed > len(all_formulas())


def test_a_formula_shows_its_parts_its_users_and_its_sources():
    pages = _pages()
    params = pages["params.html"]
    total = params.articles["params.decoder.total"]
    # formulas/topics/architecture.py writes the decoder's count as embeddings + l_attn·attention + ... + head
    for part in ("params.decoder.embeddings", "params.decoder.attention", "params.decoder.head"):
        assert part in total
        assert "params.decoder.total" in params.articles[part]  # its "used by" names the whole
    # params.total is Narayanan et al. 2021's count (Efficient Large-Scale Language Model Training on GPU Clusters)
    narayanan = params.articles["params.total"]
    assert "Narayanan" in narayanan and "2021" in narayanan and "GPU Clusters" in narayanan
    # the parameters lesson reads 12·l·h² (render/documents/lessons/params.py: F.value("rule", "params.approx"))
    assert "../slides/params.html" in params.article_links["params.approx"]
    # links cross pages: serving's decoding step names the decoder's MLP FLOPs (formulas/topics/serving.py), and the
    # FLOPs page links back to it under "used by"
    assert "flops.html#flops.decoder.mlp" in pages["serving.html"].links
    assert "serving.html#serving.decode.flops.linear" in pages["flops.html"].links


def test_composed_form_prints_parts_by_their_symbols_and_no_latex_command_as_text():
    printed = expr_mathml(get("params.decoder.total").composed)
    assert "<mi>params." not in printed  # old: a part printed as its id, <mi>params.decoder.embeddings</mi>
    assert "<mi>emb</mi>" in printed  # Ψ_emb
    # l_∅mix (layers without a mixer): \varnothing printed as the word "varnothing" before
    assert expr_mathml(quantity("l_noattn").symbol) == "<msub><mi>l</mi><mrow><mi>&#8709;</mi><mi>mix</mi></mrow></msub>"
    everything = "".join(expr_mathml(f.composed) for f in all_formulas())
    assert not re.search(r"<mi>[a-z]{4,}[a-z_]*\.[a-z_.]+</mi>", everything)  # no part anywhere printed as its id


def test_the_index_lists_each_topics_questions():
    pages = _pages()
    index = pages["index.html"]
    topics = {topic_of(f.id) for f in all_formulas()}
    assert {f"{topic}.html" for topic in topics} <= set(index.links)
    answers = [link for link in index.links if "#" in link]
    assert len(answers) >= 2 * len(topics)  # two questions a topic at least, each linked to the formula answering it
    for topic in topics:  # each topic's questions are answered on its own page
        card = re.search(rf'<section class="topic-card" id="{topic}">(.*?)</section>',
                         (reference_site() / "index.html").read_text(encoding="utf-8"), flags=re.S)
        answered_on = re.findall(r'href="([a-z_]+)\.html#', card.group(1)) if card else []
        assert len(answered_on) >= 2 and set(answered_on) == {topic}, topic


@browser
def test_index_topic_and_family_pages_load_and_lay_out_in_chromium():
    work = scratch("site-load")
    index = load(reference_site(), "index.html", work)
    assert index["questions"] >= 30  # laid out: the questions are there at the load event
    topic = load(reference_site(), "memory.html", work)  # the largest topic page
    memory_formulas = sum(1 for f in all_formulas() if topic_of(f.id) == "memory")
    assert topic["maths"] >= memory_formulas
    width, height = topic["firstMath"]
    assert width > 100 and height > 8  # the first equation laid out as MathML, a line of it at least
    family = load(reference_site(), "family-llama.html", work)
    width, height = family["firstMath"]
    assert width > 100 and height > 8 and family["maths"] >= 5  # Llama's five forms, laid out
    print(f"\nChromium load at 1280x800: index.html {index['loaded']:.0f} ms, memory.html {topic['loaded']:.0f} ms, "
          f"family-llama.html {family['loaded']:.0f} ms")


@browser
def test_no_page_scrolls_sideways_at_1280():
    pages = sorted(path.name for path in reference_site().glob("*.html"))
    seen = widths(reference_site(), pages, scratch("site-widths"))
    assert set(seen) == set(pages)
    wide = {page: w for page, w in seen.items() if w["scroll"] > w["client"]}
    assert not wide, wide


@browser
def test_search_box_finds_the_readers_queries():
    found = load(reference_site(), "params.html", scratch("site-search"), QUERIES)["search"]
    # the KV cache's own formulas first: memory.kv_cache (2·l·g·d_head·s·b·q) and its per-token form
    assert found["kv cache"][:2] and all("kv_cache" in result for result in found["kv cache"][:3]), found["kv cache"]
    # 12·l·h² is the classic count of a GPT's parameters (Kaplan et al. 2020, Narayanan et al. 2021): its leading term first
    assert found["12lh"][0] == "params.approx" and "params.total" in found["12lh"][:3], found["12lh"]
    # Mixtral's own forms first (its family page), then every formula whose meaning, notes or derivation says Mixtral
    mixtral = [result for result in found["Mixtral"] if result.startswith("families.mixtral.")]
    assert len(mixtral) == len(FORMULAS) and found["Mixtral"][:len(FORMULAS)] == mixtral, found["Mixtral"]
    assert len(found["Mixtral"]) > len(FORMULAS)
    for result in found["Mixtral"][len(FORMULAS):]:
        formula = get(result)
        from llm_formulas.derivations.reports.catalogue import derivation_of

        derivation = derivation_of(result)
        text = " ".join([formula.meaning, formula.notes, *(step.why for step in (derivation.steps if derivation else []))])
        assert "mixtral" in text.lower(), result
    # time to first token: serving's chunked-prefill TTFT
    assert found["TTFT"][0] == "serving.chunked.ttft", found["TTFT"]
    # a symbol as printed: Ψ_emb is the embeddings' own symbol (formulas/topics/architecture.py), then the formulas using it
    assert found["Ψ_emb"][0] == "params.decoder.embeddings", found["Ψ_emb"]


def test_a_long_composed_form_is_set_over_lines_that_keep_every_part():
    from llm_formulas.render.documents.reference_site import composed_mathml

    total = get("params.decoder.total")
    printed = html.unescape(composed_mathml(total))  # the printer writes Ψ as &#936;
    assert printed.count("<mtr>") >= 2  # Ψ = Ψ_attn·l_attn + … on one line would run past a 1280 px column
    for part in total.parts:  # each of the 14 parts still named on some line, by its symbol (Ψ_S6 for Mamba)
        assert fragment_mathml(get(part).symbol_latex) in printed, part
    # a product wider than a line opens its sum: 2bs·( the MLA projections' terms ), the bracket closed on the last line
    mla = composed_mathml(get("flops.decoder.attention.projections.mla"))
    rows = re.findall(r"<mtr>.*?</mtr>", mla)
    assert len(rows) >= 2 and "<mo>(</mo>" in rows[0] and rows[-1].endswith("<mo>)</mo></mrow></mtd></mtr>")
    assert "<mtable>" not in composed_mathml(get("params.approx"))  # 12lh² fits a line


def test_a_page_per_family_holds_its_forms_proved_and_evaluated():
    pages = _pages()
    index = pages["index.html"]
    for family in families_with_forms():
        page = pages[f"family-{family}.html"]
        assert f"family-{family}.html" in index.links
        for formula_id in FORMULAS:  # each form at the id of the derivation that proves it, linked to its general formula
            anchor = f"families.{family}.{formula_id}"
            assert f"{topic_of(formula_id)}.html#{formula_id}" in page.article_links[anchor]
            assert "proved in llm-formulas check" in page.articles[anchor] and "NOT proved" not in page.articles[anchor]
    # Llama-2 7B has 6,738,415,616 parameters (transformers' LlamaForCausalLM(config).num_parameters(); Meta's "7B")
    llama = (reference_site() / "family-llama.html").read_text(encoding="utf-8")
    total = re.search(r'<article class="formula" id="families.llama.params.decoder.total">.*?</article>', llama, flags=re.S)
    assert total and "Llama-2 7B" in total.group(0) and 'title="exactly 6,738,415,616 parameter' in total.group(0)
    assert "6.74B parameters" in total.group(0)


def test_a_worked_example_names_the_inputs_it_was_evaluated_at():
    # SOURCES.md S19 (the BLOOM slides): flops.training at B = 16, s = 2048, l = 70, h = 14336, V = 250880, 35.46 PFLOP
    flops = _pages()["flops.html"].articles["flops.training"]
    example = flops[flops.index("Worked example S19"):]
    example = example[:example.index("PFLOP") + len("PFLOP")]
    for shown in ("2,048", "70", "14,336", "250,880"):
        assert f"= {shown}" in example, (shown, example)
    # 35,460,… TFLOP exactly (the slides' note: "the training step with the logits is 35.46 PFLOP"), shown to 3 digits
    assert "35.5 PFLOP" in example
