"""Lesson: achievable against advertised FLOP/s. What does a GEMM really reach on an A100, and why do trained runs report
40 to 55 % of the datasheet?"""

from llm_formulas.formulas.data.calibration import a100
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

CALIBRATED = a100().values()  # eta_gemm, eta_mem, tau_k: fitted on Megatron-LM 2021 Table 1
F = Figures("achievable", model="llama2-70b", gpu="a100-80gb", minutes=25, compare_gpus=("h100-sxm",), t=8, q=2,
            **CALIBRATED)
F.number("sparse", 2 * F["X"], unit="FLOP/second")
F.number("tf32", gpu("a100-80gb").flops("tf32"), unit="FLOP/second")
F.number("fp32", gpu("a100-80gb").flops("fp32"), unit="FLOP/second")
F.number("eta_gemm_percent", F["eta_gemm"], percent=True, digits=3)
F.number("eta_mem_percent", F["eta_mem"], percent=True, digits=3)
F.number("tau_us", F["tau_k"], unit="second")
F.number("tokens", 4096)
F.name("eta_code", f'"{CALIBRATED["eta_gemm"]}"')
F.name("eta_mem_code", f'"{CALIBRATED["eta_mem"]}"')
F.name("tau_code", f'"{CALIBRATED["tau_k"]}"')
GEMMS = {  # one layer of Llama-2-70B on a tensor-parallel rank of t = 8, 4096 tokens: [M, K] × [K, N]
    "qkv": (4096, 8192, (64 + 2 * 8) // 8 * 128), "out": (4096, 64 // 8 * 128, 8192),
    "up": (4096, 8192, 2 * 28672 // 8), "down": (4096, 28672 // 8, 8192)}
for name, (rows, inner, cols) in GEMMS.items():
    shape = {"M_rows": rows, "K_inner": inner, "N_cols": cols}
    F.value(f"{name}_eff", "perf.gemm.efficiency", percent=True, digits=2, **shape)
    F.number(f"{name}_n", cols)
    F.number(f"{name}_k", inner)
F.value("up_time", "perf.gemm.time", M_rows=4096, K_inner=8192, N_cols=GEMMS["up"][2])
F.value("decode_eff", "perf.gemm.efficiency", percent=True, digits=2, M_rows=1, K_inner=8192, N_cols=GEMMS["qkv"][2])
F.value("big_eff", "perf.gemm.efficiency", percent=True, digits=3, M_rows=8192, K_inner=8192, N_cols=8192)
DECODE = {"M_rows": 1, "K_inner": 8192, "N_cols": GEMMS["qkv"][2]}  # the Q, K, V projection on one token
F.value("decode_time", "perf.gemm.time", **DECODE)
F.number("decode_kernel_share", F["tau_k"] / F["decode_time"], percent=True)
F.number("decode_flops_time", 2 * DECODE["K_inner"] * DECODE["N_cols"] / (F["X"] * F["eta_gemm"]), unit="second")
F.number("decode_read_time", F.compute("perf.gemm.time", tau_k=0, **DECODE) - F["decode_flops_time"], unit="second")
F.number("decode_read_share", F["decode_read_time"] / F["decode_time"], percent=True)
F.published("megatron_share", "megatron2021.t1.1T.peak")
F.published("palm_mfu", "palm2022.b.mfu")
F.published("korthikanti_mfu", "korthikanti2022.t5.175B.mfu")

CELLS = [
    markdown(F.text("""
# Achievable against advertised FLOP/s: what does a GEMM really reach?

> *"The {{gpu}} datasheet says {{sparse}}. Our training run reports {{megatron_share}} of peak.
> Where did the rest go?"*

A GPU's datasheet prints peaks: the most its tensor cores can do when everything goes right.
Between that figure and a training run's throughput lie four gaps, each with a cause the
catalogue can name: the datasheet's sparse figure, the efficiency even a large GEMM falls short
by, the GEMMs too small to fill the GPU, and everything in a step that is not a GEMM. This lesson
closes the first three with formulas fitted on a published table and evaluates them on the GEMMs
of one layer of {{model}} at tensor parallelism t = {{t}}. Plan {{minutes}}.
""")),
    markdown(F.text("""
## 1. Which peak: dense, not sparse

NVIDIA prints two numbers for the tensor cores: {{sparse}} "with sparsity" and {{X}} dense, for
bf16 with fp32 accumulation. The sparse figure applies only to matrices pruned to the 2:4 pattern
(two zeros in every four values), which training does not use; the dense one is the peak, and the
one every utilization in these lessons divides by. The same datasheet prints {{tf32}} for TF32 and
{{fp32}} for plain fp32, which shows what leaving a GEMM in fp32 would cost.

## 2. A large GEMM: the efficiency η

Even a large GEMM does not reach the dense peak: memory traffic inside the kernel, tile
quantization and clock limits take their share. The catalogue's time of one GEMM of [M, K] × [K, N]
adds three terms: its 2MKN FLOPs at a fraction η_gemm of peak, its operands' bytes at a fraction
η_mem of the memory bandwidth, and a fixed cost τ_k per kernel. Fitted on Megatron-LM 2021's
Table 1 (the same constants the performance lesson uses), η_gemm = {{eta_gemm_percent}},
η_mem = {{eta_mem_percent}} and τ_k = {{tau_us}}. Divided into the FLOPs, the time gives the
fraction of peak one GEMM achieves:
""")),
    code("""
derive("perf.gemm.time")
derive("perf.gemm.efficiency")"""),
    markdown(F.text("""
The ceiling is η_gemm itself, {{eta_gemm_percent}}: the share the compute term approaches as a GEMM
grows and its fixed cost and memory traffic shrink against its FLOPs. A square GEMM of 8192 reaches
{{big_eff}}, still below it (the dashed line of the picture below). No training step built from GEMMs
can report more than η_gemm.

## 3. The GEMMs a layer really runs

One layer of {{model}} on a tensor-parallel rank of t = {{t}} with {{tokens}} tokens runs four
large GEMMs in its forward pass. Their shapes come from the model: the Q, K, V projection is
[{{tokens}}, {{qkv_k}}] × [{{qkv_k}}, {{qkv_n}}] (its share of the heads, with GQA's fewer K and V
heads), the output projection [{{tokens}}, {{out_k}}] × [{{out_k}}, {{out_n}}], the MLP's gate and up
projections together [{{tokens}}, {{up_k}}] × [{{up_k}}, {{up_n}}], and the down projection
[{{tokens}}, {{down_k}}] × [{{down_k}}, {{down_n}}]:
""")),
    code(F.code("""
A100 = gpu("a100-80gb") | {"eta_gemm": {{eta_code}}, "eta_mem": {{eta_mem_code}}, "tau_k": {{tau_code}}, "q": 2}
for name, (M_, K_, N_) in {"Q, K, V": (4096, 8192, 1280), "output": (4096, 1024, 8192), "gate + up": (4096, 8192, 7168),
                           "down": (4096, 3584, 8192)}.items():
    share = evaluate("perf.gemm.efficiency", **A100, M_rows=M_, K_inner=K_, N_cols=N_)
    note(f"{name}: [{M_}, {K_}] × [{K_}, {N_}] reaches **{float(share):.1%}** of peak")""")),
    markdown(F.text("""
{{qkv_eff}}, {{out_eff}}, {{up_eff}} and {{down_eff}}: the narrow GEMMs (the projections whose one
side tensor parallelism cut to a few thousand columns) fall well below the large-GEMM ceiling,
because their fixed cost and their memory traffic weigh more against fewer FLOPs; all four stay
below the ceiling of {{eta_gemm_percent}}. The gate and up
GEMM alone takes {{up_time}}. The picture draws the achieved fraction against the size of a square
GEMM, with the layer's four GEMMs marked:
""")),
    code("""picture("gemm_efficiency", gpu_key="a100-80gb", marks=((4096, 8192, 1280), (4096, 1024, 8192), (4096, 8192, 7168), (4096, 3584, 8192)))"""),
    markdown(F.text("""
At the other end, decoding runs the same Q, K, V projection on one token at a time: [1, {{qkv_k}}] ×
[{{qkv_k}}, {{qkv_n}}] reaches {{decode_eff}} of peak. Of its {{decode_time}}, reading the weight matrix
(two FLOPs per weight read) takes {{decode_read_time}} ({{decode_read_share}}), the FLOPs
{{decode_flops_time}}, and the fixed cost τ_k of one kernel the rest, {{decode_kernel_share}}: at one
token the fitted per-kernel cost, not the weights, is most of the time. The roofline of the inference
lesson sees only the weights' read; τ_k was fitted on training steps, and a decoding kernel's own fixed
cost is what the serving lesson calibrates.

## 4. From GEMMs to a training step

A step also runs what is not a GEMM: the softmax, the norms, the activation functions, the
optimizer, and every communication that does not hide under compute. Megatron-LM 2021 reported
{{megatron_share}} of peak for its 1T model (hardware FLOPs, recompute included), Korthikanti et al.
{{korthikanti_mfu}} MFU for GPT-3 175B, PaLM {{palm_mfu}} on TPU v4: between half and three quarters
of the large-GEMM ceiling above. The gap from the ceiling to a run's figure is what the performance
lesson's full model prices term by term.

Read a datasheet, then, in four steps: take the dense figure, multiply by the efficiency a large GEMM
reaches, lower it for the shapes the model and its layout produce, and lower it again for the share
of the step that is not GEMMs. Only the last step depends on the framework; the first three are
formulas of the hardware and the model.

## Exercise

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step that
differs. The solution is not in this notebook.
""")),
    code("""exercise("achievable.gemm_time")"""),
    code("""
answer = None  # microseconds
check("achievable.gemm_time", answer)"""),
    markdown("""
What the checker says to a reader who priced the GEMM at the datasheet's peak:
"""),
    code("""check("achievable.gemm_time", 2 * 4096 * 8192 * 7168 / 312e12 * 1e6)"""),
]
