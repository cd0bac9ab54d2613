"""Lesson: FP8 and quantization in training. Does FP8 halve the memory of training, and how does QLoRA fine-tune a
70B model on one GPU?"""

from fractions import Fraction

from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("precision", model="llama2-70b", gpu="h100-sxm", minutes=30, t=8, p=8, b=1, s=4096, B_q=64, B_q2=256,
            r_lora=16, lora_q=1, lora_k=1, lora_v=1, lora_o=1, lora_gate=1, lora_up=1, lora_down=1)
F.value("bf16_states", "memory.model_states")
F.value("fp8_states", "memory.fp8.model_states")
F.number("fp8_extra", F["fp8_states"] / F["bf16_states"] - 1, percent=True, digits=2)
F.number("fp8_peak", gpu("h100-sxm").flops("fp8"), unit="FLOP/second")
F.number("peak_ratio", F["fp8_peak"] / F["X"])
F.value("fp8_saving_layer", "memory.fp8.activations.saving")
F.number("fp8_saving", F["l"] * F["fp8_saving_layer"], unit="byte")
F.number("bf16_activations", F["l"] * F.compute("memory.activations.layer.general.selective"), unit="byte")
F.number("saving_share", F["fp8_saving"] / F["bf16_activations"], percent=True, digits=2)
F.value("bf16_weights", "memory.model_states.inference")
F.value("nf4", "memory.qlora.bytes_per_weight", digits=4)
F.number("nf4_constants", F["nf4"] - Fraction(1, 2), unit="byte/parameter", digits=3)
F.value("int8", "memory.int8.bytes_per_weight", d_in=F["h"], digits=5)
F.value("quantized", "params.quantized.linear", digits=3)
F.input("P_keep", F["P"] - F["quantized"])
F.input("P_lora", F.compute("params.lora.total"))
F.number("P_lora_shown", F["P_lora"], unit="parameter", digits=3)
F.input("q_base", F["nf4"])
F.value("frozen", "memory.lora.frozen_base")
F.value("adapters", "memory.lora.adapter_states")
F.value("qlora_states", "memory.lora.states")
F.value("lora_states", "memory.lora.states", q_base=2)
F.number("lora_share", F["P_lora"] / F["P"], percent=True, digits=2)

CELLS = [
    markdown(F.text("""
# FP8 and quantization in training: what do fewer bits buy?

> *"The {{gpu}} does {{fp8_peak}} in FP8, twice its bf16 peak. If we train {{model}} in FP8, does
> it need half the memory? And how does QLoRA fine-tune a model that size on one GPU?"*

Every number format trades range and precision for bytes and speed. Training in FP8 (the
Transformer Engine recipe: the GEMMs' inputs in 8-bit floats with per-tensor scales, everything
else in 16 or 32 bits) and fine-tuning a frozen, quantized base with small adapters (LoRA, and
QLoRA's 4-bit NormalFloat base) are the two ways fewer bits enter training. They save very
different things. This lesson derives what each stores and prices it at {{model}} on {{gpu}} GPUs
(t = {{t}}, p = {{p}} where a layout matters). Plan {{minutes}}.
""")),
    markdown(F.text("""
## 1. FP8 training stores more model state, not less

FP8 speeds up the GEMMs, but the optimizer still needs its fp32 master weights and moments, the
gradients stay in bf16, and the forward and backward GEMMs each want the weight in FP8, one of
them transposed. Transformer Engine keeps the bf16 weight, an FP8 copy and an FP8 transposed
copy: 18 bytes per parameter where bf16 mixed precision keeps 16.
""")),
    code("""
M = model("llama2-70b")
derive("memory.fp8.model_states")
fp8 = put("memory.fp8.model_states", **M)
bf16 = put("memory.model_states", **M)"""),
    markdown(F.text("""
{{fp8_states}} against {{bf16_states}}: {{fp8_extra}} *more*. What FP8 saves is activations: the
inputs of the four GEMMs of each layer are saved for the backward pass in one byte instead of
two. Under tensor parallelism t = {{t}}, with micro-batch {{b}} of {{s}} tokens, that is
{{fp8_saving_layer}} per layer, {{fp8_saving}} for the {{l}} layers, {{saving_share}} of their
{{bf16_activations}} with selective recompute:
""")),
    code(F.code("""
derive("memory.fp8.activations.saving")
saving = put("memory.fp8.activations.saving", **M, t={{t}}, b={{b}}, s={{s}})""")),
    markdown(F.text("""
And it buys speed: the FP8 tensor cores peak at {{peak_ratio}} times the bf16 rate. How much of that
reaches a training step depends on how much of the step is GEMMs at all, and on how close those
GEMMs come to the peak; the lesson on achievable FLOP/s takes that up. The honest summary:
**FP8 training is a speed optimization that costs a little memory for the states and saves some
on the activations.**

## 2. Quantized weights: how many bytes is a 4-bit weight?

QLoRA stores the frozen base in 4-bit NormalFloat: half a byte per weight, plus the quantization
constants. Each block of B_q = {{B_q}} weights has its own scale, itself quantized to 8 bits in
blocks of B_q2 = {{B_q2}} with an fp32 scale per block of those (double quantization). The
engine derives the bytes per weight:
""")),
    code("""
derive("memory.qlora.bytes_per_weight")
nf4 = put("memory.qlora.bytes_per_weight", B_q=64, B_q2=256)"""),
    markdown(F.text("""
{{nf4}} bytes per weight: the constants add {{nf4_constants}} to the half byte. LLM.int8() keeps
one byte and an fp32 scale per row of d_in weights, {{int8}} bytes per weight for the rows of
h = {{h}}. Only the projection matrices are quantized, {{quantized}} of the {{P}}; embeddings,
norms and the output head stay in 16 bits. (The same model's weights in bf16 take {{bf16_weights}}.)

## 3. LoRA and QLoRA: train a few parameters, store the rest frozen

LoRA freezes the base and learns, for each targeted projection of shape d_in × d_out, two small
matrices of rank r: r·(d_in + d_out) parameters. At r = {{r_lora}} on every projection of
{{model}} that is {{P_lora_shown}}, {{lora_share}} of the model. Only the adapters carry gradients and
Adam states (16 bytes each, the fp32 master copy included); the frozen base carries its weights
alone. The picture sets the bytes per parameter of each recipe side by side:
""")),
    code("""picture("precision_bytes", model="llama2-70b", r_lora=16)"""),
    code(F.code("""
derive("memory.lora.states")
quantized = evaluate("params.quantized.linear", **M)
adapters = evaluate("params.lora.total", **M, r_lora={{r_lora}}, lora_q=1, lora_k=1, lora_v=1, lora_o=1, lora_gate=1, lora_up=1, lora_down=1)
qlora = put("memory.lora.states", P=M["P"], P_keep=M["P"] - quantized.value, P_lora=adapters.value, q_base=nf4.value)""")),
    markdown(F.text("""
With a 4-bit base the whole fine-tuning state of {{model}} is {{qlora_states}}: the frozen base
{{frozen}} and the adapters' states {{adapters}}. With a bf16 base (plain LoRA) it is
{{lora_states}}, and full fine-tuning in bf16 mixed precision needs the {{bf16_states}} of section 1.
That is how QLoRA fits a 70B fine-tuning run on one GPU of {{M_gpu}}, with the activations on top
(the adapters add little to them; gradient checkpointing keeps the rest small).

What fewer bits cost is accuracy, and no formula here measures it: FP8 needs per-tensor scaling
and keeps the sensitive parts (the attention softmax, the norms, the master weights) in higher
precision; NF4 is chosen so that normally distributed weights lose as little as 4 bits allow. The
catalogue counts the bytes; whether a recipe trains as well is an experiment.

## Exercise

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step that
differs. The solution is not in this notebook.
""")),
    code("""exercise("precision.qlora_base")"""),
    code("""
answer = None  # GB
check("precision.qlora_base", answer)"""),
    markdown("""
What the checker says to a reader who took 4 bits as exactly half a byte and forgot the constants
(the 16-bit embeddings, norms and head counted right):
"""),
    code("""check("precision.qlora_base", 35.25)"""),
]
