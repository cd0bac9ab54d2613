"""Lesson: parameters. Is Llama-2-70B really 70 billion parameters, and why does 12·l·h² say less?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("params", model="llama2-70b", minutes=40, compare_models=("gpt3-175b", "llama2-7b", "llama2-13b"))
GPT3, LLAMA7 = F.model_values("gpt3-175b"), F.model_values("llama2-7b")
F.value("rule", "params.approx")
for name in ("l", "h", "V"):
    F.number(f"gpt3_{name}", GPT3[name])
F.number("gpt3_s", 2048)  # GPT-3's context, the rows of its position table (Brown et al. 2020, Table 2.1)
F.number("kv_width", F["g"] * F["d_head"])
F.number("ff_ratio", F["d_ff"] / F["h"])
F.value("attention", "params.decoder.attention")
F.value("attention_gpt", "params.layer.attention")
F.value("mlp", "params.decoder.mlp")
F.value("mlp_gpt", "params.layer.mlp")
F.value("head", "params.decoder.head")
F.number("P_digits", F["P"], unit="parameter", digits=4)
F.number("over_rule", F["P"] / F["rule"] - 1, percent=True, digits=1)
F.number("mlp_share_gpt3", GPT3["l"] * F.compute("params.decoder.mlp", **GPT3) / GPT3["P"], percent=True, digits=2)
F.number("mlp_share", F["l"] * F["mlp"] / F["P"], percent=True, digits=2)
F.number("ends_share_7b", (F.compute("params.decoder.head", **LLAMA7) + F.compute("params.decoder.embeddings", **LLAMA7))
         / LLAMA7["P"], percent=True, digits=1)
F.number("replicated", 2 * F["h"])
F.number("rule_error_bytes", 16 * (F["P"] - F["rule"]), unit="byte")

CELLS = [
    markdown(F.text("""
# Parameters: is {{model}} really 70 billion, and why does 12·l·h² say {{rule}}?

> *"Everyone multiplies 12 × layers × hidden². For {{model}} that gives {{rule}}. The model
> card says 70 billion. Which one do I put into my memory estimate?"*

Every sizing starts from the parameter count Ψ: 16Ψ bytes of training state, 6Ψ FLOPs per
token, 2Ψ bytes to serve. The rule of thumb Ψ ≈ 12·l·h² comes from the classic GPT layer
(Bilibili's infra article derives it in its §3.1, Narayanan et al. 2021 use it). This lesson
derives that rule with the engine, shows the exact error it makes, then counts the layer of a
modern model (Llama: grouped-query attention, a gated SwiGLU MLP, RMSNorm, no biases, an untied
output head) and finds out why 12·l·h² misses it. Every count here equals what `transformers`
builds from the model's config: the project's tests count the real model's parameters on the
meta device and compare. Plan {{minutes}}.
""")),
    markdown(F.text("""
## 1. The classic GPT layer

Attention holds four h×h matrices (Q, K, V and the output projection) and their biases; the
MLP goes h → 4h → h, two matrices of 4h² with biases; two LayerNorms hold a scale and a shift
each. The engine builds each block from its shapes and proves the closed forms:
""")),
    code("""
derive("params.layer.attention")
derive("params.layer")"""),
    markdown(F.text("""
The whole model adds the token embedding (V×h), a learned position table (s×h) and the final
LayerNorm; GPT ties the output head to the embedding. Dropping everything but the leading term
gives 12·l·h², and the engine proves the approximation with its exact relative error, which
vanishes as h grows:
""")),
    code("""
derive("params.total")
derive("params.approx")"""),
    markdown(F.text("""
For GPT-3 175B (l = {{gpt3_l}}, h = {{gpt3_h}}, V = {{gpt3_V}}, s = {{gpt3_s}}) the rule is excellent:
""")),
    code("""
G = model("gpt3-175b")
exact_gpt3 = evaluate("params.decoder.total", **G)
rule_gpt3 = put("params.approx", **G)
note(f"Exact: **{exact_gpt3}**; the rule: **{rule_gpt3}**; the rule / exact = {float(rule_gpt3) / float(exact_gpt3):.4f}.")"""),
    markdown(F.text("""
## 2. Llama is not GPT

Now the model of the opening question. Its numbers:
""")),
    code("""
M = model("llama2-70b")
note(", ".join(f"{name} = {M[name]:,}" for name in ("h", "a", "g", "d_head", "d_ff", "l", "V")))
rule = put("params.approx", **M)
P = evaluate("params.decoder.total", **M)
note(f"Exact count: **{P}** ({P.exact}). The rule misses {float(P) / float(rule) - 1:.1%}.")"""),
    markdown(F.text("""
Two changes in the block explain the gap, in opposite directions. **Grouped-query attention**:
only g = {{g}} of the {{a}} heads have their own K and V, so K and V are h×(g·d_head) = h×{{kv_width}}
instead of h×h; attention shrinks from 4h² to 2h² + 2·h·g·d_head. **The gated MLP** has three
matrices (gate, up, down) of h×d_ff with d_ff = {{d_ff}}, {{ff_ratio}} times h: 3 × {{ff_ratio}} h²
instead of 8h². The general
decoder formulas of the catalogue take these as inputs (switches for biases, gating, norms,
tied heads), and the engine proves that with the classic switch values they reduce to the GPT
count above:
""")),
    code("""
derive("params.decoder.attention")
attention = put("params.decoder.attention", **M, label="Llama-2-70B attention, one layer")
mlp = put("params.decoder.mlp", **M, label="Llama-2-70B gated MLP, one layer")"""),
    code("""derive("params.decoder.classic")"""),
    markdown(F.text("""
Per layer, attention is {{attention}} (GPT-style would be {{attention_gpt}}) and the MLP {{mlp}}
(GPT-style {{mlp_gpt}}): the MLP's gain outweighs the attention's saving, and the untied
{{V}}-row head adds another {{head}}. So the honest Ψ of {{model}} is {{P_digits}}, {{over_rule}}
above the rule.

## 3. Where the parameters sit

Across these models the MLP holds from about two thirds (GPT-3: {{mlp_share_gpt3}}) to four fifths
({{model}}: {{mlp_share}}, thanks to GQA and its wide MLP) of the parameters, attention a third
down to a sixth, and embeddings and head matter only for small models (in Llama-2-7B the untied
head and embeddings are {{ends_share_7b}} of the count).
""")),
    code("""picture("params_breakdown", models=("llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b"))"""),
    markdown(F.text("""
The same bookkeeping decides what tensor parallelism splits. Attention and MLP weights are cut
t ways; the norms are replicated on every rank, and the embedding and head are split over the
vocabulary. For a dense model the replicated part is 2h parameters per layer ({{replicated}}
for {{model}}), negligible next to the hundreds of millions that split, which is why 16Ψ/(t·p) is
a good estimate of a rank's model states.

Which number goes into a memory estimate? **The exact count.** An error of {{over_rule}} in Ψ is
as large an error in 16Ψ bytes, {{rule_error_bytes}} for this model: an entire GPU. The rule is
for the back of an
envelope; the catalogue's `params.decoder.total` is for plans, and `llm-formulas params
--model llama2-70b` prints it split by component.

## Exercises

Type an exact count in place of `None`. The helper says right or wrong, and on wrong which
step differs (pass your per-step values as keywords; the question names the steps). The
solutions are not in this notebook (`llm_formulas.render.documents.exercises.solution`).
""")),
    code("""exercise("params.gpt2")"""),
    code("""
answer = None  # a whole number of parameters
check("params.gpt2", answer)"""),
    code("""exercise("params.llama2_7b")"""),
    code("""
answer = None  # a whole number of parameters
check("params.llama2_7b", answer)"""),
    markdown(F.text("""
A reader who counted Llama-2-7B's MLP with two matrices (GPT style) learns where the slip is:
""")),
    code("""check("params.llama2_7b", 6.2e9, attention=67108864, mlp=2 * 4096 * 11008)"""),
]
