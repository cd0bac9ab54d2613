"""The serving lesson, the inference lesson and article_001's inference cells: every figure their prose quotes is the
value the lesson computes, and the contradictions issue 24 lists are gone.

Each lesson renders its prose's figures from Figures (``F``; tests/test_lesson_figures.py reads them back); here the
figures are checked against independent arithmetic (the essay's inputs, the GPUs' datasheets) or against the exact
report ``llm-formulas serve`` prints, and the committed notebooks' Markdown must name them as the issue asked.
"""

import json

import nbformat
import pytest
from helpers import cli_json

from llm_formulas.render.documents.lessons import article_001, inference, serving
from llm_formulas.render.documents.serving_figures import LLAMA31_70B
from llm_formulas.render.printers.human import human

NOTEBOOKS = __import__("pathlib").Path(__file__).resolve().parents[1] / "notebooks"


def prose(name: str) -> str:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")


def shown(lesson, name: str) -> str:
    """A figure of the lesson as its prose prints it."""
    return lesson.F.figures[name].shown


def test_article_001_names_a_stage_and_a_token():
    # the essay: 17.5 ms per stage (70B × 2 bytes / 8 / 1 TB/s), 0.14 s per token; batch 1024 compute-bound per stage:
    # 1024 × 2 × 70e9 / (8 × 330e12) = 54.3 ms, and through the 8 stages in series 8 × that = 434 ms
    assert shown(article_001, "stage") == human(2 * 70e9 / 8 / 1e12, "second") == "17.5 ms"
    assert shown(article_001, "token") == human(2 * 70e9 / 1e12, "second")
    assert shown(article_001, "busy_stage") == human(1024 * 2 * 70e9 / (8 * 330e12), "second") == "54.3 ms"
    assert shown(article_001, "busy_token") == human(8 * 1024 * 2 * 70e9 / (8 * 330e12), "second") == "434 ms"
    text = prose("article_001")
    assert "per\n*stage* per token" in text and "per *token*" in text and "crosses all\n8 stages, 434 ms" in text


def test_the_balance_batches_name_their_flops():
    # Ada whitepaper: FP16 with FP16 accumulate 330.3 TFLOPS, BF16/FP16 with FP32 accumulate 165.2; 1,008 GB/s
    assert shown(inference, "balance_fp16") == f"{330.3e12 / 1.008e12:.0f} sequences" == "328 sequences"
    assert shown(inference, "balance_bf16") == f"{165.2e12 / 1.008e12:.0f} sequences" == "164 sequences"
    assert shown(article_001, "essay_balance") == "330 sequences"  # the essay's 330 TFLOP/s over its round 1 TB/s
    assert shown(article_001, "balance_bf16") == "164 sequences"
    for name in ("inference", "article_001"):
        text = prose(name)
        assert "FP16-accumulate" in text or "FP16\naccumulation" in text or "FP16 accumulation" in text
        assert "BF16" in text


def test_the_inference_lesson_calls_a_stage_a_stage():
    # Llama-2-70B, 68,976,648,192 parameters in 16 bits over 8 cards of 1,008 GB/s: per stage, and 8 stages in series
    stage, token = shown(inference, "stage"), shown(inference, "token")
    assert stage == human(2 * 68_976_648_192 / 8 / 1.008e12, "second")
    assert token == human(2 * 68_976_648_192 / 1.008e12, "second")
    text = prose("inference")
    assert f"**{stage} per stage**" in text and f"**{token} per token**" in text


def test_the_serving_lessons_figures_are_the_exact_reports(tmp_path, capsys):
    # the lesson's TPOT at batch 1 and 64 (NumPy arrays) against the exact report of the serve command
    path = tmp_path / "config.json"
    path.write_text(json.dumps(LLAMA31_70B))
    for batch, key in ((1, "tpot_1"), (64, "tpot_64")):
        doc = cli_json(capsys, "serve", "--hf-config", str(path), "--gpu", "h100-sxm", "--tp", "8", "--batch", str(batch),
                       "--input", "2000", "--output", "500")
        assert human(doc["tpot_seconds"], "second") == shown(serving, key)
    answer = serving.F
    assert int(answer["gpus"]) == int(answer["tp"]) * int(answer["replicas"])
    assert int(answer["replicas"]) == -(-1000 // int(answer["per_replica"]))  # ⌈1000 users / users per replica⌉
