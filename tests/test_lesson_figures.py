"""Every number of a lesson's prose is rendered from a value the lesson computes (render/documents/figures.py):
none is typed, each printed figure reads back as the value it names, and the code cells use the model and the GPU
the lesson names at its top."""

from __future__ import annotations

import importlib
import re
from fractions import Fraction

import pytest

from llm_formulas.render.documents.figures import SLOT, Figures
from llm_formulas.render.documents.notebooks import LESSONS

UNITS = (r"%|GiB|MiB|KiB|TiB|GB/s|TB/s|MB/s|KB/s|Gbit/s|Gbps|Gb/s|GB|MB|KB|kB|TB|PB|TFLOPS|TFLOP/s|PFLOP/s|TFLOP|PFLOP|"
         r"EFLOP|ZFLOP|GFLOP|FLOPs|FLOP/s|FLOP|ms|µs|ns|seconds?|minutes?|min|hours?|days?|weeks?|months?|years?|"
         r"kWh|MWh|GWh|kW|MW|W|tCO2eq|tonnes?|tokens?|parameters|sequences|GPUs|GPU-hours|GPU hours|layers|blocks|heads|"
         r"stages|micro-batches|replicas|nodes|bytes?|times")
NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?"
TYPED = re.compile(rf"(?<![\w.·/^_§−-])(?<![−+×] )({NUMBER})(?:\s?×\s?10[⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(?:\s?(?:{UNITS})|\s(?:s|W))(?![\w/])")
DOLLARS = re.compile(rf"\$\s?{NUMBER}|(?<![\w.])\d+(?:\.\d+)?×")  # dollars, and factors such as 20×
RELATION = re.compile(rf"[=≈≤≥<>~]\s*({NUMBER})(?!\s?×|[\w·(ΨαβγδεθλμπρστφψΩ²³/^_.])")  # "= 2 × forward": a formula
DEFINITION = re.compile(r"^(\d{1,2}) (?:bytes?|FLOPs?)$")  # by definition: 2 bytes per 16-bit value, 6 FLOPs per parameter
CODE_SPAN = re.compile(r"`[^`]*`|\$[^$]*\$|\]\([^)]*\)|\b[AH][18]00 \d+ GB")  # code, math, links, product names


def _cells(lesson: str) -> list[tuple[str, str]]:
    return list(importlib.import_module(f"llm_formulas.render.documents.lessons.{lesson}").CELLS)


def _figures(lesson: str) -> Figures | None:
    return next((getattr(text, "figures") for _, text in _cells(lesson) if hasattr(text, "figures")), None)


def typed_figures(template: str) -> list[str]:
    """The quantities typed into a template outside its slots, its code spans and its math."""
    prose = CODE_SPAN.sub(" ", SLOT.sub(" ", template))
    found = [m.group(0) for m in TYPED.finditer(prose) if not DEFINITION.match(m.group(0).strip())]
    found += [m.group(0) for m in DOLLARS.finditer(prose)]
    found += [m.group(0) for m in RELATION.finditer(prose) if m.group(1) != "0"]  # "… = 0": an equation, not a figure
    return found




def test_the_detector_finds_typed_figures_and_spares_formulas():
    assert typed_figures("weights 140 GB, 0.14 s per token, t ≤ 2.4, b = 8, 52 %, $2 per hour, 1.5×") == [
        "140 GB", "0.14 s", "52 %", "$2", "1.5×", "≤ 2.4", "= 8"]
    assert typed_figures("16 bytes per parameter, 34·s·b·h, Ψ ≈ 12lh², 6ΨD, GPT-3 175B, Table 1, §3.5, `--batch 8`, "
                         "{{states}}, 16-bit, (p − 1)/m, 2021, $x = 2$") == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_figure_is_typed_into_the_prose(lesson):
    typed = {}
    for kind, text in _cells(lesson):
        if kind == "markdown":
            found = typed_figures(getattr(text, "template", text))
            if found:
                typed[text.strip().splitlines()[0][:50]] = found
    assert not typed, f"{lesson}: quantities typed into the prose (render them from Figures): {typed}"


def _unit_size(unit: str) -> tuple[Fraction, str]:
    """A display unit's size in its base unit (written out here, independent of render.printers.human)."""
    decimal = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Z": 10**21, "Y": 10**24}
    binary = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
    times = {"ns": Fraction(1, 10**9), "µs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": 1, "minutes": 60,
             "hours": 3600, "days": 86400, "years": Fraction(36525 * 86400, 100)}
    if unit in times:
        return Fraction(times[unit]), "second"
    for tail, base in (("FLOP/s", "FLOP/second"), ("FLOP", "FLOP"), ("B/s", "byte/second"), ("B", "byte")):
        if unit.endswith(tail) and unit[: -len(tail)] in decimal | binary:
            return Fraction((decimal | binary)[unit[: -len(tail)]]), base
    if "/" in unit and unit.split("/")[1] in ("byte", "token", "parameter"):  # FLOP/byte and the like: as printed
        return Fraction(1), unit
    for tail, base in (("Wh", "joule"),):
        if unit.endswith(tail):
            return Fraction(decimal[unit[:-2]] * 3600), base
    raise AssertionError(f"no size for unit {unit!r}")


def read_back(shown: str) -> tuple[Fraction, Fraction, str]:
    """A printed figure as (value, half a unit of its last printed digit, the base unit it is in)."""
    text = shown.replace(",", "")
    match = re.fullmatch(r"(\$?)([0-9.]+(?:e[+-]?\d+)?)([kMBTQ]?)\s?(.*)", text)
    assert match, f"cannot read {shown!r} back"
    dollar, number, suffix, unit = match.groups()
    value = Fraction(number)
    mantissa = number.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    half = Fraction(1, 2 * 10**decimals) * (Fraction(10) ** int(number.split("e")[1]) if "e" in number else 1)
    count = {"": 1, "k": 10**3, "M": 10**6, "B": 10**9, "T": 10**12, "Q": 10**15}[suffix]
    value, half = value * count, half * count
    unit = unit.strip()
    if dollar:
        return value, half, "dollar"
    if unit == "%":
        return value / 100, half / 100, "1"
    counts = {"parameters": "parameter", "parameter": "parameter", "tokens": "token", "token": "token", "sequences": "sequence",
              "sequence": "sequence", "GPUs": "GPU", "GPU": "GPU", "layers": "layer", "layer": "layer"}
    if unit == "" or unit in counts:
        return value, half, counts.get(unit, "1")
    if unit == "W":
        return value, half, "joule/second"
    if unit == "tokens/s":
        return value, half, "token/second"
    if unit == "tCO2eq":  # the papers' tonnes of CO2-equivalent
        return value * 10**6, half * 10**6, "gram"
    if unit.endswith(" CO2e"):
        scale = {"g": 1, "kg": 10**3, "t": 10**6, "kt": 10**9}[unit.split()[0]]
        return value * scale, half * scale, "gram"
    prefix = re.fullmatch(r"(Ki|Mi|Gi|Ti) (FLOP|reads)", unit)  # 001 counts binary T FLOPs and T reads: "640 Ti FLOP"
    if prefix:
        return value * 2 ** (10 * ("KMGT".index(prefix.group(1)[0]) + 1)), half * 2 ** (10 * ("KMGT".index(prefix.group(1)[0]) + 1)), (
            "FLOP" if prefix.group(2) == "FLOP" else "1")
    size, base = _unit_size(unit)
    return value * size, half * size, base


def test_read_back_reads_what_the_printer_prints():
    assert read_back("1.1 TB") == (Fraction(11, 10) * 10**12, Fraction(5, 100) * 10**12, "byte")
    assert read_back("17.5 ms") == (Fraction(175, 10**4), Fraction(5, 10**5), "second")
    assert read_back("69B parameters")[0] == 69 * 10**9 and read_back("12.3 %")[0] == Fraction(123, 1000)
    assert read_back("250,880") == (250880, Fraction(1, 2), "1")


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_printed_figure_is_the_value_it_names(lesson):
    figures = _figures(lesson)
    assert figures is not None, f"{lesson}: its prose is not rendered from Figures"
    for name in sorted(figures.quoted):
        figure = figures.figures[name]
        if figure.value is None:  # words: a name, a source's printed figure, a verdict
            continue
        value, half, unit = read_back(figure.shown)
        expected_unit = {"GPU·second": "second"}.get(figure.unit, figure.unit)
        assert unit in (expected_unit, "1") or figure.unit in ("1",), f"{lesson}: {{{{{name}}}}} prints {figure.shown!r} for a {figure.unit}"
        if figure.digits is None:
            assert value == figure.value, f"{lesson}: {{{{{name}}}}} = {figure.shown!r}, exactly {figure.value}"
        else:
            assert abs(value - figure.value) <= half * Fraction(1001, 1000), (
                f"{lesson}: {{{{{name}}}}} prints {figure.shown!r}, the value is {float(figure.value):.6g} {figure.unit}")


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_figure_computed_is_quoted_and_the_top_names_the_model_and_gpu(lesson):
    figures = _figures(lesson)
    automatic = {"model", "gpu", "minutes", "P"} | set(figures.values)
    unquoted = sorted(set(figures.figures) - figures.quoted - automatic)
    assert not unquoted, f"{lesson}: figures computed and never quoted: {unquoted}"
    opening = getattr(_cells(lesson)[0][1], "template", "")
    for name in ("minutes",) + (("model",) if figures.model_key else ()) + (("gpu",) if figures.gpu_key else ()):
        assert "{{" + name + "}}" in opening, f"{lesson}: the opening cell does not name its {name}"


CALLS = re.compile(r"""\b(model|gpu)\(\s*["']([^"']+)["']|\b(model|gpu_key)=["']([^"']+)["']|\bgpus=\(([^)]*)\)|\bmodels=\(([^)]*)\)""")


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_code_cells_use_the_model_and_gpu_named_at_the_top(lesson):
    figures = _figures(lesson)
    models = {figures.model_key, *figures.compare_models}
    gpus = {figures.gpu_key, *figures.compare_gpus}
    for kind, text in _cells(lesson):
        if kind != "code":
            continue
        for match in CALLS.finditer(text):
            what, name, keyword, value, gpu_list, model_list = match.groups()
            if what or keyword:
                kind_, key = (what or keyword), (name or value)
                allowed = models if kind_ == "model" else gpus
                assert key in allowed, f"{lesson}: a code cell uses {kind_} {key!r}; the lesson names {sorted(filter(None, allowed))}"
            for listed, allowed in ((gpu_list, gpus), (model_list, models)):
                for key in re.findall(r"""["']([^"']+)["']""", listed or ""):
                    assert key in allowed, f"{lesson}: a picture draws {key!r}, not named at the top"
