"""Lesson: utilization from what a run measured. What share of the A100 did Megatron and Korthikanti reach?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("utilization", model="gpt3-175b", gpu="a100-80gb", minutes=15)
F.published("rate_36", "megatron2021.t1.3.6B.peak", measured="X_run")
F.published("share_36", "megatron2021.t1.3.6B.peak")
F.published("k_B", "korthikanti2022.t5.175B.mfu", input="B")
F.published("k_n", "korthikanti2022.t5.175B.mfu", input="n")
F.published("k_tau", "korthikanti2022.t5.175B.mfu", measured="tau")
F.published("k_mfu", "korthikanti2022.t5.175B.mfu")
F.published("k_hfu", "korthikanti2022.t5.175B.hfu")
F.published("palm_rate", "palm2022.b.mfu", measured="R_tok")
F.published("palm_n", "palm2022.b.mfu", input="n")
F.published("mt_rate", "palm2022.t3.mtnlg.mfu", measured="R_tok")
F.published("mt_n", "palm2022.t3.mtnlg.mfu", input="n")
F.published("mt_no_attention", "palm2022.t3.mtnlg.mfu_no_attention")
F.published("mt_mfu", "palm2022.t3.mtnlg.mfu")
F.published("mt_P_named", "palm2022.t3.mtnlg.mfu", input="P")
F.number("mt_P_shape", "529.6e9", unit="parameter", digits=4)
F.number("mt_530_no_attention", F.compute("utilization.mfu.throughput.weights", P=F["mt_P_named"], R_tok=F["mt_rate"],
                                          n=F["mt_n"], X=F["X"]), percent=True, digits=4)
F.number("mt_530", F["mt_530_no_attention"] * F["mt_mfu"] / F["mt_no_attention"], percent=True, digits=4)
F.published("paper_share_1t", "megatron2021.t1.1T.peak")
F.number("sparse_reading", 2 * F["paper_share_1t"], percent=True, digits=3)

CELLS = [
    markdown(F.text("""
# Utilization: what share of the GPU did a published run reach?

> *"Megatron-LM reports {{rate_36}} per {{gpu}} for a 3.6B model. Is that good?"*

A paper prints a measured rate (teraFLOP/s per GPU), a throughput (tokens per second) or an
iteration time. Each turns into a utilization once divided by what the GPUs could do. This
lesson derives the three forms the catalogue states and evaluates them on the papers' own
figures; `llm-formulas validate` runs every such row of the papers. The running example is {{model}}.
About {{minutes}}.
""")),
    markdown(F.text("""
## 1. Percent of peak from a measured rate

Megatron's Table 1 prints the achieved rate X_run; its "percentage of theoretical peak" is X_run/X,
{{share_36}} for the 3.6B row:
""")),
    code("""
derive("utilization.of_peak")
put("utilization.of_peak", X_run=138 * 10**12, X=gpu("a100-80gb")["X"])"""),
    markdown(F.text("""
## 2. MFU of one iteration, and the hardware FLOPs under selective recompute

Korthikanti et al. time one iteration of B sequences; the model FLOPs over n·X·τ are the MFU.
Selective recompute runs QKᵀ and scores·V forward once more: 4Bs²hl extra FLOPs the hardware
executes. Their {{model}} row: B = {{k_B}} on {{k_n}} A100s, {{k_tau}} per iteration.
""")),
    code("""
derive("utilization.mfu.iteration")
gpt3 = dict(B=64, s=2048, l=96, h=12288, V=51200, n=64, X=gpu("a100-80gb")["X"], tau="13.75")
put("utilization.mfu.iteration", **gpt3)
derive("utilization.hfu.selective")
put("utilization.hfu.selective", **gpt3)"""),
    markdown(F.text("""
The paper prints {{k_mfu}} and {{k_hfu}}. The first is reproduced; the second is not, and the
conventions lesson proves why (Eq. 8 counts the recompute three times).

## 3. MFU from a token throughput

PaLM counts 6N + 12·L·H·Q·T FLOPs per token (the full attention square, three passes) and
divides the throughput's FLOP/s by the chips' peak: {{palm_rate}} on {{palm_n}} TPU v4.
""")),
    code("""
derive("utilization.mfu.throughput")
put("utilization.mfu.throughput", R_tok="238.3e3", P="540.35e9", l=118, a=48, d_head=256, s=2048, n=6144, X=275 * 10**12)"""),
    markdown(F.text("""
PaLM's Table 3 sets Megatron-Turing NLG beside it: {{mt_rate}} on {{mt_n}} A100s,
{{mt_no_attention}} without self-attention and {{mt_mfu}} with it. Both come out only with
N = {{mt_P_shape}}, the count of MT-NLG's shape (Narayanan's Table 1); the {{mt_P_named}} the
table names gives {{mt_530_no_attention}} and {{mt_530}}, each a printed digit higher. `llm-formulas validate` shows both numbers and the proof:
""")),
    code("""
derive("utilization.mfu.throughput.weights", only=("MFU_weights", "Ψ_MTNLG", "N = 530B", "6·ΔΨ·R/(nX)"))
mtnlg = dict(R_tok="65.43e3", n=2240, X=gpu("a100-80gb")["X"])
put("utilization.mfu.throughput.weights", P="529.6e9", **mtnlg)
put("utilization.mfu.throughput.weights", P="530e9", **mtnlg)"""),
    markdown(F.text("""
The papers' rows side by side, each printed figure beside the catalogue's formula at the paper's
own inputs:
""")),
    code("""picture("utilization_rows")"""),
    markdown(F.text("""
## 4. What the three forms have in common, and where they part

All three divide the same thing, FLOPs the model needs, by the same thing, FLOPs the chips
could have done in the time. They differ in what the paper measured. A rate per GPU
(Megatron's Table 1) already is FLOPs per second: the only question left is which FLOPs the
authors counted. Narayanan et al. count 96·B·s·l·h²(1 + s/6h + V/16lh) per iteration, the
full-recompute count, so their "percentage of theoretical peak" is a hardware utilization in
Korthikanti's later vocabulary, not a model FLOPs utilization: a run that recomputes the
forward pass gets credit for doing it twice. An iteration time (Korthikanti's Table 5) needs
the FLOPs of one iteration, and here the two counts split: model FLOPs, the work the model
requires whatever the implementation, and hardware FLOPs, the work the GPUs actually executed,
recompute included. A token throughput (PaLM's Appendix B) needs FLOPs per token, and PaLM adds
the attention matmuls over the full square, 12·L·H·Q·T per token, to 6N.

Each choice is a convention, and a paper's figure can only be checked with the paper's own
convention. That is why the catalogue keeps the physical count (what the hardware runs) and,
separately, each paper's formula exactly as printed; the conventions lesson proves the
difference between them term by term. When you read a utilization in a paper, ask three
questions before you compare it with anything: which FLOPs does the numerator count (model or
hardware, with or without attention, causal or full square), what peak does the denominator
use (dense or the datasheet's sparse figure, which is twice as large), and over what time
(one iteration, a whole run with its restarts, or GPU-hours including failures). A run that
reports {{paper_share_1t}} of peak with the sparse datasheet figure in the denominator would be reporting
{{sparse_reading}} of what its tensor cores can do on dense matrices: the numbers only mean something when
all three choices are written down, as every formula here writes them.

The same arithmetic reads in the other direction: given a target utilization and a model, it
says what rate per GPU a run must sustain, and `llm-formulas estimate --achieved TFLOPS` takes
a measured rate instead of a guessed utilization and reports the run's days, GPU-hours and
footprint from it.
""")),

    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (a percentage for a fraction, the sparse peak). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("utilization.megatron_peak")"""),
    code("""
answer = None  # a fraction of the peak
check("utilization.megatron_peak", answer)"""),
]
