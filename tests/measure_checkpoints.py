"""Measure every checkpoint of tests/checkpoints_manifest.json with transformers itself: write tests/checkpoint_counts.json.

For each published config.json (tests/checkpoints/, see the manifest for where each comes from) the model
transformers builds from it on the meta device: sum(p.numel()) of the text decoder (a ...ForCausalLM, or the
language model and head of a ...ForConditionalGeneration) and of the rest (the vision tower and projector).
Kimi-K2's config names model_type kimi_k2 and architectures DeepseekV3ForCausalLM: it is built as deepseek_v3.
Run: python tests/measure_checkpoints.py (a few minutes on two cores; the test compares the counts with these).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import transformers

HERE = Path(__file__).parent
SHARED = HERE / "checkpoints"
BUILT_AS = {"kimi_k2": "deepseek_v3"}


def measure(config: dict) -> dict[str, int]:
    settings = {key: value for key, value in config.items() if key not in ("model_type", "quantization_config", "auto_map")}
    model_type = BUILT_AS.get(config["model_type"], config["model_type"])
    hf = transformers.AutoConfig.for_model(model_type, **settings)
    multimodal = model_type in transformers.models.auto.modeling_auto.MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    auto = transformers.AutoModelForImageTextToText if multimodal else transformers.AutoModelForCausalLM
    with torch.device("meta"):
        model = auto.from_config(hf)
    total = sum(p.numel() for p in model.parameters())
    if not multimodal:
        return {"text": total, "towers": 0}
    text = sum(p.numel() for name, p in model.named_parameters() if "language_model" in name or name.startswith("lm_head"))
    return {"text": text, "towers": total - text}


def main() -> None:
    transformers.logging.set_verbosity_error()
    manifest = json.loads((HERE / "checkpoints_manifest.json").read_text())
    counts = {"transformers": transformers.__version__, "torch": torch.__version__, "checkpoints": {}}
    for entry in manifest:
        config = json.loads((SHARED / entry["file"]).read_text())
        try:
            counts["checkpoints"][entry["checkpoint"]] = measure(config)
        except Exception as error:  # a config transformers itself cannot build is recorded as such
            counts["checkpoints"][entry["checkpoint"]] = {"error": f"{type(error).__name__}: {error}"[:300]}
        print(entry["checkpoint"], counts["checkpoints"][entry["checkpoint"]], file=sys.stderr, flush=True)
    (HERE / "checkpoint_counts.json").write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main()
