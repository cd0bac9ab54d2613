"""Lesson: parameters. Is Llama-2-70B really 70 billion parameters, and why does 12·l·h² say 64?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Parameters: is Llama-2-70B really 70 billion, and why does 12·l·h² say 64?

> *"Everyone multiplies 12 × layers × hidden². For Llama-2-70B that gives 64 billion. The model
> card says 70. Which one do I put into my memory estimate?"*

Every sizing starts from the parameter count Ψ: 16Ψ bytes of training state, 6Ψ FLOPs per
token, 2Ψ bytes to serve. The rule of thumb Ψ ≈ 12·l·h² comes from the classic GPT layer
(Bilibili's infra article derives it in its §3.1, Narayanan et al. 2021 use it). This lesson
derives that rule with the engine, shows the exact error it makes, then counts the layer of a
modern model (Llama: grouped-query attention, a gated SwiGLU MLP, RMSNorm, no biases, an untied
output head) and finds out why 12·l·h² misses it. Every count here equals what `transformers`
builds from the model's config: the project's tests count the real model's parameters on the
meta device and compare. Plan 30 to 40 minutes.
"""),
    markdown("""
## 1. The classic GPT layer

Attention holds four h×h matrices (Q, K, V and the output projection) and their biases; the
MLP goes h → 4h → h, two matrices of 4h² with biases; two LayerNorms hold a scale and a shift
each. The engine builds each block from its shapes and proves the closed forms:
"""),
    code("""
derive("params.layer.attention")
derive("params.layer")"""),
    markdown("""
The whole model adds the token embedding (V×h), a learned position table (s×h) and the final
LayerNorm; GPT ties the output head to the embedding. Dropping everything but the leading term
gives 12·l·h², and the engine proves the approximation with its exact relative error, which
vanishes as h grows:
"""),
    code("""
derive("params.total")
derive("params.approx")"""),
    markdown("""
For GPT-3 175B (l = 96, h = 12288, V = 50257, s = 2048) the rule is excellent:
"""),
    code("""
G = model("gpt3-175b")
exact_gpt3 = evaluate("params.decoder.total", **G)
rule_gpt3 = put("params.approx", **G)
note(f"Exact: **{exact_gpt3}**; the rule: **{rule_gpt3}**; the rule / exact = {float(rule_gpt3) / float(exact_gpt3):.4f}.")"""),
    markdown("""
## 2. Llama is not GPT

Now the model of the opening question. Its numbers:
"""),
    code("""
M = model("llama2-70b")
note(", ".join(f"{name} = {M[name]:,}" for name in ("h", "a", "g", "d_head", "d_ff", "l", "V")))
rule = put("params.approx", **M)
P = evaluate("params.decoder.total", **M)
note(f"Exact count: **{P}** ({P.exact}). The rule misses {float(P) / float(rule) - 1:.1%}.")"""),
    markdown("""
Two changes in the block explain the gap, in opposite directions. **Grouped-query attention**:
only g = 8 of the 64 heads have their own K and V, so K and V are h×(g·d_head) = h×1024 instead
of h×h; attention shrinks from 4h² to 2h² + 2·h·g·d_head. **The gated MLP** has three matrices
(gate, up, down) of h×d_ff with d_ff = 28672 = 3.5h: 10.5h² instead of 8h². The general
decoder formulas of the catalogue take these as inputs (switches for biases, gating, norms,
tied heads), and the engine proves that with the classic switch values they reduce to the GPT
count above:
"""),
    code("""
derive("params.decoder.attention")
attention = put("params.decoder.attention", **M, label="Llama-2-70B attention, one layer")
mlp = put("params.decoder.mlp", **M, label="Llama-2-70B gated MLP, one layer")"""),
    code("""derive("params.decoder.classic")"""),
    markdown("""
Per layer, attention is 151M parameters (GPT-style would be 268M) and the MLP 705M (GPT-style
537M): the MLP's gain outweighs the attention's saving, and the untied 32000-row head adds
another 262M. So the honest Ψ of Llama-2-70B is 68.98 billion, 7 % above the rule.

## 3. Where the parameters sit

Across these models the MLP holds two thirds (GPT-3, Llama-2-7B) to four fifths (Llama-2-70B,
thanks to GQA and its wide MLP) of the parameters, attention a third down to a sixth, and
embeddings and head matter only for small models (in Llama-2-7B the untied
head and embeddings are 4 % of the count).
"""),
    code("""picture("params_breakdown", models=("llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b"))"""),
    markdown("""
The same bookkeeping decides what tensor parallelism splits. Attention and MLP weights are cut
t ways; the norms are replicated on every rank, and the embedding and head are split over the
vocabulary. For a dense model the replicated part is 2h parameters per layer (sixteen
thousand for Llama-2-70B), negligible next to the hundreds of millions that split, which is why 16Ψ/(t·p) is a good estimate
of a rank's model states.

Which number goes into a memory estimate? **The exact count.** A 7 % error in Ψ is a 7 %
error in 16Ψ bytes, 77 GB for this model: an entire GPU. The rule is for the back of an
envelope; the catalogue's `params.decoder.total` is for plans, and `llm-formulas params
--model llama2-70b` prints it split by component.

## Exercises

Type an exact count in place of `None`. The helper says right or wrong, and on wrong which
step differs (pass your per-step values as keywords; the question names the steps). The
solutions are not in this notebook (`llm_formulas.render.documents.exercises.solution`).
"""),
    code("""exercise("params.gpt2")"""),
    code("""
answer = None  # a whole number of parameters
check("params.gpt2", answer)"""),
    code("""exercise("params.llama2_7b")"""),
    code("""
answer = None  # a whole number of parameters
check("params.llama2_7b", answer)"""),
    markdown("""
A reader who counted Llama-2-7B's MLP with two matrices (GPT style) learns where the slip is:
"""),
    code("""check("params.llama2_7b", 6.2e9, attention=67108864, mlp=2 * 4096 * 11008)"""),
]
