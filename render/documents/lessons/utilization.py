"""Lesson: utilization from what a run measured. What share of the A100 did Megatron and Korthikanti reach?"""

from render.documents.notebooks import code, markdown

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
]
