"""Named models for ``--model NAME``: each a config.json shape (formulas/data/models/NAME.json) with its source.

The shapes are the ones the sources use (GPT-3 175B, LLaMA 7B/13B/65B, Llama-2
7B/13B/70B, BLOOM-176B, Megatron's 1T model); they are read by the same
formulas.data.hf_config readers as a user's config.json. What the readers make of each
(the values by symbol name, the model_type, the towers) is also stored as plain
numbers in formulas/data/preset_values.json, so that ``plan`` and ``sweep`` read a preset
without SymPy; ``python -m llm_formulas.formulas.data.presets`` rewrites it from the
readers and tests/test_numeric_without_sympy.py fails on a stale copy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the readers load SymPy: names() must not (the command line's --help lists them)
    from llm_formulas.formulas.data.hf_config import Architecture

MODELS_DIR = Path(__file__).with_name("models")
VALUES_PATH = Path(__file__).with_name("preset_values.json")


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    source: str
    config: dict

    @property
    def architecture(self) -> Architecture:
        from llm_formulas.formulas.data.hf_config import read_config

        return read_config(self.config)

    @property
    def read(self) -> dict:
        """What the readers make of the config as plain numbers, without SymPy: {"model_type", "values" (by symbol
        name), "towers" (the components counted apart: a vision tower, a projector)} (formulas/data/preset_values.json)."""
        return _stored()[self.name]


def _stored() -> dict[str, dict]:
    return json.loads(VALUES_PATH.read_text(encoding="utf-8"))


def read_presets() -> dict[str, dict]:
    """Every preset as the readers read it (SymPy): the content of formulas/data/preset_values.json."""
    stored = {}
    for name in names():
        architecture = preset(name).architecture
        stored[name] = {"model_type": architecture.model_type,
                        "values": {symbol.name: int(value) for symbol, value in architecture.values.items()},
                        "towers": list(dict.fromkeys(piece.component for piece in architecture.towers))}
    return stored


def regenerate() -> bool:
    """Rewrite formulas/data/preset_values.json from the readers; True when it changed."""
    text = json.dumps(read_presets(), indent=1, sort_keys=True) + "\n"
    if VALUES_PATH.exists() and VALUES_PATH.read_text(encoding="utf-8") == text:
        return False
    VALUES_PATH.write_text(text, encoding="utf-8")
    return True


def names() -> list[str]:
    return sorted(path.stem for path in MODELS_DIR.glob("*.json"))


def preset(name: str) -> Preset:
    """The preset called ``name``; ConfigError lists the known names otherwise."""
    if name not in names():
        from llm_formulas.formulas.data.hf_config import ConfigError  # the readers (SymPy) only for a name none has

        raise ConfigError(f"unknown model {name!r}; known: {', '.join(names())}")
    entry = json.loads((MODELS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return Preset(entry["name"], entry["title"], entry["source"], entry["config"])


if __name__ == "__main__":
    print(f"{VALUES_PATH}: {'rewritten' if regenerate() else 'up to date'}")
