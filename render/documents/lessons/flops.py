"""Lesson: FLOPs. Where does 6ΨD come from, and when is it wrong?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("flops", model="gpt3-175b", minutes=40, compare_models=("llama2-7b",), B=1536, s=2048)
F.number("scores_share", F["s"] / (6 * F["h"]), percent=True, digits=2)
LONG = F.model_values("llama2-7b") | {"b": 1, "s": 32768}
F.number("long_s", LONG["s"])
F.number("long_h", LONG["h"])
F.number("scores_over_mlp", F.compute("flops.decoder.attention.scores", **LONG) / F.compute("flops.decoder.mlp", **LONG))
_eager = F.compute("flops.decoder.training", **LONG)
_causal = _eager - 3 * LONG["l"] * (F.compute("flops.decoder.attention.scores", **LONG)
                                    - F.compute("flops.decoder.attention.scores.causal", **LONG))
_six = F.compute("flops.training.approx", P=LONG["P"], D=LONG["s"])
F.number("short_eager", 1 - _six / _eager, percent=True, digits=2)
F.number("short_causal", 1 - _six / _causal, percent=True, digits=2)

CELLS = [
    markdown(F.text("""
# FLOPs: where does 6ΨD come from, and when is it wrong?

> *"How many FLOPs does it take to train GPT-3, and why does everybody multiply by six?"*

Compute budgets, GPU counts and training times all start from the FLOPs of training. The
shortcut C = 6ΨD (six floating-point operations per parameter per token) is in every paper
since Kaplan et al. (2020). This lesson derives it from the matrix multiplications of one
transformer layer, with the engine checking each step, and then measures what the shortcut
leaves out: the attention scores (which grow with the sequence length s) and the logits
(which grow with the vocabulary V). It ends with Megatron's formula, which counts the
recomputed forward pass too. The model is {{model}} (with Llama-2-7B for long sequences).
Plan about {{minutes}}. The counts here are the ones PyTorch's own `FlopCounterMode` reports for
a real forward pass of the same model (the project's tests compare them exactly).
""")),
    markdown(F.text("""
## 1. One GEMM: 2·M·K·N

Multiplying an M×K matrix by a K×N matrix takes M·N dot products of length K: K multiplies and
K − 1 adds each. The engine proves that 2MKN is this count up to a relative error that
vanishes as K grows:
""")),
    code("""derive("flops.gemm")"""),
    markdown(F.text("""
## 2. One layer, GEMM by GEMM

For b sequences of s tokens (b·s rows) a GPT layer does: the Q, K, V projections (3 GEMMs of
h×h: 6bsh²), the scores QKᵀ (2bs²h), the scores times V (2bs²h), the output projection
(2bsh²), and the MLP's two GEMMs of h×4h (16bsh²). The engine defines each and proves the sum:
""")),
    code("""derive("flops.layer.forward")"""),
    markdown(F.text("""
The whole forward pass adds the logits (2bshV) and factors neatly as
24·b·s·l·h²·(1 + s/(6h) + V/(12lh)):
""")),
    code("""derive("flops.forward")"""),
    markdown(F.text("""
## 3. Backward is twice forward, training is three times

Every GEMM Y = XW has two GEMMs in its backward pass, one for the input's gradient and one for
the weight's, each as large as the forward one. So backward = 2 × forward and a training step
= 3 × forward. With Ψ ≈ 12lh² and D = b·s tokens the step is 6ΨD times (1 + s/(6h) + ...):
""")),
    code("""
derive("flops.backward")
derive("flops.training.approx")"""),
    markdown(F.text("""
Put {{model}} through it: one iteration of Megatron's batch, B = {{B}} sequences of s = {{s}}
tokens, exactly, and by the shortcut:
""")),
    code(F.code("""
G = model("gpt3-175b")
step = put("flops.training", **G, b={{B}}, s={{s}})
short = put("flops.training.approx", P=G["P"], D={{B}} * {{s}})
note(f"Exact / 6ΨD = {float(step) / float(short):.4f}: the scores and logits add {float(step) / float(short) - 1:.1%} at s = {{s}}, h = {{h}}.")""")),
    markdown(F.text("""
## 4. When 6ΨD is wrong: long sequences

The error term s/(6h) is the attention scores' share. For {{model}} at s = {{s}} it is
{{scores_share}}; for a 7B model (h = {{long_h}}) at s = {{long_s}} the scores QKᵀ and scores·V
are {{scores_over_mlp}} times the MLP's FLOPs. The picture shows, for Llama-2-7B, which GEMMs do
the work as s grows (counting the full s × s square of scores, as eager attention computes it):
""")),
    code(F.code("""picture("flops_shares", model="llama2-7b", seqs=(512, 1024, 2048, 4096, 8192, 16384, {{long_s}}))""")),
    markdown(F.text("""
## 5. Recompute and Megatron's 96

With full activation recompute the forward pass runs twice: 4 × forward, 8ΨD. Megatron
(Narayanan et al. 2021) reports 96·B·s·l·h²·(1 + s/(6h) + V/(16lh)): the recomputed case,
where the logits are not recomputed (3 × the logits, 4 × the layers). The engine proves the
catalogue's formula equals that accounting:
""")),
    code(F.code("""
derive("flops.megatron")
megatron = put("flops.megatron", **G, B={{B}}, s={{s}})""")),
    markdown(F.text("""
And inference: one token through the model costs the forward pass only, 2Ψ per token (the
Bilibili article prints 6 here, a slip the article lesson shows with its refutation):
""")),
    code("""derive("flops.inference.per_token")"""),
    markdown(F.text("""
Why bother with the exact count when the shortcut is within a few percent? Because the error
is not random: it always has the same sign (6ΨD undercounts) and it grows with the context
length, which is exactly the knob that long-context training turns. How short a run planned
with 6ΨD at s = {{long_s}} on a 7B model falls depends on the attention kernel. Eager attention
computes the whole s × s square of scores, and against that count 6ΨD is short by
{{short_eager}} of the compute; a causal kernel (FlashAttention and its kin) computes only the
s(s + 1)/2 scores a token may see (`flops.decoder.attention.scores.causal`), and against that
6ΨD is short by {{short_causal}}. Either way, the plan is wrong before the first step.

So: **6ΨD is the training FLOPs when the sequence is short next to 6h and the vocabulary small
next to 12lh, without recompute.** For long contexts use the exact count (`flops.training`, or
`llm-formulas flops --model NAME --batch B --seq S`), and with recompute 8ΨD.

## Exercises

Type your answer in place of `None`. A wrong answer gets the slip it matches or the step that
differs (pass your intermediate values as keywords). Solutions are kept out of the notebook.
""")),
    code("""exercise("flops.gpt3")"""),
    code("""
answer = None  # FLOP, e.g. 1.2e22
check("flops.gpt3", answer)"""),
    code("""exercise("flops.llama2_7b_forward")"""),
    code("""
answer = None  # TFLOP
check("flops.llama2_7b_forward", answer)"""),
    markdown(F.text("""
The checker on a common slip, 6ΨD used for a forward pass (three times too much):
""")),
    code("""check("flops.llama2_7b_forward", 6 * 6.738e9 * 4096 / 1e12)"""),
]
