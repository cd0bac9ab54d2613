"""Lesson: utilization from what a run measured. What share of the A100 did Megatron and Korthikanti reach?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Utilization: what share of the GPU did a published run reach?

> *"Megatron-LM reports 138 teraFLOP/s per GPU for a 3.6B model. Is that good?"*

A paper prints a measured rate (teraFLOP/s per GPU), a throughput (tokens per second) or an
iteration time. Each turns into a utilization once divided by what the GPUs could do. This
lesson derives the three forms the catalogue states and evaluates them on the papers' own
figures; `llm-formulas validate` runs every such row of the papers. About 15 minutes.
"""),
    markdown("""
## 1. Percent of peak from a measured rate

Megatron's Table 1 prints the achieved rate X_run; its "percentage of theoretical peak" is X_run/X.
"""),
    code("""
derive("utilization.of_peak")
put("utilization.of_peak", X_run=138 * 10**12, X=gpu("a100-80gb")["X"])"""),
    markdown("""
## 2. MFU of one iteration, and the hardware FLOPs under selective recompute

Korthikanti et al. time one iteration of B sequences; the model FLOPs over n·X·τ are the MFU.
Selective recompute runs QKᵀ and scores·V forward once more: 4Bs²hl extra FLOPs the hardware
executes. Their GPT-3 175B row: B = 64 on 64 A100s, 13.75 s.
"""),
    code("""
derive("utilization.mfu.iteration")
gpt3 = dict(B=64, s=2048, l=96, h=12288, V=51200, n=64, X=gpu("a100-80gb")["X"], tau="13.75")
put("utilization.mfu.iteration", **gpt3)
derive("utilization.hfu.selective")
put("utilization.hfu.selective", **gpt3)"""),
    markdown("""
The paper prints 51.4 % and 52.8 %. The first is reproduced; the second is not, and the
conventions lesson proves why (Eq. 8 counts the recompute three times).

## 3. MFU from a token throughput

PaLM counts 6N + 12·L·H·Q·T FLOPs per token (the full attention square, three passes) and
divides the throughput's FLOP/s by the chips' peak: 238.3K tokens/s on 6144 TPU v4.
"""),
    code("""
derive("utilization.mfu.throughput")
put("utilization.mfu.throughput", R_tok="238.3e3", P="540.35e9", l=118, a=48, d_head=256, s=2048, n=6144, X=275 * 10**12)"""),
    markdown("""
PaLM's Table 3 sets Megatron-Turing NLG beside it: 65.43K tokens/s on 2240 A100s, 29.7 %
without self-attention and 30.2 % with it. Both come out only with N = 529.6B, the count of
MT-NLG's shape (Narayanan's Table 1); the 530B the table names gives 29.77 % and 30.27 %,
each a printed digit higher. `llm-formulas validate` shows both numbers and the proof:
"""),
    code("""
derive("utilization.mfu.throughput.weights", only=("MFU_weights", "Ψ_MTNLG", "N = 530B", "6·ΔΨ·R/(nX)"))
mtnlg = dict(R_tok="65.43e3", n=2240, X=gpu("a100-80gb")["X"])
put("utilization.mfu.throughput.weights", P="529.6e9", **mtnlg)
put("utilization.mfu.throughput.weights", P="530e9", **mtnlg)"""),
    markdown("""
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
reports 52 % of peak with the sparse datasheet figure in the denominator would be reporting
104 % of what its tensor cores can do on dense matrices: the numbers only mean something when
all three choices are written down, as every formula here writes them.

The same arithmetic reads in the other direction: given a target utilization and a model, it
says what rate per GPU a run must sustain, and `llm-formulas estimate --achieved TFLOPS` takes
a measured rate instead of a guessed utilization and reports the run's days, GPU-hours and
footprint from it.
"""),

    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("utilization.megatron_peak")"""),
    code("""
answer = None  # a fraction of the peak
check("utilization.megatron_peak", answer)"""),
]
