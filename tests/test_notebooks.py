"""The lessons: committed with outputs, fresh, deterministic, long enough to teach, pictured, and
their exercises checked against published or hand-computed figures (never the code under test)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import nbformat
import pytest

from llm_formulas.render.documents.figures import Figures

from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.render.documents.exercises import all_exercises, check, get_exercise
from llm_formulas.render.documents.notebooks import LESSONS, notebook_text, notebooks, write_notebooks

COMMITTED = Path(__file__).resolve().parent.parent / "notebooks"
ARTICLES = ("000", "001", "002", "004")
REGENERATE = "regenerate with: llm-formulas build --notebooks-dir notebooks"


@cache
def executed() -> dict[str, str]:
    """Every lesson run by nbclient into a scratch directory (two kernels at a time); how long it takes is
    tests/benchmarks/bench_build.py --lessons'."""
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="llm-formulas-lessons-"))
    paths = write_notebooks(directory, lambda path, data: path.write_bytes(data) and path, run=True)
    return {path.name: path.read_text(encoding="utf-8") for path in paths}


def committed(name: str) -> nbformat.NotebookNode:
    return nbformat.read(COMMITTED / name, as_version=4)


# lessons that teach the toolkit itself rather than a topic of the catalogue or a source article
TOOLKIT_LESSONS = {"own_formula.ipynb"}
# the lessons learners asked for (issue 26): MoE, FP8 and quantization, long context, achievable FLOP/s
ASKED = {"moe.ipynb", "precision.ipynb", "long_context.ipynb", "achievable.ipynb"}


def test_a_lesson_per_topic_and_per_article_and_the_lessons_learners_ask_for():
    taught_in = {"peers": "memory"}  # the other calculators' forms: the memory lesson's section 8 prices them beside ours
    topics = {taught_in.get(f.id.split(".")[0], f.id.split(".")[0]) for f in all_formulas()}
    expected = {f"{t}.ipynb" for t in topics} | {f"article_{a}.ipynb" for a in ARTICLES} | TOOLKIT_LESSONS | ASKED
    assert set(notebooks()) == expected
    assert {p.name for p in COMMITTED.glob("*.ipynb")} == set(notebooks()), REGENERATE


def _pictures_apart(text: str) -> tuple[str, list[bytes]]:
    """The notebook's JSON with each PNG output replaced by a marker, and the PNGs in order."""
    import base64
    import json

    document, pictures = json.loads(text), []
    for cell in document["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                pictures.append(base64.b64decode(data["image/png"]))
                data["image/png"] = f"<picture {len(pictures)}>"
    return json.dumps(document, indent=1, sort_keys=True), pictures


def _largest_pixel_difference(first: bytes, second: bytes) -> int:
    """The largest difference of one colour channel between two PNGs of one size (255 when sizes differ)."""
    import io

    import numpy as np
    from PIL import Image

    one, two = (np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.int16) for data in (first, second))
    return 255 if one.shape != two.shape else int(np.abs(one - two).max())


# Matplotlib's log-scale transform runs through NumPy's log10, whose float64 code differs by CPU (AVX-512 machines
# use SVML): one plot drawn on two machines differs by 1 level of 255 in ~100 anti-aliased pixels (measured here,
# AVX2, against the committed AVX-512 run). A real change of a plot moves a line: differences of ~100 levels.
PIXEL_TOLERANCE = 2


def test_the_committed_notebooks_hold_the_lessons_text_and_code():
    # the quick half of the check below, run every time: each committed cell's source is the fresh lesson's
    for name, nb in notebooks().items():
        fresh = [(cell.cell_type, cell.source) for cell in nb.cells]
        stored = [(cell.cell_type, cell.source) for cell in committed(name).cells]
        assert stored == fresh, f"notebooks/{name} is stale; {REGENERATE}"


@pytest.mark.slow  # runs every lesson (minutes on two cores): CI runs it (`pytest -m slow`)
def test_a_fresh_run_writes_the_committed_notebooks():
    # the committed notebooks were written by an earlier run: every text and output byte for byte, and every
    # picture pixel for pixel within the CPU's rounding
    texts = executed()
    for name, text in texts.items():
        assert " at 0x" not in text, f"{name}: an object's address in an output changes from run to run"
        fresh, fresh_pictures = _pictures_apart(text)
        stored, stored_pictures = _pictures_apart((COMMITTED / name).read_text(encoding="utf-8"))
        assert stored == fresh, f"notebooks/{name} is stale; {REGENERATE}"
        for number, (one, two) in enumerate(zip(fresh_pictures, stored_pictures), start=1):
            assert _largest_pixel_difference(one, two) <= PIXEL_TOLERANCE, f"notebooks/{name}, picture {number}: stale; {REGENERATE}"


def test_pictures_that_differ_are_told_apart():
    # the tolerance lets the CPU's rounding pass, not a changed plot
    import io

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def png(slope: float) -> bytes:
        figure, ax = plt.subplots(figsize=(3, 2))
        ax.plot([1, 10, 100], [1, 10 ** slope, 100 ** slope])
        ax.set(xscale="log", yscale="log")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
        plt.close(figure)
        return buffer.getvalue()

    assert _largest_pixel_difference(png(1.0), png(1.0)) == 0
    assert _largest_pixel_difference(png(1.0), png(1.1)) > 50


def test_unexecuted_notebooks_are_deterministic():
    assert {n: notebook_text(nb) for n, nb in notebooks().items()} == {n: notebook_text(nb) for n, nb in notebooks().items()}


@pytest.mark.parametrize("name", [f"{lesson}.ipynb" for lesson in LESSONS])
def test_every_code_cell_has_outputs_and_none_is_an_error(name):
    nb = committed(name)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs, f"{name}: a code cell without output: {cell.source[:60]!r}"
            assert not [o for o in cell.outputs if o.output_type == "error"], f"{name}: {cell.source[:60]!r}"
            assert "execution" not in cell.metadata  # no timing: rebuilds stay byte-identical


@pytest.mark.parametrize("name", [f"{lesson}.ipynb" for lesson in LESSONS])
def test_every_lesson_has_600_words_of_prose_a_question_and_exercises(name):
    nb = committed(name)
    prose = " ".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    assert len(re.findall(r"[A-Za-z][A-Za-z'’-]*", prose)) >= 600
    quoted = " ".join(line for line in nb.cells[0].source.splitlines() if line.startswith(">"))
    assert nb.cells[0].cell_type == "markdown" and "?" in quoted  # opens with a question someone asks, quoted
    sources = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    assert any(source.startswith("exercise(") for source in sources)
    assert any("derive(" in source for source in sources)  # the steps come from the engine, with verdicts
    assert not any("solution(" in source for source in sources)
    latex = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs if "text/latex" in o.get("data", {})]
    assert any(r"\checkmark" in o["data"]["text/latex"] for o in latex)


def test_no_internal_file_name_and_the_exact_value_on_request():
    texts = {name: (COMMITTED / f"{name}.ipynb").read_text(encoding="utf-8") for name in LESSONS}
    for name, text in texts.items():
        assert not re.search(r"\d{3}_[0-9a-f]{16}\.txt|DESIGN\.md", text), name  # sources are cited by author and title
    memory = committed("memory.ipynb")
    shown = [cell.outputs[0]["data"]["text/plain"] for cell in memory.cells if cell.cell_type == "code" and cell.source == "shard.exact"]
    # 16 × 68,976,648,192 / 64 bytes, written out: Llama-2-70B's states on one of 64 GPUs
    assert shown == [f"'{16 * 68_976_648_192 // 64:,} byte'"]


def test_every_lesson_shows_a_picture():
    unpictured = [name for name in (f"{lesson}.ipynb" for lesson in LESSONS)
                  if not any("image/png" in o.get("data", {}) for cell in committed(name).cells if cell.cell_type == "code"
                             for o in cell.outputs)]
    assert not unpictured


def test_the_answers_are_not_in_the_exercise_cells():
    for lesson in LESSONS:
        for cell in committed(f"{lesson}.ipynb").cells:
            match = re.match(r'exercise\("([^"]+)"\)', cell.source) if cell.cell_type == "code" else None
            if match:
                answer = get_exercise(match.group(1)).answer.shown()
                assert f"{float(answer):.3g}" not in cell.source


def test_the_index_lists_every_lesson_and_explains_the_numbering():
    index = (COMMITTED / "README.md").read_text(encoding="utf-8")
    for lesson in LESSONS:
        assert f"({lesson}.ipynb)" in index
    assert "no 003" in index or "There is no 003" in index
    assert "pip install '.[notebooks]'" in index


# Each exercise's answer, from a published figure or hand arithmetic written out, never from the catalogue.
INDEPENDENT = {
    "params.gpt2": 124_439_808,  # GPT-2 small as transformers builds it: GPT2LMHeadModel.num_parameters()
    "params.llama2_7b": 6_738_415_616,  # meta-llama/Llama-2-7b-hf, num_parameters() (the model card's "6.74B")
    "flops.gpt3": 3.14e23,  # Brown et al. 2020, Language Models are Few-Shot Learners, Table D.1: 3.14E+23 FLOPs
    # Llama-2-7B, s = 4096, per layer: projections 2·4096·4096·(4·4096), scores 4·32·4096²·128,
    # gated MLP 6·4096·4096·11008; × 32 layers; logits 2·4096·4096·32000
    "flops.llama2_7b_forward": (32 * (2 * 4096 * 4096 * 4 * 4096 + 4 * 32 * 4096**2 * 128 + 6 * 4096 * 4096 * 11008)
                                + 2 * 4096 * 4096 * 32000) / 1e12,
    "memory.training_70b": 1850,  # Li Bojie (001): 140 + 140 + 840 + 730 = 1850 GB
    "memory.kv_gqa": 2 * 80 * 8 * 128 * 2 * 4096 * 8 / 2**30,  # K and V × layers × kv heads × d_head × 2 bytes × s × b
    "comms.allreduce": 2 * 7 / 8 * 1,  # ring all-reduce: 2(n − 1)/n of the buffer
    "comms.max_tp_4090": 2.4,  # Li Bojie (001): t ≤ 2.4 on PCIe Gen4
    "cluster.amdahl": 407.8,  # Yu Chen (000) §3.5
    "cluster.llama2_70b_days": 6 * 70e9 * 2e12 / (64 * 312e12 * 0.4) / 86400,  # 6ΨD / (n·X·U), in days
    "inference.stage_latency": 17.5,  # Li Bojie (001): 17.5 ms per stage per token
    "inference.balance_h100": 295,  # Li Bojie (001): balance batch of the H100
    "article_000.training_days": 8 * 1e12 * 450e9 / (3072 * 312e12 * 0.5) / 86400,  # 8ΨD / (n·X·U): 86.94 days
    "article_000.zero3": 16 * 175e9 / 64 / 1e9,  # 16Ψ/d in GB
    "article_001.kv_cache": 80,  # Li Bojie (001): "80 GB", which are GiB
    "article_001.max_tp_h100": 3 * 900e9 * 8192 / (989e12 * 2),  # 3·W_link·h/(X·q): 11.18 (001 floors it to 11)
    "article_002.utilization": 0.435,  # the article (002): 43.5 % for Llama-2-70B
    "article_002.gpu_hours": 6 * 34e9 * 5e9 / (312e12 * 0.35) / 3600,  # 6ΨD / (X·U) in hours: 2594.6
    "article_004.states": 3525,  # Li Wei (004) slides: 3525 GB
    "article_004.iteration_flops": 34.8,  # Li Wei (004) slides: 34.8 PFLOP per iteration
    "perf.bubble": 63 / 512,  # (p − 1)/m with p = 64, m = 3072/6
    # issue 14, each by hand or from the paper:
    "utilization.megatron_peak": 138 / 312,  # Narayanan et al. 2021 Table 1 prints 44 %
    "conventions.megatron_eq4": 8 * 300e9 * 175e9 / (1024 * 140e12) / 86400,  # 33.9 days; §5.1 prints 34
    "energy.llama2_70b": 291.42,  # Touvron et al. 2023b, Table 2
    "cost.deepseek_pretraining": 5.328e6,  # DeepSeek-AI 2024, Table 1: $5.328M
    "reliability.mtbf_2048": 30 * 24 * 60 / 2048,  # 21.1 minutes; Li Bojie (001) says "about 20 minutes"
    "pipeline.bloom_last_stage": 250880 / (12 * 14336 + 2 * 2048),  # 1.424
    "optimizations.onebit_warmup": 1 / (0.15 + 0.85 / 32),  # 5.66
    # (80 GB − 2 bytes × 70,553,706,496 / 8) / (8192 tokens × 2 × 80 × 8 × 128 × 2 bytes / 8 GPUs): 185.9
    "serving.kv_wall": int((80e9 - 2 * 70_553_706_496 / 8) / (8192 * 2 * 80 * 8 * 128 * 2 / 8)),  # how many fit: rounded down
    "serving.speculative": (1 - 0.8**5) / (1 - 0.8) / (4 * 0.05 + 1),  # Leviathan et al. 2023, Theorem 3.8: 2.80
    # issue 26. Mixtral 8x7B: 46,702,792,704 parameters as transformers builds it, less 6 of the 8 experts of each of
    # its 32 layers (3 matrices of 4096 × 14336 each), then 6 FLOPs per active parameter
    "moe.flops_per_token": 6 * (46_702_792_704 - 32 * 6 * 3 * 4096 * 14336),
    # Llama-2-70B: 80 layers of projections (Q, O: 8192²; K, V: 8192 × 1024; gate, up, down: 8192 × 28672) in NF4 at
    # 1/2 + 1/64 + 4/(64·256) bytes, the other 68,976,648,192 − 68,451,041,280 parameters in bf16
    "precision.qlora_base": (2 * (68_976_648_192 - 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672))
                             + 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672) * (1 / 2 + 1 / 64 + 4 / (64 * 256))) / 1e9,
    # Korthikanti's layer with a flash core, per GPU, s/c = 16384 tokens: 4·a·(s/c)/t + (s/c)·(34h-like terms)/t, here
    # (s/c)·(8·d_ff + 4·128·(64 + 8) + 10·8192)/8 + 4·64·(s/c)/8, for 80 layers
    "long_context.cp_activations": 80 * (4 * 64 * 16384 / 8 + 16384 * (8 * 28672 + 4 * 128 * 72 + 10 * 8192) / 8) / 1e9,
    # 2MKN at 0.802 of 312 TFLOP/s, the three operands' 2-byte values at 0.843 of 2.039 TB/s, and 54.6 µs, in µs
    "achievable.gemm_time": (2 * 4096 * 8192 * 7168 / (312e12 * 0.802)
                             + 2 * (4096 * 8192 + 8192 * 7168 + 4096 * 7168) / (2.039e12 * 0.843) + 54.6e-6) * 1e6,
}


def test_every_exercise_has_an_independent_answer():
    assert {e.id for e in all_exercises()} == set(INDEPENDENT)


@pytest.mark.parametrize("exercise_id", sorted(INDEPENDENT))
def test_the_helper_accepts_the_independent_answer_and_rejects_a_wrong_one(exercise_id):
    assert check(exercise_id, INDEPENDENT[exercise_id]).right is True
    wrong = check(exercise_id, INDEPENDENT[exercise_id] * 1.3)
    assert wrong.right is False and "wrong" in wrong.message


def test_a_wrong_answer_names_the_step_that_differs():
    # forgot Adam's 12Ψ: states typed as 2Ψ + 2Ψ = 280 GB, activations right (730 GB)
    verdict = check("memory.training_70b", 1010, states=280, activations=730)
    assert verdict.right is False and verdict.differs == "states"
    # stopped after the first step: the answer is the model states alone (16 × 70e9 bytes = 1120 GB)
    assert check("memory.training_70b", 1120).differs == "activations"
    # GB typed where GiB were asked: 10 GiB = 10.74 GB
    assert "GiB" in check("memory.kv_gqa", 10.74).message
    assert check("memory.kv_gqa").right is None  # no answer yet: neither right nor wrong


def test_a_print_flushed_in_pieces_is_one_output():
    # the kernel flushes stdout when it likes: one print may arrive as two stream messages (seen in CI,
    # perf.ipynb, a trailing "\n" on its own); normalising must give the same bytes either way
    from llm_formulas.render.documents.notebooks import normalised

    def notebook(outputs):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell("print(1); display(2); print(3)", outputs=outputs, id="c000")]
        return nb

    stream = nbformat.v4.new_output
    pieces = [stream("stream", name="stdout", text="1"), stream("stream", name="stdout", text="\n"),
              stream("display_data", data={"text/plain": "2"}),
              stream("stream", name="stdout", text="3\n"), stream("stream", name="stderr", text="warning\n")]
    whole = [stream("stream", name="stdout", text="1\n"), stream("display_data", data={"text/plain": "2"}),
             stream("stream", name="stdout", text="3\n"), stream("stream", name="stderr", text="warning\n")]
    assert notebook_text(normalised(notebook(pieces))) == notebook_text(normalised(notebook(whole)))


def _stated_minutes(lesson: str) -> int:
    """The duration a lesson states at its top: its figures' minutes, or (a lesson not yet rendered from figures)
    the "N minutes" of its opening cell."""
    import importlib

    module = importlib.import_module(f"llm_formulas.render.documents.lessons.{lesson}")
    figures = getattr(module, "F", None)
    if isinstance(figures, Figures):
        return int(figures["minutes"] / 60)
    return int(re.search(r"(\d+) minutes", module.CELLS[0][1]).group(1))


def test_the_index_gives_each_lessons_minutes_and_workshop_paths_that_add_up():
    index = (COMMITTED / "README.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| \d+ \| \[(\w+)\]\(\w+\.ipynb\) \| (\d+) \|", index, flags=re.M))
    assert set(table) == set(LESSONS)
    assert {name: int(minutes) for name, minutes in table.items()} == {name: _stated_minutes(name) for name in LESSONS}
    paths = index.split("## Workshop paths", 1)[1]
    cut, day = paths.split("**A day's course", 1)
    for text, total in ((cut, 120), (day, 360)):
        rows = re.findall(r"^\| [^|]*\| (.*) \| (\d+) \|$", text, flags=re.M)
        for notebooks_, minutes in rows:
            named = re.findall(r"\[(\w+)\]\(\w+\.ipynb\)(?: (\d+))?", notebooks_)
            assert named and all(name in LESSONS for name, _ in named)
            each = [int(m) if m else _stated_minutes(name) for name, m in named]
            assert all(int(m) == _stated_minutes(name) for name, m in named if m)
            assert sum(each) == int(minutes), notebooks_
        assert sum(int(minutes) for _, minutes in rows) == total
        assert f"**{total}**" in text
