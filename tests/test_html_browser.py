"""The HTML reference and the calculator in a real headless Chromium (Debian's /usr/bin/chromium).

The reference: the text a reader sees (``document.body.innerText``) holds no TeX
source, every <math> element is laid out with a size, and a screenshot is taken.
The calculator: for three layouts (and models, GPUs, hand-set inputs) given in
its URL, every number it shows equals the Python evaluation of the catalogue's
SymPy expression to 1e-12 relative.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
from html.parser import HTMLParser
from urllib.parse import urlencode

import pytest
import sympy as sp

from build_session import built, scratch
from formulas.catalogue import all_formulas
from formulas.symbols import constant_values, quantity
from render.documents.defaults import GPUS, LAYOUTS, MODELS, default

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif((CHROMIUM is None) and not os.environ.get("CI"), reason="needs a Chromium (CI installs Debian's chromium)")
RTOL = 1e-12


def chromium(url: str, *extra: str) -> str:
    profile = scratch("chromium-profile")
    command = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        *extra, url,
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    return run.stdout


PROBE = """
<script>
window.addEventListener("load", function () {
  const maths = Array.from(document.querySelectorAll("math"));
  const laidOut = maths.filter(function (m) { const r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
  const mathml = maths.filter(function (m) { return m.namespaceURI === "http://www.w3.org/1998/Math/MathML"; });
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({text: document.body.innerText, maths: maths.length, laidOut: laidOut.length, mathml: mathml.length});
  document.documentElement.appendChild(probe);
});
</script>
"""


def _probe(dom: str) -> dict:
    match = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S)
    assert match, "the probe script did not run"
    text = match.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(text)


def test_reference_renders_math_not_tex_source():
    page = (built().out / "reference.html").read_text()
    probed = scratch("probe") / "reference.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    seen = _probe(chromium(probed.as_uri(), "--dump-dom"))
    assert seen["maths"] > len(all_formulas())
    assert seen["mathml"] == seen["maths"] and seen["laidOut"] == seen["maths"]
    text = seen["text"]
    assert not re.search(r"\\[A-Za-z]+", text), re.search(r".{40}\\[A-Za-z]+.{40}", text, flags=re.S)
    assert "$$" not in text and "\\frac" not in text
    for formula in all_formulas()[:5]:
        assert formula.id in text


def test_screenshot_of_the_reference(tmp_path):
    shot = scratch("screenshots") / "reference.png"
    chromium((built().out / "reference.html").as_uri(), f"--screenshot={shot}", "--window-size=1280,1600")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a page of text and math, not a blank frame


# --- the calculator ------------------------------------------------------------------


class _Outputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self.ready = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "output" and "data-formula" in attrs:
            self.values[attrs["data-formula"]] = attrs.get("data-value", "")
        if tag == "body" and attrs.get("data-ready") == "1":
            self.ready = True


def _preset(presets, name: str):
    return next(p for p in presets if p.name == name)


CASES = [
    (MODELS[0].name, GPUS[0].name, LAYOUTS[0].name, {}),
    (MODELS[-1].name, GPUS[-1].name, LAYOUTS[1].name, {"D": "1.4e12", "U": "0.38"}),
    (MODELS[1].name, GPUS[3].name, LAYOUTS[2].name, {"b": "4", "s": "4096", "q": "4", "r": "0.25"}),
]


def expected_inputs(model: str, gpu: str, layout: str, overrides: dict[str, str]) -> dict[sp.Symbol, sp.Rational]:
    """What the page should hold: defaults, then the model, GPU and layout presets, then the URL's values."""
    values: dict[str, sp.Rational] = {}
    for formula in all_formulas():
        for symbol in formula.inputs:
            values[symbol.name] = default(symbol).value
    for preset in (_preset(MODELS, model), _preset(GPUS, gpu), _preset(LAYOUTS, layout)):
        values.update({k: sp.Rational(v) for k, v in preset.values.items() if k in values})
    values.update({k: sp.Rational(v) for k, v in overrides.items()})
    symbols = {quantity(name).symbol: value for name, value in values.items()}
    ids = {f.id: f for f in all_formulas()}  # the page derives Ψ from the shape, preferring the general decoder count
    total = ids.get("params.decoder.total") or ids["params.total"]
    symbols[quantity("P").symbol] = total.expr.subs(constant_values()).subs(symbols)
    return symbols


@pytest.mark.parametrize("model, gpu, layout, overrides", CASES, ids=["default", "last-model", "third-layout"])
def test_calculator_numbers_equal_python(model, gpu, layout, overrides):
    query = urlencode({"model": model, "gpu": gpu, "layout": layout, **overrides})
    page = _Outputs()
    page.feed(chromium((built().out / "calculator.html").as_uri() + "?" + query, "--dump-dom"))
    assert page.ready
    values = expected_inputs(model, gpu, layout, overrides)
    compared = 0
    for formula in all_formulas():
        shown = page.values[formula.id]
        exact = formula.expr.subs(constant_values()).subs(values)
        if not exact.is_finite:
            assert shown in ("", "NaN", "Infinity", "-Infinity"), formula.id
            continue
        want = float(exact)
        got = float(shown)
        assert abs(got - want) <= RTOL * abs(want), f"{formula.id}: page {got}, python {want}"
        compared += 1
    assert compared >= len(all_formulas()) - 5
