"""Lesson: serving. How many H100s does it take to serve Llama-3.1-70B to 1,000 users at 50 ms per token?

Every figure the prose quotes is computed below (render/documents/figures.py) by the calls the pictures draw
(render/documents/serving_figures.py), and rendered into the text: tests/test_lesson_figures.py reads each back, and
tests/test_serving_lessons.py holds the TPOTs to the exact report of ``llm-formulas serve``.
"""

from fractions import Fraction

import numpy as np

from llm_formulas.render.documents import serving_figures as SF
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

MODEL, GPU = "llama3.1-70b", "h100-sxm"
F = Figures("serving", gpu=GPU, minutes=50, compare_models=("deepseek-v3",), t=8, s_in=2000, s_out=500)
T, S_IN, S_OUT = int(F["t"]), int(F["s_in"]), int(F["s_out"])
F.name("model", SF.title(MODEL))
F.number("users", 1000, digits=None)
F.number("target", Fraction(1, 20), unit="second")
F.number("mix", F["s_in"] + F["s_out"], digits=None)
F.number("batch_many", 64, digits=None)  # a batch worth serving, beside batch 1


def _model_figures() -> None:
    """The shape the cache and the messages follow: layers, KV heads and their width, as the config gives them."""
    values = dict(SF.model(MODEL))
    F.number("layers", values["l"], digits=None)
    F.number("kv_heads", values["g"], digits=None)
    F.number("head_dim", values["d_head"], digits=None)
    F.number("kv_token", 2 * values["l"] * values["g"] * values["d_head"] * 2, unit="byte")  # K and V, every layer, 16-bit
    F.number("messages", 2 * values["l"], digits=None)  # two all-reduces a layer
    F.number("weights", SF.exact_report(MODEL, GPU, T, 1, S_IN, S_OUT)["memory"]["weights_bytes"] * T, unit="byte")


def _roofline_figures() -> None:
    """The ridge of the H100 and the two phases' FLOPs per byte, as the roofline picture draws them."""
    gpu = SF.gpu(GPU)
    F.number("ridge", gpu.flops("bf16") / gpu.memory_bandwidth, unit="FLOP/byte")
    phases = SF.phase_intensities(MODEL, GPU, T, S_IN, np.array([1.0]))
    F.number("intensity_prefill", phases["prefill"], unit="FLOP/byte")
    F.number("intensity_decode", phases["decode"][0], unit="FLOP/byte", digits=2)


def _decode_figures() -> None:
    """TPOT at batch 1 and 64 with its terms, the widest batch that fits, and the same in FP8."""
    curve = SF.decode_curve(MODEL, GPU, T, S_IN, S_OUT)
    fp8 = SF.decode_curve(MODEL, GPU, T, S_IN, S_OUT, "fp8", "fp8")
    at = {int(b): i for i, b in enumerate(curve["batch"])}
    one, many = at[1], at[int(F["batch_many"])]
    widest = int(np.flatnonzero(curve["fits"])[-1])
    for name, key, index in (("tpot_1", "tpot", one), ("weights_1", "weights", one), ("links_1", "link", one),
                             ("ttft_1", "ttft", one), ("tpot_64", "tpot", many), ("kv_64", "kv", many),
                             ("tpot_widest", "tpot", widest)):
        F.number(name, curve[key][index], unit="second")
    F.number("fp8_tpot_64", fp8["tpot"][many], unit="second")
    F.number("widest", curve["batch"][widest], digits=None)
    F.number("wall_mix", curve["max_batch"][0], digits=None)
    F.number("fp8_widest", fp8["batch"][np.flatnonzero(fp8["fits"])[-1]], digits=None)


def _wall_figures() -> None:
    """The KV wall at three contexts, up to the model's window, in 16 bits and in FP8."""
    contexts = {"8k": 8192, "32k": 32768, "128k": 131072}
    wall = SF.kv_wall(MODEL, GPU, T, np.array(list(contexts.values())))
    wall8 = SF.kv_wall(MODEL, GPU, T, np.array(list(contexts.values())), "fp8", "fp8")
    for index, (name, context) in enumerate(contexts.items()):
        F.number(f"context_{name}", context, digits=None)
        F.number(f"wall_{name}", wall[index], digits=None)
        F.number(f"wall8_{name}", wall8[index], digits=None)


def _expert_figures() -> None:
    """DeepSeek-V3's routed experts a decoding step reaches at batch 1 and 64, and the share of the weights read."""
    experts = SF.experts_curve("deepseek-v3")
    at = {int(b): i for i, b in enumerate(experts["batch"])}
    F.number("ds_experts", experts["experts"], digits=None)
    F.number("ds_per_token", experts["per_token"], digits=None)
    for name, batch in (("1", 1), ("64", int(F["batch_many"]))):
        F.number(f"experts_{name}", experts["touched"][at[batch]], digits=3 if batch == 1 else 2)
        F.number(f"share_{name}", experts["share"][at[batch]], percent=True, digits=2)


def _speculative_figures() -> None:
    """A draft of γ = 4 at α = 0.8 costing 5 % of a step, and DeepSeek-V3's multi-token prediction (one module)."""
    F.number("alpha", Fraction(4, 5), digits=None)
    F.number("gamma", 4, digits=None)
    F.number("draft_cost", Fraction(1, 20), digits=None)
    F.value("speedup", "serving.speculative.speedup", alpha_acc=F["alpha"], gamma_spec=F["gamma"], c_draft=F["draft_cost"])
    ds_layers = dict(SF.model("deepseek-v3"))["l"]
    F.number("mtp_gamma", 1, digits=None)
    F.number("mtp_alpha", Fraction(85, 100), percent=True, digits=2)  # DeepSeek-AI 2024 (V3), §5.4.3: 85–90 %
    F.number("ds_layers", ds_layers, digits=None)
    F.value("mtp", "serving.speculative.speedup", alpha_acc=F["mtp_alpha"], gamma_spec=F["mtp_gamma"],
            c_draft=Fraction(1, ds_layers))


def _answer_figures() -> None:
    """The fewest H100s that keep the users at the target, in 16 bits and in FP8, and the price of a million tokens."""
    for suffix, dtype in (("", "bf16"), ("_fp8", "fp8")):
        answer = SF.answer_users(MODEL, GPU, int(F["users"]), float(F["target"]), S_IN, S_OUT, dtype, dtype)
        F.number("gpus" + suffix, answer["gpus"], digits=None)
        F.number("tp" + suffix, answer["t"], digits=None)
        F.number("per_replica" + suffix, answer["batch"], digits=None)
        F.number("replicas" + suffix, answer["replicas"], digits=None)
        F.number("dollars" + suffix, answer["dollars_per_million"], unit="dollar")
        if not suffix:
            F.number("step", answer["step"], unit="second")
            F.number("price", answer["price"], unit="dollar")


_model_figures()
_roofline_figures()
_decode_figures()
_wall_figures()
_expert_figures()
_speculative_figures()
_answer_figures()

CELLS = [
    markdown(F.text("""
# Serving: how many GPUs, at what cost per token?

> *"How many H100s does it take to serve {{model}} to {{users}} concurrent users at {{target}} per token, and what
> does a million tokens cost?"*

Training asks how long; serving asks how many GPUs keep a latency target at a load. A request is served in two
phases. The **prefill** runs the whole prompt through the model at once and emits the first token: its time is the
time to first token (TTFT). Then every **decoding step** feeds each sequence's newest token: the time per output token
(TPOT) is one step. This lesson builds both from the catalogue's `serving.*` formulas, each proved by the engine and
measured against real transformers models on the CPU (FLOPs with PyTorch's counter, bytes with a dispatch mode that
adds what every kernel reads), and prices them on the roofline with constants fitted on NVIDIA's published
TensorRT-LLM tables. The GPU throughout is the {{gpu}}, the request mix {{s_in}} prompt tokens and {{s_out}} output
tokens, a chat turn. About {{minutes}}.
""")),
    markdown(F.text("""
## 1. Two phases on one roofline

A GPU reaches its peak FLOP/s only when each byte it reads from memory feeds enough FLOPs: above the ridge point,
{{ridge}} on an H100, it is compute-bound; below, memory-bound. A prefill of {{s_in}} tokens reads
the weights once and computes with them for every token: about {{intensity_prefill}}, far above the
ridge. A decoding step at batch 1 reads every weight (and the cache) for one token per sequence: about
{{intensity_decode}}, far below. Same model, same GPU, opposite bottlenecks.
""")),
    code("""picture("serving_phases")"""),
    markdown("""
The cost of a step is the weights it reads, so what a step reads must be exact. The derivation builds it from the
decoder's parameter count: the embedding is read only at the rows looked up, a mixture-of-experts layer only at the
experts its tokens reach:
"""),
    code("""derive("serving.decode.params_read")"""),
    markdown(F.text("""
## 2. TPOT against the batch

The weights cost the same whatever the batch; every sequence adds its own cache, its context times {{kv_token}}
per token for this model in 16 bits ({{layers}} layers, {{kv_heads}} KV heads of {{head_dim}}). On {{t}} H100s
at batch 1 (after a prefill of {{ttft_1}}, the time to first token) a token takes {{tpot_1}}: the weights are
{{weights_1}} of it and the tensor-parallel all-reduces {{links_1}}, {{messages}} small messages whose latency, not
bandwidth, sets their cost. At batch {{batch_many}} the step is {{tpot_64}}, of which the cache is already {{kv_64}};
the picture shows the cache's share growing up to the KV wall, {{wall_mix}} sequences of {{mix}} tokens (at
{{widest}}, the widest batch drawn, a token takes {{tpot_widest}}). A decoding step is never "just the weights" once
the batch is worth serving.
""")),
    code("""picture("serving_tpot")"""),
    markdown("""
Every step of a request sees a longer context than the last, so the end-to-end latency sums s_out − 1 steps at
growing contexts. The sum has a closed form, proved equal to the step-by-step sum (SymPy evaluates it, below and past
a sliding window):
"""),
    code("""derive("serving.decode.context.sum")"""),
    markdown(F.text("""
## 3. The KV wall

Memory caps the batch before compute does. On {{t}} × {{M_gpu}} with 16-bit weights ({{weights}} over {{t}} GPUs) the
cache of sequences of {{context_8k}} tokens leaves room for {{wall_8k}} of them; at {{context_32k}} tokens {{wall_32k}};
at the model's full window of {{context_128k}} tokens {{wall_128k}}. The largest batch is solved in closed form from
the memory per GPU:
""")),
    code("""
derive("serving.memory.max_batch")
picture("serving_kv_wall")"""),
    markdown(F.text("""
## 4. Mixture of experts: the experts a batch touches

A token of DeepSeek-V3 uses {{ds_per_token}} of each layer's {{ds_experts}} routed experts. A decoding step of b tokens
reads every expert one of them is routed to: under uniform routing the expected number is E(1 − (1 − k/E)^b), derived
from the probability that one expert is missed. At batch 1 that is {{experts_1}} experts, {{share_1}} of the weights
per step; at batch {{batch_many}} it is already {{experts_64}} of {{ds_experts}}, {{share_64}} of the weights. MoE saves
FLOPs at every batch, but memory traffic only at small ones.
""")),
    code("""
derive("serving.decode.experts_touched")
picture("serving_experts")"""),
    markdown(F.text("""
## 5. What FP8 buys

FP8 weights halve the bytes a step reads and run the GEMMs on FP8 tensor cores; an FP8 cache halves the bytes per
cached token. At batch {{batch_many}}, TPOT falls from {{tpot_64}} to {{fp8_tpot_64}}, and the KV wall moves: at
{{context_8k}} tokens {{wall8_8k}} sequences fit instead of {{wall_8k}}, at {{context_32k}} tokens {{wall8_32k}}
instead of {{wall_32k}}, at the full window {{wall8_128k}} instead of {{wall_128k}}, and the picture's batches fit up to {{fp8_widest}} at this request mix. An A100 has no FP8 tensor
cores: `llm-formulas serve` refuses `--weights fp8` there.
""")),
    code("""picture("serving_fp8")"""),
    markdown(F.text("""
## 6. Speculative decoding

A small draft model proposes γ tokens; the target checks them in one step and keeps the accepted prefix plus one
token of its own. With acceptance rate α a target step yields (1 − α^(γ+1))/(1 − α) tokens, and with a draft costing c
of a target step the speed-up is that over γc + 1 (Leviathan et al. 2023). At α = {{alpha}}, γ = {{gamma}} and
c = {{draft_cost}} it is {{speedup}}×; DeepSeek-V3's one multi-token-prediction module is the case γ = {{mtp_gamma}},
at its reported acceptance of {{mtp_alpha}} and a module costing one layer of {{ds_layers}}: {{mtp}}×.
""")),
    code("""
derive("serving.speculative.tokens")
picture("serving_speculative")"""),
    markdown(F.text("""
## 7. The answer

With continuous batching every step carries its b sequences and the prefills of the b/s_out requests that join it,
their FLOPs riding on the step's weight reads. Keeping {{users}} users at or below {{target}} per token with 16-bit
weights and cache takes **{{gpus}} H100s**: {{replicas}} replicas of TP {{tp}}, {{per_replica}} users each, a step of
{{step}}; at {{price}} per GPU-hour that is **{{dollars}} per million output tokens**. With FP8 weights and
cache it takes {{gpus_fp8}} H100s ({{replicas_fp8}} replicas of TP {{tp_fp8}}, {{per_replica_fp8}} users
each): {{dollars_fp8}} per million. The command line gives the same search for a request rate instead of a user
count: `llm-formulas serve --model ... --gpu h100-sxm --slo ttft=2s,tpot=50ms --rate R`.

How good are these numbers? The constants (compute and bandwidth fractions, a per-layer cost, an all-reduce's
latency) were fitted on one source, NVIDIA's TensorRT-LLM 0.8.0 tables, and `llm-formulas validate` predicts the
others without refitting, and prints each source's median and largest error: gpt-fast's batch-1 decoding, NVIDIA
NIM's inter-token latencies and LMDeploy's decoding steps come closest; older engines (FasterTransformer, LMDeploy's
prefills) run slower than the fit.

## Exercises

Type your answer in place of `None` and run the cell; a wrong answer gets the step that differs.
""")),
    code("""exercise("serving.kv_wall")"""),
    code("""
answer = None  # sequences
check("serving.kv_wall", answer)"""),
    code("""exercise("serving.speculative")"""),
    code("""
answer = None  # times faster
check("serving.speculative", answer)"""),
]
