"""Lesson: Li Bojie, "Training large models: why the A100 beats the 4090", re-derived.

Every figure of its prose is the essay's printed one or the catalogue's at the essay's inputs (formulas/vocabulary/examples.py),
rendered from Figures (render/documents/figures.py): a stage's latency and a token's are named apart, and each balance
batch names the FLOP/s figure it divides.
"""

from llm_formulas.formulas.vocabulary.examples import example
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

# The model is the essay's LLaMA-2 70B; the hardware figures are the essay's own (its worked examples S10-S15: the
# RTX 4090 at 330 TFLOPS, FP16 with FP16 accumulate, on PCIe Gen4 at 64 GB/s both ways; the H100 at 989 TFLOPS).
F = Figures("article_001", model="llama2-70b", gpu="rtx4090", minutes=50, compare_gpus=("a100-80gb", "h100-sxm"))
F.claimed("S10", "S10")
F.source_input("essay_X", "S11c", "X")
F.number("S10_seconds", F["S10"] / F["essay_X"], unit="second", digits=1)
F.source_input("S10_D", "S10", "D")
F.number("essay_psi", 70 * 10**9, unit="parameter")
F.value("weights", "memory.model_states.inference", P=F["essay_psi"], q_w=2, display="GB")
F.value("adam", "memory.optimizer.adam", P=F["essay_psi"], display="GB")
F.claimed("S7", "S7")
F.claimed("S8", "S8")
F.number("a100s", -(-F["S8"] // (80 * 10**9)))
F.number("rtx4090s", -(-F["S8"] // F["M_gpu"]))
F.claimed("S9", "S9")
F.number("S9_times", F["S9"] / F["l"])
F.claimed("S11a", "S11a")
F.claimed("S11b", "S11b")
F.claimed("S11c", "S11c")
F.refuted("h800", "comms.tp.max_degree", "S11e: H800 t ≤ 4.8", digits=3)
F.case("h100_t", "S11d", digits=4)
F.source_input("h100_link", "S11d", "W_link")
F.source_input("h800_link", "S11e", "W_link")
F.refuted("need", "comms.tp.max_degree", "001: H100 needs 1100", digits=4)
F.refuted("t_from_need", "comms.tp.max_degree", "001: 1100 gives t ≤ 11", digits=3)
F.claimed("S12", "S12")
F.case("S12_decimal", "S12", display="GB")
F.refuted("per_prompt", "memory.kv_cache.per_sequence", "001: 5 GB per prompt")
F.value("real_per_sequence", "memory.kv_cache.per_sequence", q=2, s=4096, binary=True)
F.claimed("S13a", "S13a")
F.claimed("S13b", "S13b")
F.refuted("saved", "inference.kv_recompute.flops", "001: 16K FLOPs per byte")
# Inference on 4090s: a stage and a token of the essay's 8 cards, the balance batches and the hops between stages
F.source_input("stages", "S14a", "n")
F.case("stage", "S14a")
F.case("token", "S14b")
F.source_input("busy_batch", "S14c", "b")
F.case("busy_stage", "S14c")
F.number("busy_token", F["stages"] * F["busy_stage"], unit="second")
F.case("essay_balance", "S14d")
F.number("x_fp16", gpu("rtx4090").flops("fp16"), unit="FLOP/second")  # the FP16-accumulate peak the essay divides
F.value("balance_bf16", "inference.balance_batch", q_w=2)
F.case("h100_balance", "S14e")
F.example("S15a")
F.source_input("S15a_b", "S15a", "b")
F.example("S15c")
F.source_input("ethernet", "S15d", "W_link")
F.source_input("S15b_b", "S15b", "b")
F.example("S15b")
F.example("S15d")
F.example("S15e")
F.number("essay_rate", 1 / dict(example("S15e").inputs)["tau"], unit="token/second")
F.number("hop_bytes", 2 * F["h"], digits=None)  # one token's hop: h values of 2 bytes
F.number("hop_kib", F["hop_bytes"], unit="byte", binary=True)
F.case("S15b_exact", "S15b")
F.case("S15d_exact", "S15d", display="ms", digits=4)
F.case("S15e_exact", "S15e")
F.refuted("hop_time", "inference.pipeline.transfer_time", "001: 16 KB over 1 Gbps in 0.25 ms")
F.refuted("network_token", "inference.latency.pipeline.network", "001: 0.33 s, 3 tokens/s")
F.number("network_rate", 1 / F["network_token"], digits=1)
F.number("network_rate_correct", 1 / F["network_token_correct"], unit="token/second")

CELLS = [
    markdown(F.text("""
# Article 001: why does the A100 beat the 4090 for training? (Li Bojie)

> *"An {{gpu}} has about the compute of an A100 for a tenth of the price. Why can't we train
> {{model}} on a few hundred of them?"*

李博杰 (Li Bojie), "大模型训练：为何A100更胜4090一筹？" ("Training large models: why the A100 beats
the 4090") answers with a chain of estimates for {{model}}: the FLOPs of training (6PD), the
memory training needs, what recomputation costs, the largest tensor-parallel degree a link can
feed, the KV cache, and why inference on 4090s works where training does not. (The lessons are
numbered after the source articles, 000, 001, 002 and 004; no article 003 was among the
sources.) This lesson follows the essay's argument in its order, checks every figure it prints
against the catalogue, and shows each of its slips with the engine's proof. The hardware
figures are the essay's own, which its worked examples keep: the {{gpu}} at {{essay_X}} (its
FP16 peak with FP16 accumulation; the GPU preset's {{X}} is the bf16 figure with FP32
accumulation, which training uses) on PCIe Gen4, and the H100 on NVLink. Around {{minutes}}.
""")),
    markdown(F.text("""
## Training FLOPs: 6 per parameter per token

The essay explains the 6 as three multiplies and three adds per weight per token: forward,
the input's gradient, the weight's gradient. It then works one layer of about a billion
parameters at a step of D = {{S10_D}}: {{S10}} per step, about {{S10_seconds}}
on a 4090 at {{essay_X}}.
""")),
    code("""
derive("flops.training.approx")
source_figure("S10")"""),
    markdown(F.text("""
## Training memory: {{S8}}

For Ψ = {{essay_psi}}: weights {{weights}}, gradients {{weights}}, Adam states {{adam}} and the
activations of the {{l}} layers (selective recompute, no tensor parallelism,
s·b·h·l·(10 + 24/t)) {{S7}}: {{S8}}, so at least {{a100s}} A100 80 GB or {{rtx4090s}} RTX 4090.
""")),
    code("""
derive("memory.activations.selective_001")
source_figure("S7")
source_figure("S8")"""),
    markdown(F.text("""
Recomputing every layer from the input instead of keeping activations would need {{S9}}
forward passes for {{l}} layers, {{S9_times}} times one pass:
""")),
    code("""
derive("flops.recompute.from_scratch")
source_figure("S9")"""),
    markdown(F.text("""
## How far tensor parallelism goes

Li's central argument: a TP rank computes 2·3·(h/t) FLOPs of Q, K, V projections per byte it
receives, and its link must bring bytes as fast as its compute eats them. One head per GPU for
{{model}} gives {{S11a}}, which needs {{S11b}} one way on a 4090. Solving for t gives the largest
useful degree per GPU, t ≤ {{S11c}} on the 4090's PCIe:
""")),
    code("""
derive("comms.tp.max_degree")
for case in ("S11a", "S11b", "S11c", "S11d", "S11e", "S11f"):
    source_figure(case)"""),
    markdown(F.text("""
The H800 line carries a slip: {{h800}} printed, {{h800_correct}} by the essay's own figures (the
same formula gives {{h100_t}} for the H100 on {{h100_link}} of NVLink, and the H800's {{h800_link}} get
that share of it). Two more slips sit in the H100 case: the essay divides the H100's FLOP/s by
the whole of NVLink (both directions) to say the GPU needs {{need}} FLOPs per byte, where one way
carries half and the need is {{need_correct}}; and from {{need}} its own inequality would allow
t ≤ {{t_from_need_correct}}, not the {{t_from_need}} it prints ({{t_from_need}} is right only for
{{need_correct}}). The engine refutes all three:
""")),
    code("""
refutation("comms.tp.max_degree", "S11e: H800 t ≤ 4.8")
refutation("comms.tp.max_degree", "001: H100 needs 1100")
refutation("comms.tp.max_degree", "001: 1100 gives t ≤ 11")"""),
    markdown(F.text("""
The picture draws the essay's own rule: the one-way link each rank needs against t, for the
essay's two compute figures, beside each GPU's link one way. Each need line crosses its link at
the degree computed above: the 4090 on PCIe at t ≤ {{S11c}}, the H100 on NVLink at t ≤
{{h100_t}}. Only NVLink keeps up past a handful of ranks:
""")),
    code("""picture("tp_link_need", cases=("S11c", "S11d", "S11e", "S11f"))"""),
    markdown(F.text("""
## The KV cache, and two slips

The essay sizes the cache of {{model}} taken without GQA: 2 (K and V) × layers × h × tokens ×
sequences × 2 bytes = {{S12}}. Those are GiB (2³⁰ bytes), {{S12_decimal}} decimal. It then calls
this {{per_prompt}} per prompt: its own numbers give {{per_prompt_correct}} per sequence, and the
real model with its {{g}} KV heads needs {{real_per_sequence}}. The engine refutes the printed
figure:
""")),
    code("""
source_figure("S12")
refutation("memory.kv_cache", "S12: 80 GB")
refutation("memory.kv_cache.per_sequence", "001: 5 GB per prompt")"""),
    markdown(F.text("""
The cache saves recomputing K and V for earlier tokens: {{S13a}} per step, for {{S13b}}. The
essay's ratio of "{{saved}} FLOPs saved per byte" is {{saved_correct}} by its own figures (reads
are of 2-byte values):
""")),
    code("""
source_figure("S13a")
refutation("inference.kv_recompute.flops", "001: 16K FLOPs per byte")"""),
    markdown(F.text("""
## Inference on 4090s

The essay's last part turns the question around: if the 4090 is poor at training, is it any
good at serving? Its argument is the inference lesson's: decoding reads every weight per step,
so memory bandwidth, not compute, sets the pace at small batches.

Decoding reads every weight once per step. LLaMA-2 70B over {{stages}} cards: {{stage}} per
*stage* per token, and since pipeline stages run in series, {{token}} per *token*. At batch
{{busy_batch}} a stage's step is compute-bound, {{busy_stage}}; a token of that batch crosses all
{{stages}} stages, {{busy_token}}. (The essay prints the stage's figure beside the token's of batch 1:
the two are not comparable.) The balance batch (memory and compute equally slow) is
{{essay_balance}} on a 4090 with the FLOP/s the essay divides, its FP16-accumulate peak of
{{x_fp16}}; with its BF16 (and FP32-accumulate) peak of {{X}}, the figure the roofline
below draws, it is {{balance_bf16}}. An H100 balances at {{h100_balance}}: a property of the GPU, not of
the model.
""")),
    code("""
for case in ("S14a", "S14b", "S14c", "S14d", "S14e"):
    source_figure(case)"""),
    code("""picture("roofline", gpus=("rtx4090", "a100-80gb", "h100-sxm"))"""),
    markdown(F.text("""
Between stages travel b·h·2 bytes per token: {{S15a}} at b = {{S15a_b}}, {{S15c}} over PCIe. Over gigabit
Ethernet ({{ethernet}}) at b = {{S15b_b}} the essay prints {{S15b}} and {{S15d}}, and {{S15e}} for
{{essay_rate}}. But a token's hop is {{hop_kib}}, {{hop_bytes}} bytes (the essay multiplies 16,000), and a gigabit per
second is {{ethernet}}, so the figures are {{S15b_exact}}, {{S15d_exact}} and a batch of {{S15e_exact}}.
""")),
    code("""
for case in ("S15a", "S15b", "S15c", "S15d", "S15e"):
    source_figure(case)"""),
    markdown(F.text("""
The engine's refutations of these figures, and of two more in the same passage: {{hop_kib}} over
gigabit Ethernet takes {{hop_time_correct}}, not {{hop_time}}; and the essay's {{network_token}} a token, so
{{network_rate}} tokens per second, counts only the {{stages}} network hops and leaves out the {{token}} the stages compute, which makes
{{network_token_correct}}, {{network_rate_correct}}:
""")),
    code("""
refutation("inference.pipeline.stage_traffic", "S15b: 5.28 MB at b = 330")
refutation("inference.pipeline.transfer_time", "001: 16 KB over 1 Gbps in 0.25 ms")
refutation("inference.pipeline.transfer_time", "S15d: 41 ms at b = 330")
refutation("inference.latency.pipeline.network", "001: 0.33 s, 3 tokens/s")
refutation("inference.pipeline.max_batch", "S15e: batch ≤ 60")"""),
    markdown("""
Every slip the engine refutes in this essay (the list grows as more errata are proved):
"""),
    code("""slips("001")"""),
    markdown("""
## Exercises

Type your answer in place of `None`; a wrong answer gets the step that differs. The solutions
are not in this notebook.
"""),
    code("""exercise("article_001.kv_cache")"""),
    code("""
answer = None  # GiB
check("article_001.kv_cache", answer)"""),
    code("""exercise("article_001.max_tp_h100")"""),
    code("""
answer = None  # a plain number
check("article_001.max_tp_h100", answer)"""),
]
