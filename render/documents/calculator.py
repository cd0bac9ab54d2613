"""The calculator page: pick a model, a GPU and a layout; every formula updates.

The page holds one input per symbol that some formula needs (symbol-table
order, documented defaults), the presets of ``render.documents.defaults`` (or of an
architecture module's presets when one exists), and the JavaScript of
``render.printers.jscodegen``. Ψ may be derived from the model's shape with
``params.decoder.total`` (or ``params.total``), evaluated by the same generated JavaScript. The page reads
``?model=...&gpu=...&layout=...&name=value`` from its URL, so a test (or a
link) can set every input; each result carries its full-precision value in
``data-value``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from formulas.symbols import quantity, table_order
from render.documents.defaults import GPUS, LAYOUTS, MODELS, default, literal
from render.printers.jscodegen import javascript
from render.documents.reference import anchor, topic_of, topic_title
from render.documents.templating import render

# Ψ from the model's shape: the general decoder count when it exists, else the classic GPT one
DERIVED = {"P": ("params.decoder.total", "params.total")}


@dataclass(frozen=True)
class InputField:
    name: str
    meaning: str
    unit: str
    value: str
    integer: bool
    maximum: str
    zero_allowed: bool


def presets() -> dict:
    def table(entries):
        return {e.name: {"values": e.values, "source": e.source} for e in entries}

    return {"models": table(MODELS), "gpus": table(GPUS), "layouts": table(LAYOUTS)}


def calculator_page() -> tuple[str, tuple[str, ...]]:
    """The page's HTML and the formulas the JavaScript printer had to leave out."""
    script = javascript()
    symbols = sorted({s for arguments in script.inputs.values() for s in arguments}, key=table_order)
    fields = []
    for symbol in symbols:
        entry = quantity(symbol)
        fields.append(
            InputField(
                entry.name,
                entry.meaning,
                str(entry.unit),
                literal(default(symbol).value),
                entry.is_integer,
                "" if entry.maximum is None else str(entry.maximum),
                not symbol.is_positive,
            )
        )
    groups: dict[str, list[dict]] = {}
    for formula in script.formulas:
        row = {"id": formula.id, "meaning": formula.meaning, "unit": str(formula.unit), "anchor": anchor(formula.id)}
        groups.setdefault(topic_of(formula.id), []).append(row)
    present = {f.id for f in script.formulas}
    derived = {name: next(fid for fid in ids if fid in present) for name, ids in DERIVED.items() if present & set(ids)}
    html = render(
        "calculator.html",
        fields=fields,
        groups=[(topic_title(topic), formulas) for topic, formulas in groups.items()],
        formulas_js=script.source,
        presets=presets(),
        presets_json=json.dumps(presets(), sort_keys=True, ensure_ascii=False).replace("</", "<\\/"),
        derived_json=json.dumps(derived, sort_keys=True),
        derived=derived,
    )
    return html, script.skipped
