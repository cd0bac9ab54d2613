"""The sizing page's serving view in a real headless Chromium: for a model, a GPU and a layout given in its URL (and
its own batch and request), every figure it shows equals ``formulas.serving_report.report`` evaluated exactly in
Python (the report ``llm-formulas serve`` prints) to 1e-9 relative; FP8 on a GPU without FP8 tensor cores is refused.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest
from build_session import calculator
from test_html_browser import CHROMIUM, chromium

from llm_formulas.formulas.estimate import model_values
from llm_formulas.formulas.gpus import PRESETS
from llm_formulas.formulas.presets import preset
from llm_formulas.formulas.serving_report import ServeInputs, report
from llm_formulas.render.documents.calculator import SERVING_DEFAULTS

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium")


class _Serving(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, str] = {}
        self.verdict: dict[str, str] = {}
        self.ready = False
        self._verdict = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "output" and "data-serve-report" in attrs:
            self.figures[attrs["data-serve-report"]] = attrs.get("data-value", "")
        if tag == "body" and attrs.get("data-serving") == "1":
            self.ready = True
        if attrs.get("id") == "serve-verdict":
            self.verdict = dict(attrs)
            self._verdict = True

    def handle_data(self, data):
        if self._verdict:
            self.verdict["text"] = self.verdict.get("text", "") + data

    def handle_endtag(self, tag):
        self._verdict = False


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page ``llm-formulas build`` writes (the run's one build, shared with tests/test_html_browser.py), copied."""
    path = tmp_path_factory.mktemp("calculator") / "calculator.html"
    path.write_text(calculator().read_text(encoding="utf-8"), encoding="utf-8")
    return path


def served(page, query: dict, script: str = "") -> _Serving:
    if script:  # a choice the URL does not carry, made before the view computes
        text = page.read_text(encoding="utf-8").replace("for (const kind of [\"input\", \"change\"]) document.addEventListener",
                                                         script + "\n  for (const kind of [\"input\", \"change\"]) document.addEventListener")
        page = page.with_name("scripted.html")
        page.write_text(text, encoding="utf-8")
    parsed = _Serving()
    parsed.feed(chromium(page.as_uri() + "?" + urlencode(query), "--dump-dom"))
    assert parsed.ready
    return parsed


CASES = [  # model preset, GPU preset, the page's layout fields; the view's batch and request are its defaults
    ("mixtral-8x7b", "a100-80gb", {"t": "2", "p": "2"}),  # MoE, two stages
    ("deepseek-v3", "h200", {"t": "8", "p": "1"}),  # MLA and MoE
]


@pytest.mark.parametrize("model, gpu, layout", CASES, ids=[case[0] for case in CASES])
def test_the_serving_view_equals_the_python_report(page, model, gpu, layout):
    chosen = preset(model)
    shown = served(page, {"model": chosen.title, "gpu": PRESETS[gpu].name, **layout})
    b, s_in, s_out = (int(SERVING_DEFAULTS[name]) for name in ("b", "s_in", "s_out"))
    doc = report(int(layout["t"]), int(layout["p"]), 1, 1, b, s_in, s_out,
                 ServeInputs(model_values(chosen.architecture.values), PRESETS[gpu]))
    flat = {"memory.max_batch": doc["memory"]["max_batch"], "memory.max_context": doc["memory"]["max_context"]}
    flat |= {key: doc[key] for key in ("ttft_seconds", "tpot_seconds", "e2e_seconds", "output_tokens_per_second",
                                       "output_tokens_per_second_per_gpu", "output_tokens_per_second_per_user",
                                       "decode_bytes_per_step")}
    if "dollars_per_million_output_tokens" in doc:
        flat["dollars_per_million_output_tokens"] = doc["dollars_per_million_output_tokens"]
    for key, want in flat.items():
        got = float(shown.figures[key])
        assert got == pytest.approx(float(want), rel=1e-9), key
    assert shown.verdict["data-fits"] == ("1" if bool(doc["memory"]["fits"]) else "0")


def test_fp8_on_an_a100_is_refused_and_a_batch_too_large_does_not_fit(page):
    choose = 'document.getElementById("serve-weights").value = "fp8";'
    shown = served(page, {"model": preset("llama2-7b").title, "gpu": PRESETS["a100-80gb"].name, "t": "1", "p": "1"}, choose)
    assert "no FP8 tensor cores" in shown.verdict["text"] and shown.figures["tpot_seconds"] == ""
    big = 'document.querySelector(\'input[data-serve="b"]\').value = "4096";'
    shown = served(page, {"model": preset("llama2-70b").title, "gpu": PRESETS["h100-sxm"].name, "t": "8", "p": "1"}, big)
    assert shown.verdict["data-fits"] == "0" and re.search(r"DOES NOT FIT: needs .* missing", shown.verdict["text"])
