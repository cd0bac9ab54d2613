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
from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity
from llm_formulas.render.documents.defaults import GPUS, LAYOUTS, MODELS, default

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
        self.typed: dict[str, str] = {}  # what each input field holds once the page has run (data-typed)
        self.units: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "output" and "data-formula" in attrs:
            self.values[attrs["data-formula"]] = attrs.get("data-value", "")
        if tag == "body" and attrs.get("data-ready") == "1":
            self.ready = True
        if tag == "input" and "data-symbol" in attrs and "data-typed" in attrs:
            self.typed.setdefault(attrs["data-symbol"], attrs["data-typed"])
            self.units.setdefault(attrs["data-symbol"], attrs.get("data-typed-unit", ""))


def _preset(presets, name: str):
    return next(p for p in presets if p.name == name)


CASES = [
    (MODELS[0].name, GPUS[0].name, LAYOUTS[0].name, {}),
    (MODELS[-1].name, GPUS[-1].name, LAYOUTS[1].name, {"D": "1.4e12", "U": "0.38"}),
    (MODELS[1].name, GPUS[3].name, LAYOUTS[2].name, {"b": "2", "B": "2544", "s": "4096", "q": "4", "r": "0.25"}),
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
    values["n"] = values["t"] * values["p"] * values["d"]  # the page's n and m follow the layout
    values["m"] = values["B"] / (values["b"] * values["d"])
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
        exact = formula.expr.xreplace(values)  # exact: every input is a number (xreplace, not the slow subs)
        if not exact.is_finite:
            assert shown in ("", "NaN", "Infinity", "-Infinity"), formula.id
            continue
        want = float(exact)
        got = float(shown)
        assert abs(got - want) <= RTOL * abs(want), f"{formula.id}: page {got}, python {want}"
        compared += 1
    assert compared >= len(all_formulas()) - 5


# --- the sizing report at the top of the calculator -----------------------------------


class _Sizing(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.figures: dict[str, str] = {}
        self.verdict: dict[str, str] = {}
        self.text: list[str] = []
        self.state = ""
        self.shown: dict[tuple[str, str], str] = {}
        self._in = None
        self._output = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("output", "span") and "data-report" in attrs:
            self.figures[attrs["data-report"]] = attrs.get("data-value", "")
        if tag == "output" and "data-report" in attrs:
            self._output = (attrs["data-report"], attrs["data-unit"])
            self.shown[self._output] = ""
        if tag == "body":
            self.state = attrs.get("data-state", "")
        if attrs.get("id") in ("verdict", "reason"):
            self.verdict |= {f"{attrs['id']}.{key}": value for key, value in attrs.items()}
            self._in = attrs["id"]

    def handle_data(self, data):
        if self._output:
            self.shown[self._output] += data
        if self._in:
            self.verdict[f"{self._in}.text"] = self.verdict.get(f"{self._in}.text", "") + data

    def handle_endtag(self, tag):
        if tag == "div":
            self._in = None
        if tag == "output":
            self._output = None


SIZING = [  # model, GPU, estimate's options; the page gets the same through its URL
    ("llama2-70b", "a100-80gb", dict(tp=8, pp=4, dp=2, micro_batch=1, global_batch=32, seq=4096, interleave=1, zero=0,
                                     recompute="selective", sp=False, flash=False)),
    ("gpt3-175b", "a100-40gb", dict(tp=8, pp=1, dp=1, micro_batch=1, global_batch=8, seq=2048, interleave=1, zero=0,
                                    recompute="none", sp=False, flash=False)),  # 350 GB of states on 40 GB: does not fit
    ("llama2-7b", "h100-sxm", dict(tp=2, pp=4, dp=8, micro_batch=2, global_batch=128, seq=4096, interleave=2, zero=3,
                                   recompute="full", sp=True, flash=True)),
    ("llama2-13b", "a100-80gb", dict(tp=4, pp=2, dp=4, micro_batch=1, global_batch=64, seq=4096, interleave=1, zero=1,
                                     recompute="selective", sp=True, flash=True)),
    # mixture-of-experts layers (Mixtral: every layer; DeepSeek-V3: 58 of 61, with latent attention)
    ("mixtral-8x7b", "h100-sxm", dict(tp=2, pp=4, dp=8, micro_batch=1, global_batch=256, seq=4096, interleave=1, zero=1,
                                      recompute="selective", sp=True, flash=False)),
    ("deepseek-v3", "h800", dict(tp=8, pp=1, dp=32, micro_batch=1, global_batch=1024, seq=4096, interleave=1, zero=3,
                                 recompute="none", sp=True, flash=True)),
]
ASSUMED = dict(tokens="2T", mfu="0.4", overlap="0.25", network="50")  # 2T: the count suffix, read on both sides
HEADLINE = ("memory.total", "memory.left", "memory.max_micro_batch", "memory.weights", "memory.gradients", "memory.optimizer",
            "memory.activations", "time.training_days", "time.gpu_hours", "time.tokens_per_gpu_second", "time.step_mfu", "time.hfu",
            "time.step_seconds", "time.compute_seconds", "time.exposed_comm_seconds", "params.per_gpu_stored",
            "inference.token_latency", "inference.tokens_per_second", "inference.weights_per_gpu", "inference.kv_cache_per_gpu")


def sizing_url(model: str, gpu_key: str, lay: dict, assumed: dict = ASSUMED) -> str:
    from llm_formulas.formulas.data.gpus import gpu
    from llm_formulas.formulas.data.presets import preset

    query = {"model": preset(model).title, "gpu": gpu(gpu_key).name, "layout": LAYOUTS[0].name,
             "t": lay["tp"], "p": lay["pp"], "d": lay["dp"], "b": lay["micro_batch"], "B": lay["global_batch"],
             "s": lay["seq"], "v": lay["interleave"], "D": assumed["tokens"], "U": assumed["mfu"], "zero": lay["zero"],
             "recompute": lay["recompute"], "framework": "default"}  # estimate's default framework, as the argv below
    query |= {name: assumed[key] for name, key in (("r", "overlap"), ("network", "network")) if key in assumed}
    query |= {"sp": "1"} if lay["sp"] else {}
    query |= {"flash": "1"} if lay["flash"] else {}
    return (built().out / "calculator.html").as_uri() + "?" + urlencode(query)


def estimate_json(model: str, gpu_key: str, lay: dict, assumed: dict = ASSUMED) -> dict:
    import contextlib
    import io

    from llm_formulas.render.cli.main import main

    argv = ["estimate", "--model", model, "--gpu", gpu_key, "--tp", lay["tp"], "--pp", lay["pp"], "--dp", lay["dp"],
            "--micro-batch", lay["micro_batch"], "--global-batch", lay["global_batch"], "--seq", lay["seq"],
            "--interleave", lay["interleave"], "--zero", lay["zero"], "--recompute", lay["recompute"],
            "--attention", "flash" if lay["flash"] else "eager", "--tokens", assumed["tokens"], "--mfu", assumed["mfu"], "--json"]
    argv += [item for option, key in (("--overlap", "overlap"), ("--network", "network")) if key in assumed
             for item in (option, assumed[key])]
    argv += ["--sequence-parallel"] if lay["sp"] else []
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main([str(a) for a in argv]) == 0
    return json.loads(stdout.getvalue())


DEFAULTS_LEFT = {key: ASSUMED[key] for key in ("tokens", "mfu")}  # r and the network at each side's own default
CASES = [(*case, ASSUMED) for case in SIZING] + [("llama2-70b", "h100-sxm", SIZING[0][2], DEFAULTS_LEFT)]


@pytest.mark.parametrize("model, gpu_key, lay, assumed", CASES, ids=[f"{m}-{g}" for m, g, _ in SIZING] + ["defaults"])
def test_sizing_verdict_and_headline_equal_estimate(model, gpu_key, lay, assumed):
    page = _Sizing()
    page.feed(chromium(sizing_url(model, gpu_key, lay, assumed), "--dump-dom"))
    report = estimate_json(model, gpu_key, lay, assumed)
    fits = report["memory"]["fits"]
    assert page.verdict["verdict.data-fits"] == ("1" if fits else "0")
    assert page.verdict["verdict.text"].startswith("fits: " if fits else "does not fit: needs ")
    assert float(page.verdict["verdict.data-total"]) == pytest.approx(report["memory"]["total"], rel=RTOL)
    for path in HEADLINE:
        section, key = path.split(".")
        want, got = report[section][key], float(page.figures[path])
        if path == "time.compute_seconds":  # the bar's bubble: compute × bubble
            assert float(page.figures["time.bubble_seconds"]) == pytest.approx(want * report["time"]["bubble"], rel=RTOL, abs=1e-300)
        assert got == pytest.approx(want, rel=RTOL, abs=1e-300), f"{path}: page {got}, estimate {want}"


def test_sizing_says_why_a_layout_is_invalid():
    from llm_formulas.formulas.reports.estimate import Layout, layout_violation, model_values
    from llm_formulas.formulas.data.presets import preset

    model = model_values(preset("llama2-70b").architecture.values)
    for tp, pp, v, m in ((3, 1, 1, 4), (16, 1, 1, 4), (1, 3, 1, 4), (1, 4, 2, 6)):
        lay = dict(SIZING[0][2], tp=tp, pp=pp, dp=1, interleave=v, global_batch=m)
        page = _Sizing()
        page.feed(chromium(sizing_url("llama2-70b", "a100-80gb", lay), "--dump-dom"))
        rule = layout_violation(Layout(n=tp * pp, t=tp, p=pp, d=1, b=1, m=m, s=4096, v=v), model)
        assert rule is not None and page.verdict["verdict.text"] == "invalid layout"
        assert page.verdict["reason.text"] == rule  # the same words as estimate's
    lay = dict(SIZING[0][2], global_batch=33)  # d = 2, b = 1: estimate's read_layout refuses it
    page = _Sizing()
    page.feed(chromium(sizing_url("llama2-70b", "a100-80gb", lay), "--dump-dom"))
    assert page.verdict["reason.text"] == "the global batch 33 must be a multiple of b·d = 2"
    page = _Sizing()  # a suffix is for counts only, as on the command line: U = 1k is no number
    page.feed(chromium(sizing_url("llama2-70b", "a100-80gb", SIZING[0][2]).replace("U=0.4", "U=1k"), "--dump-dom"))
    assert page.verdict["verdict.text"] == "invalid input" and page.verdict["reason.text"] == "U: a k/M/B/T suffix is for counts, not for U ('1k')"


def test_screenshot_of_the_sizing_page():
    shot = scratch("screenshots") / "calculator.png"
    chromium(sizing_url(*SIZING[1]), f"--screenshot={shot}", "--window-size=1400,1100")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000


def test_sizing_state_round_trips_through_the_url_and_units_switch():
    from urllib.parse import parse_qs

    lay = SIZING[2][2]
    url = sizing_url(*SIZING[2][:2], lay) + "&units=GiB"
    page = _Sizing()
    page.feed(chromium(url, "--dump-dom"))
    state = parse_qs(page.state)
    # the page writes back what it was given: presets, the inputs that differ from them, every setting
    for key, want in (("zero", "3"), ("recompute", "full"), ("sp", "1"), ("flash", "1"), ("units", "GiB"), ("t", "2"),
                      ("p", "4"), ("d", "8"), ("B", "128"), ("network", "50"), ("U", "0.4")):
        assert state[key] == [want], key
    total = estimate_json(*SIZING[2][:2], lay)["memory"]["total"]
    # binary units: GiB = 2³⁰ bytes, three significant digits
    assert f"{total / 2**30:.3g} GiB" in page.verdict["verdict.text"]


def test_sizing_prints_numbers_as_the_command_line_does():
    from llm_formulas.render.printers.human import human, significant

    page = _Sizing()
    page.feed(chromium(sizing_url(*SIZING[0]), "--dump-dom"))
    assert len(page.shown) >= 10
    for (path, unit), text in page.shown.items():
        value = float(page.figures[path])
        want = {"byte": lambda: human(value, "byte"), "second": lambda: human(value, "second"),
                "day": lambda: human(value * 86400, "second"), "count": lambda: human(value, "1"),
                "percent": lambda: f"{significant(100 * value)} %"}[unit]()
        assert text == want, (path, text, want)


def test_gpu_inputs_are_typed_as_datasheets_print_them():
    # NVIDIA H100 SXM5 datasheet: 989.5 TFLOPS BF16 dense (1,979 with sparsity), 80 GB, 3.35 TB/s, NVLink 900 GB/s;
    # the page fills the fields with these numbers, with their unit beside them (not 989500000000000)
    from llm_formulas.formulas.data.gpus import gpu

    query = urlencode({"model": MODELS[0].name, "gpu": gpu("h100-sxm").name, "layout": LAYOUTS[0].name})
    page = _Outputs()
    page.feed(chromium((built().out / "calculator.html").as_uri() + "?" + query, "--dump-dom"))
    assert page.ready
    assert page.typed["X"] == "989.5" and page.units["X"] == "TFLOP/s"
    assert page.typed["M_gpu"] == "80" and page.units["M_gpu"] == "GB"
    assert page.typed["W_mem"] == "3350" and page.units["W_mem"] == "GB/s"
    assert page.typed["W_link"] == "900" and page.units["W_link"] == "GB/s"
    assert page.typed["D"] == "300B"  # a token count keeps the command line's suffix
