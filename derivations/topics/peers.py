"""Proofs of formulas/topics/peers.py: each peer's formula rebuilt from its source's groups, then the exact difference between
the measured form (what estimate prices for the framework the peer describes) and the peer, named term by term.

Every derivation has the same shape: the peer's figure (``defines``, from its code or page, concluded), ours
(``defines``: the measured forms of formulas/topics/framework_memory.py and the decoder forms, as ``estimate`` sums them for the
first pipeline stage), one ``defines`` step per term the peer leaves out or counts differently (labels "Δ …", the ones
``compare`` prints), and the claim that ours − peer is exactly their sum (``equals``). Where a peer rests on a convention
the measured form refutes, a ``refutes`` step says so. The claims hold for the family of blocks the substitution
``FAMILY`` fixes (the embedding as wide as h, two norms a layer, no q/k norms, sinks or router bias) — every model
``compare`` is run on — and at m ≥ p without interleaving.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.topics import framework_memory as fm
from llm_formulas.formulas.topics import memory as mem
from llm_formulas.formulas.topics import peers as pe
from llm_formulas.formulas.vocabulary.parts import expand_parts
from llm_formulas.formulas.vocabulary.catalogue import Source, get
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.vocabulary.symbols import (
    E, P, P_unit, V, a, all_experts, attn_gate, kv_expand, l_gdn, l_lru, l_mamba, l_noattn, l_nomlp, l_ssd, x_attn, b, b_k, b_mlp, b_o, b_q, b_v, c_byte, constant_values, d, d_emb, d_ff, d_head, d_lat, d_moe, dsa,
    d_rope, d_sh, drop, e, emb_norm, g, gated, h, head_bias, k, l, l_moe, l_win, mla, moe_lat, n_mtp, n_norm, n_pos, norm_final,
    o_pos, p, piped, pos_table, proj_emb, q, q_bf16, q_fp32, q_g, q_lora, q_o, q_p, qk_norm, qk_norm_full, r_kv, r_q,
    router_bias, s, sh_gate, sink, t, t_e, tied, u_flop, u_param,
)

FAMILY = {d_emb: h, proj_emb: 0, emb_norm: 0, head_bias: 0, n_norm: 2, qk_norm: 0, qk_norm_full: 0, sink: 0, router_bias: 0,
          all_experts: 0, l_win: 0, norm_final: 1,
          # the peers price attention decoders: no recurrent or mixer-less layers (issue 28's hybrids), no gated or
          # cross-attention, no expanded K/V, no DSA indexer (the estimator at d98e8a64 predates DeepSeek-V3.2)
          dsa: 0, l_mamba: 0, l_ssd: 0, l_lru: 0, l_gdn: 0, l_noattn: 0, l_nomlp: 0, attn_gate: 0, x_attn: 0, kv_expand: 0}
MEGATRON_CORE = {q_p: q_bf16, q_g: q_fp32, q_o: 3 * q_fp32}  # bf16 weights, fp32 main gradients, fp32 master and Adam
DEEPSPEED = {q_p: q_bf16, q_g: q_bf16, q_o: 3 * q_fp32}  # 16-bit gradients
ESTIMATOR = Source(pe.ESTIMATOR, "theoretical_memory_usage.py at d98e8a64")


def _f(formula_id: str) -> sp.Expr:
    return get(formula_id).dimensioned


def _family(expr: sp.Expr) -> sp.Expr:
    return expand_parts(as_sympy(expr)).xreplace(FAMILY)


def _plain(expr: sp.Expr) -> sp.Expr:
    """An expression with its constants valued and unit marks 1 (bytes, FLOPs, parameters as numbers): the claims
    compare figures the peers print as plain numbers."""
    return as_sympy(expr).xreplace(constant_values())


def _claim(dv: Derivation, ours: tuple[str, sp.Expr, str], peer: sp.Expr, terms: list[tuple[str, sp.Expr, str]],
           why: str) -> None:
    """Ours (label, expression, why), the named terms, then ours − peer = their sum exactly, all as plain numbers of
    the blocks ``FAMILY`` fixes."""
    label, expr, reason = ours
    mine = dv.defines(label, _plain(_family(expr)), reason)
    labels = []
    for name, term, because in terms:
        dv.defines(f"Δ {name}", _plain(_family(term)), because)
        labels.append(f"Δ {name}")
    total = dv.defines("Σ Δ", sp.Add(*(dv.step(name).expr for name in labels)), "the terms together", parts=tuple(labels))
    theirs = _plain(_family(peer))
    dv.defines("ours − peer", sp.Add(mine, sp.Mul(-1, theirs, evaluate=False), evaluate=False),
               "the measured form less the peer's figure")
    dv.equals("ours − peer", total, why, aside=True)


# --- Megatron-LM's estimator ---------------------------------------------------------------------------------------

def _first_stage_params(kind: str) -> sp.Expr:
    """The first stage's dense or expert parameters on one GPU, as estimate sums them (params.stage.*)."""
    if kind == "dense":
        return _f("params.stage.first")
    return _f("params.stage.layers.experts") + (1 - piped) * _f("params.stage.mtp.experts")


def _megatron_state_terms(dense_bytes: sp.Expr, expert_bytes: sp.Expr) -> list[tuple[str, sp.Expr, str]]:
    biases = (l / p) * (1 - mla) * ((b_q * a * d_head + (b_k + b_v) * g * d_head) / t + b_o * h) \
        + ((l - l_moe) / p) * b_mlp * ((1 + gated) * d_ff / t + h)
    expert_biases = (l_moe / p) * E * b_mlp * ((1 + gated) * d_moe + h) / (t_e * e)
    latent = mla * (q_lora * h * r_q + h * (r_kv + d_rope)) * (1 - 1 / t) + mla * (q_lora * r_q + r_kv) * (1 - pe.NORM / t)
    latent_experts = E * (_f("params.decoder.expert") - _f("params.decoder.expert").xreplace({moe_lat: 0}))  # at d_lat, not h
    latent_projections = moe_lat * ((2 * h * d_lat + b_mlp * d_lat) / t + b_mlp * h)
    mtp_ours = (1 - piped) * fm.mtp_dense, (1 - piped) * n_mtp * fm.experts_of_layer / (t_e * e)
    mtp_peer = n_mtp * ((pe.ATTENTION + pe.SHARED_MLP) / t + pe.LAYER_NORMS + pe.ROUTER), n_mtp * pe.ROUTED / (t_e * e)
    return [
        ("biases", c_byte * (dense_bytes * biases + expert_bytes * expert_biases),
         "the linear layers' biases (GPT-3's; Megatron Core builds them with add_bias_linear, the estimator counts none)"),
        ("position table", c_byte * dense_bytes * pos_table * (n_pos + o_pos) * h,
         "the learned position table, whole on every TP rank of the first stage (the estimator counts none)"),
        ("MLA down projections", c_byte * dense_bytes * (l / p) * latent,
         "MLA's down projections and latent norms, duplicated on the t ranks by Transformer Engine's spec "
         "(multi_latent_attention.py L524–602): the estimator splits them t ways"),
        ("latent MoE", c_byte * (l_moe / p) * (dense_bytes * latent_projections + expert_bytes * latent_experts / (t_e * e)),
         "Nemotron-3-Super's latent MoE: its h→d_lat and d_lat→h projections (split like an MLP's, fc2's bias whole) and "
         "its experts at d_lat, which the estimator sizes at h without the projections"),
        ("final norm", c_byte * dense_bytes * pe.NORM * h * ((1 - piped) - 1 / p),
         "the final norm sits on the last stage (on the first only at p = 1); the estimator puts 1/p of it on every stage"),
        ("MTP module", c_byte * (dense_bytes * (mtp_ours[0] - mtp_peer[0]) + expert_bytes * (mtp_ours[1] - mtp_peer[1])),
         "the MTP module sits on the last stage (gpt_model.py L166–181) with its eh_proj (2h·h/t) and three norms; the "
         "estimator puts it on the most loaded shard at every p and without them"),
    ]


def megatron_states(distributed: bool) -> Derivation:
    target = "peers.megatron.states" + (".distributed_optimizer" if distributed else "")
    dv = Derivation(target, "Megatron-LM's estimator: weights and optimizer" + (" with the distributed optimizer" if distributed else ""),
                    (ESTIMATOR, Source("megatron-distopt", "bytes per parameter")))
    sharded = dv.defines("T", pe.SHARDED, "TP-sharded parameters of the most loaded shard: l/p layers' attention and MLPs "
                         "(shared experts in MoE layers), one MTP block, the embedding, at p = 1 an untied head (L247–267)")
    replicated = dv.defines("R", pe.REPLICATED, "replicated: the layers' norms, routers, 1/p of the final norm, the MTP "
                            "block's norms and router (L233–252)")
    experts = dv.defines("X", pe.EXPERTS, "routed experts over t_E·e ranks (L256–259)")
    dense_bytes = 6 + 12 / d if distributed else sp.Integer(18)
    expert_bytes = 6 + 12 / pe.EXPERT_REPLICAS if distributed else sp.Integer(18)
    peer = dv.defines("M_peer", c_byte * (dense_bytes * (sharded / t + replicated) + expert_bytes * experts),
                      "18 bytes per parameter, or 6 + 12/d with the distributed optimizer, the experts' over their "
                      "expert-data-parallel t·d/(t_E·e) (L293–303)")
    dv.concludes(target)
    stage = "memory.states.stage1" if distributed else "memory.states"
    ours = ("M_ours", _family(sum(_f(stage).xreplace(MEGATRON_CORE).xreplace({P: _first_stage_params(kind), d: over})
                                            for kind, over in (("dense", d), ("experts", pe.EXPERT_REPLICAS)))),
                      "estimate's first stage priced as Megatron Core: params.stage.first at 2 + 4 + 12 bytes (the "
                      "distributed optimizer's 12/d), the experts over t·d/(t_E·e)")
    _claim(dv, ours, _family(peer), _megatron_state_terms(dense_bytes, expert_bytes),
           "exactly the modules the estimator counts elsewhere or not at all")
    return dv


def megatron_params() -> Derivation:
    dv = Derivation("peers.megatron.params", "Megatron-LM's estimator: the most loaded shard's parameters", (ESTIMATOR,))
    dv.defines("Ψ_attn", pe.ATTENTION_COUNT * u_param, "one layer's attention: Q and O of a heads, K and V of g (L81–93), "
               "or MLA's ranks and norms (L62–80)")
    dv.concludes("peers.megatron.attention")
    sharded = dv.defines("T", pe.SHARDED * u_param, "TP-sharded (L247–252), ÷ t")
    dv.concludes("peers.megatron.params.sharded")
    replicated = dv.defines("R", pe.REPLICATED * u_param, "replicated on every TP rank (L253–255)")
    dv.concludes("peers.megatron.params.replicated")
    experts = dv.defines("X", pe.EXPERTS * u_param, "the experts over t_E·e (L256–259)")
    dv.concludes("peers.megatron.params.experts")
    dv.defines("Ψ_shard", sharded / t + replicated + experts, "num_parameters_on_most_loaded_model_shard (L260–267)")
    dv.concludes("peers.megatron.params")
    return dv


def _mean(form: str) -> sp.Expr:
    """A layer's bytes on average: the dense decoder form and the MoE one, l_moe/l of them MoE."""
    dense, moe = _f(f"memory.activations.layer.decoder.{form}"), _f(f"memory.activations.layer.decoder.moe.{form}")
    return dense + l_moe / l * (moe - dense)


def _ours_activations(form: str, none: str, head: str, embedding: str, rebuilt: bool = True) -> sp.Expr:
    """The first stage's activations as estimate sums them: p micro-batches of l/p layers and of the embedding, the one
    layer the backward rebuilds, at p = 1 the head and loss and the MTP module's layer and head."""
    moe = _f(f"memory.activations.layer.decoder.moe.{form}")
    ends = _f(head) + n_mtp * (moe + _f(head))
    return l * _mean(form) + p * _f(embedding) + (_mean(none) - _mean(form) if rebuilt else 0) + (1 - piped) * ends


def _layer_terms(whole_divisor: sp.Expr, mlp_reference: sp.Expr) -> list[tuple[str, sp.Expr, str]]:
    """What a Korthikanti-style per-layer form leaves out, per token: the masks, the heads' widths, MLA's latents, the
    MLP's tensors, the MoE layers."""
    tokens = s * b * c_byte
    return [
        ("dropout masks", l * tokens * (2 * drop - 2) * h / whole_divisor,
         "no dropout (p = 0 saves nothing): the two 1-byte masks the form counts are not kept (Llama, Mixtral, DeepSeek)"),
        ("attention heads", l * tokens * (mem.ATTENTION_SPLIT - 8 * h) / t,
         "Q and the projection input at a·d_head, K and V at g KV heads (GQA) or MLA's heads, where the form has 8h"),
        ("MLA latents", l * tokens * mla * mem.MLA_LATENT / whole_divisor, "MLA's latents before and after their norms"),
        ("MLP tensors", l * tokens * (mem.DENSE_MLP_SPLIT - mlp_reference) / t,
         "the MLP's tensors: a SwiGLU keeps 4 (3 fused) d_ff-wide ones where the form has GELU's 2"),
        ("MoE layers", l_moe * (_f("memory.activations.layer.decoder.moe.selective_sp") - _f("memory.activations.layer.decoder.selective_sp"))
         if whole_divisor == t else
         l_moe * (_f("memory.activations.layer.decoder.moe.selective") - _f("memory.activations.layer.decoder.selective")),
         "the router's scores and indices, the k dispatched copies and the experts in place of a dense MLP"),
    ]


def megatron_activations() -> Derivation:
    dv = Derivation("peers.megatron.activations", "Megatron-LM's estimator: activations with SP and selective recompute",
                    (ESTIMATOR, Source("korthikanti2022", "Table 2")))
    layers = dv.defines("A_layers", s * b * h * (18 + 4 * d_ff / h) * l, "per layer sbh(18 + 4·d_ff/h), l layers (L317–325)")
    ids = dv.defines("A_ids", 8 * s * b * p + s * b * h * p, "the input ids and the embedding dropout, p micro-batches (L330–339)")
    ends = dv.defines("A_head", (1 - piped) * 4 * s * b * h * (1 + V / h), "at p = 1 the final norm's input and the logits (L368–376)")
    peer = dv.defines("A_peer", (layers + ids + ends) / t * c_byte, "all split t ways (L379)")
    dv.concludes("peers.megatron.activations")
    ours = ("A_ours", _ours_activations("selective_sp", "tp_sp", "memory.activations.logits_sp",
                                                  "memory.activations.embedding_sp"),
                      "estimate's first stage priced as Megatron Core: the decoder forms with SP and selective recompute")
    tokens = s * b * c_byte
    terms = _layer_terms(t, 4 * d_ff) + [
        ("embedding", p * tokens * (8 + drop * h / t) - p * tokens * (8 + h) / t,
         "the token ids whole on every rank (the lookup keeps them before the scatter), the mask only with dropout"),
        ("rebuilt layer", _mean("tp_sp") - _mean("selective_sp"),
         "the core attention of the one layer the backward recomputes (its softmax; with dropout its mask and dropped copy)"),
        ("head and loss", (1 - piped) * 9 * tokens, "the target mask and the int64 targets the loss keeps (cross_entropy.py L181)"),
        ("MTP module", (1 - piped) * n_mtp * (_f("memory.activations.layer.decoder.moe.selective_sp")
                                              + _f("memory.activations.logits_sp")),
         "the MTP module's layer and its own head and loss, which the estimator leaves out"),
    ]
    _claim(dv, ours, peer, terms, "exactly what its Table 2 form leaves out or counts otherwise")
    return dv


def megatron_activations_without_sp() -> Derivation:
    dv = Derivation("peers.megatron.activations.without_sp", "Megatron-LM's estimator in every other case", (ESTIMATOR,))
    bracket = dv.defines("A_bracket", s * b * h * (10 + 24 / t) * l + 8 * s * b * p + s * b * h * p
                         + (1 - piped) * 2 * (s * b * V / t + s * b * h),
                         "Korthikanti's selective TP row at l layers, the ids and embedding dropout, at p = 1 the logits "
                         "and the final norm's output in 16 bits (L382–446)")
    peer = dv.defines("A_peer", sp.Rational(105, 100) * bracket * c_byte, "+5 % 'for optimizer and miscellaneous' (L449–451)")
    dv.concludes("peers.megatron.activations.without_sp")
    ours = ("A_ours", _ours_activations("selective", "tp", "memory.activations.logits", "memory.activations.embedding"),
                      "estimate's first stage priced as Megatron Core with selective recompute, without SP")
    tokens = s * b * c_byte
    terms = [("overhead", -bracket * c_byte / 20, "the 5 % the estimator adds")] + _layer_terms(1, 16 * h) + [
        ("embedding", p * tokens * (8 + drop * h) - p * tokens * (8 + h), "the embedding's mask only with dropout"),
        ("rebuilt layer", _mean("tp") - _mean("selective"), "the core attention of the one layer the backward recomputes"),
        ("head and loss", (1 - piped) * tokens * (2 * h + 2 * V / t + 9),
         "the fp32 softmax (4V/t, not 2V/t), the head's input beside the norm's, the target mask and int64 targets"),
        ("MTP module", (1 - piped) * n_mtp * (_f("memory.activations.layer.decoder.moe.selective") + _f("memory.activations.logits")),
         "the MTP module's layer and its own head and loss"),
    ]
    _claim(dv, ours, peer, terms, "exactly the 5 % and what its per-layer form leaves out")
    full = _family(l * _f("memory.activations.layer.full_recompute") + _mean("tp") - _f("memory.activations.layer.full_recompute"))
    dv.refutes("full recompute", bracket.xreplace({p: 1, piped: 1}) * sp.Rational(105, 100) * c_byte,
               "report_theoretical_memory (L466–477) prices full recompute with this branch too: the layers then keep "
               "only their 2sbh inputs and one rebuilt layer", correct=full, source=ESTIMATOR)
    return dv


def megatron_flops() -> Derivation:
    dv = Derivation("peers.megatron.flops", "Megatron-LM's FLOPs", (Source(pe.ESTIMATOR, "training.py L1009–1311"),))
    dv.defines("Ψ_attn^F", pe.LINEAR_ATTENTION_COUNT * u_param, "Q, K, V and O of a and g heads, or MLA's projections "
               "with one weight per latent norm channel (L1190–1249)")
    dv.concludes("peers.megatron.attention.linear")
    linear = dv.defines("F_linear", 6 * b * s * ((2 + gated) * h * d_ff * (l - l_moe) + (2 + gated) * h * (d_moe * k + d_sh) * l_moe
                                                 + pe.LINEAR_ATTENTION_COUNT * l + n_mtp * (3 * h + 2 * h * h) + h * V * (n_mtp + 1)) * u_flop,
                        "3 GEMMs × 2 FLOPs per multiply-add of the MLPs, the k routed and the shared experts, the "
                        "attention projections, the MTP norms and projection, the logits (L1250–1305)")
    dv.concludes("peers.megatron.flops.linear")
    core = dv.defines("F_core", b * s**2 * l * pe.CORE * u_flop, "the s² core, halved for the causal mask (L1163–1170, L1309)")
    dv.concludes("peers.megatron.flops.core")
    peer = dv.defines("F_peer", linear + core, "together")
    dv.concludes("peers.megatron.flops")
    ours = ("F_ours", _family(_f("flops.decoder.training")), "flops.decoder.training: 3× what FlopCounterMode counts")
    terms = [
        ("causal square", 3 * l * _f("flops.decoder.attention.scores") - core,
         "the full s×s square eager attention computes; Megatron counts the causal half"),
        ("router", 3 * l_moe * _f("flops.decoder.router"), "the router's h×E GEMM, which Megatron leaves out"),
        ("shared gate", 3 * l_moe * 2 * b * s * sh_gate * h * u_flop, "Qwen2-MoE's shared-expert gate"),
        ("latent MoE", 3 * l_moe * (_f("flops.decoder.experts") - _f("flops.decoder.experts").xreplace({moe_lat: 0})
                                    + _f("flops.decoder.moe_latent")),
         "Nemotron-3-Super's latent projections and its experts at d_lat, which Megatron prices at h"),
        ("MLA norms", -6 * b * s * l * mla * (q_lora * r_q + r_kv) * u_flop, "Megatron counts the latent norms as GEMM work"),
        ("MTP module", -6 * b * s * n_mtp * (3 * h + 2 * h * h + h * V) * u_flop,
         "the MTP module's norms, projection and head, which transformers does not build"),
    ]
    _claim(dv, ours, _family(peer), terms, "exactly the square, the router and the MTP head")
    return dv


# --- DeepSpeed ---------------------------------------------------------------------------------------------------

def deepspeed_zero(stage: int) -> Derivation:
    target = f"peers.deepspeed.zero{stage}"
    source = Source(pe.DEEPSPEED, "stage_1_and_2.py L2430–2447" if stage == 2 else "stage3.py L3008–3044")
    dv = Derivation(target, f"DeepSpeed's ZeRO-{stage} estimator", (source,))
    partitioned = dv.defines("M_partition", 18 * P / d * c_byte / u_param,
                             "'2 grads16 + 4 grads32 + 4 params32 + 8 optimizer states' over N = d (L2442–2444)")
    whole = dv.defines("M_whole", (2 * P if stage == 2 else 4 * P_unit) * c_byte / u_param,
                       "the 16-bit parameters whole" if stage == 2 else "the largest module's 16-bit weights and gradients, 4λ")
    dv.defines("M_peer", whole + partitioned, "together")
    dv.concludes(target)
    states = _f(f"memory.states.stage{stage}").xreplace(DEEPSPEED)
    held = states + (_f("memory.zero3.gathered") if stage == 3 else 0)
    ours = ("M_ours", held, "DeepSpeed's ZeRO in bf16 at its backward: " + (
        "bf16 weights whole, bf16 gradients and Adam partitioned" if stage == 2 else "everything partitioned, the gathered module"))
    terms = [("step's fp32 gradients", -_f("memory.deepspeed.step_fp32_grads"),
              "the fp32 copy of the gradient partition exists only during the step (stage_1_and_2.py L1891–1917); the "
              "estimator counts it all run long: it prices the step's peak")]
    if stage == 3:
        terms.append(("16-bit parameter partition", 2 * P / d * c_byte / u_param,
                      "the rank's 1/d of the 16-bit parameters, which the 18 leaves out"))
    _claim(dv, ours, whole + partitioned, terms, "exactly the step's buffer" + (" and the 16-bit partition" if stage == 3 else ""))
    return dv


# --- llm-analysis --------------------------------------------------------------------------------------------------

LLM = Source(pe.LLM_ANALYSIS, "analysis.py at d841e40a")


def llm_analysis_activations(moe: bool) -> Derivation:
    target = "peers.llm_analysis.activations" + (".moe" if moe else "")
    dv = Derivation(target, "llm-analysis's training activations" + (" (MoE)" if moe else ""), (LLM,))
    attention = dv.defines("A_attn", pe.LA_ATTENTION, "per token ×t: the attention's input 2h/sp and Q, K, V, projection "
                           "inputs 4·2h/t (L622–625), the flash output and an fp32 statistic (2h + 4a)·2/t (L603–606), a "
                           "dropout mask h/sp (L628–629)")
    mlp = dv.defines("A_mlp", pe.LA_MOE_MLP if moe else pe.LA_DENSE_MLP,
                     "its MoE MLP (L701–712)" if moe else "the MLP's input 2h/sp, GELU's and fc2's inputs 2·2·d_ff/t (L713–728)")
    norms = dv.defines("A_norms", pe.LA_NORMS, "two layernorm inputs in fp32, 4h/sp each (L736–756)")
    layer = dv.defines("A_layer", attention + mlp + norms, "one layer, per token ×t", parts=("A_attn", "A_mlp", "A_norms"))
    outside = dv.defines("A_outside", pe.LA_OUTSIDE, "the embedding's output, the logits, one more layernorm (L2128–2138)")
    peer = dv.defines("A_peer", (l * layer + outside) * s * b / t * c_byte,
                      "l layers (not l/p) of one micro-batch and the outside (L2103–2138)")
    dv.concludes(target)
    form = "flash_sp"
    layer = _f("memory.activations.layer.decoder.moe." + form) if moe else _f("memory.activations.layer.decoder." + form)
    ours_expr = l * layer + p * _f("memory.activations.embedding_sp") + (1 - piped) * (
        _f("memory.activations.logits_sp") + n_mtp * (_f("memory.activations.layer.decoder.moe." + form) + _f("memory.activations.logits_sp")))
    ours = ("A_ours", _family(ours_expr), "estimate's first stage priced as Megatron Core: no recompute, flash "
                      "attention, SP (its p micro-batches of l/p layers are l layers' worth)")
    tokens = s * b * c_byte
    terms = [
        ("norm inputs", l * tokens * (4 * h - 8 * h) / t, "the norms' inputs in bf16 (4h), where it counts them in fp32 (8h)"),
        ("dropout masks", l * tokens * (2 * drop - 1) * h / t, "the masks a block keeps: two with dropout, none without; it counts one"),
        ("attention heads", l * tokens * (mem.ATTENTION_SPLIT - 8 * h) / t, "Q and the projection input at a·d_head, K and V at g heads (GQA)"),
        ("flash output", -l * tokens * 4 * h / t, "the flash kernel's output is the projection's input: it counts the one tensor twice"),
        ("log-sum-exp", -l * tokens * 4 * a / t, "the fp32 statistic is 4·a bytes a token, not 8·a"),
        ("MLA latents", l * tokens * mla * mem.MLA_LATENT / t, "MLA's latents"),
    ]
    if moe:
        terms.append(("MoE MLP", l * tokens * (4 * h + mem.MOE_ROUTER + mem.MOE_LATENT + mem.MOE_SPLIT) / t
                      + l * tokens * mem.MOE_COPIES * t_e / t
                      - l * tokens * (2 * h + pe.LA_MOE_MLP) / t,
                      "the router's scores, indices and weights, the experts' tensors (3 or 5 d_moe-wide per copy), the "
                      "copies' inputs and a latent MoE's up-projection input, against its two h-wide inputs, the copies whole and 1/t and their indices"))
    else:
        terms.append(("MLP tensors", l * tokens * (mem.DENSE_MLP_SPLIT - 4 * d_ff) / t,
                      "a SwiGLU's 4 (3 fused) d_ff-wide tensors where it counts GELU's 2"))
    terms += [
        ("embedding", p * _f("memory.activations.embedding_sp") - tokens * 2 * h / t,
         "p micro-batches' int64 token ids and masks, where it counts one embedding output"),
        ("head and loss", (1 - piped) * _f("memory.activations.logits_sp") - tokens * (2 * V + 4 * h) / t,
         "the head's and norm's inputs, the fp32 softmax and the targets on the last stage (the first at p = 1); it "
         "counts bf16 logits and an fp32 norm input on every stage"),
        ("MTP module", (1 - piped) * n_mtp * (_f("memory.activations.layer.decoder.moe." + form) + _f("memory.activations.logits_sp")),
         "the MTP module's layer and head"),
    ]
    _claim(dv, ours, peer, terms, "exactly the tensors it counts otherwise")
    return dv


def llm_analysis_kv() -> Derivation:
    dv = Derivation("peers.llm_analysis.kv_cache", "llm-analysis's KV cache", (LLM,))
    per_layer = dv.defines("KV_layer", 2 * b * s * (h / a) * sp.Max(g / t, 1) * q,
                           "K and V of h/a values for max(g/t, 1) heads (L886–919)")
    peer = dv.defines("KV_peer", (l / p) * per_layer, "the stage's l/p layers (L1420)")
    dv.concludes("peers.llm_analysis.kv_cache")
    split = dv.defines("KV_peer (t | g)", peer.xreplace({sp.Max(g / t, 1): g / t}),
                       "t divides g (estimate's layout rule), so max(g/t, 1) = g/t")
    ours = ("KV_ours", _f("memory.kv_cache") / (t * p), "memory.kv_cache (transformers' DynamicCache) of the stage, 1/t")
    _claim(dv, ours, split, [("head dim", 2 * (l / p) * b * s * q * (g / t) * (d_head - h / a),
                              "the heads' own width d_head where it takes h/a (Gemma, Qwen3)")], "exactly the head width")
    return dv


def llm_analysis_flops() -> Derivation:
    dv = Derivation("peers.llm_analysis.flops", "llm-analysis's training FLOPs", (LLM,))
    layer = dv.defines("F_layer", 4 * b * s * h * h + 4 * b * s * h * h * g / a + 4 * b * s**2 * h + (4 + 2 * gated) * b * s * h * d_ff,
                       "QKV and output projections, QKᵀ and ·V over the full square, the MLP (L921–1042)")
    peer = dv.defines("F_peer", 3 * (l * layer + 2 * b * s * h * V) * u_flop, "with the logits, 3× the forward (L2232–2249)")
    dv.concludes("peers.llm_analysis.flops")
    ours = dv.defines("F_ours (d_head = h/a)", _family(_f("flops.decoder.training")).xreplace(DENSE | {d_head: h / a}),
                      "flops.decoder.training of a dense block whose heads are h/a wide")
    dv.equals("F_ours (d_head = h/a)", peer, "the same GEMMs: llm-analysis counts what FlopCounterMode counts", aside=True)
    return dv


# --- EleutherAI's Transformer Math 101 ---------------------------------------------------------------------------

MATH = Source(pe.MATH, "blog.eleuther.ai/transformer-math")
DENSE = {l_moe: 0, mla: 0, n_mtp: 0}


def math_activations() -> Derivation:
    dv = Derivation("peers.transformer_math.activations", "Transformer Math 101's activations", (MATH,))
    peer = dv.defines("A_peer", s * b * h * l * (10 + 24 / t) * c_byte, "'sbhL(10 + 24/t)' with selective recompute")
    dv.concludes("peers.transformer_math.activations")
    ours = ("A_ours", _family(_ours_activations("selective", "tp", "memory.activations.logits",
                                                          "memory.activations.embedding")).xreplace(DENSE),
                      "estimate's first stage priced as Megatron Core with selective recompute, without SP")
    tokens = s * b * c_byte
    terms = [term for term in _layer_terms(1, 16 * h) if term[0] not in ("MLA latents", "MoE layers")] + [
        ("embedding", p * _f("memory.activations.embedding"), "the token ids and the embedding's mask, p micro-batches"),
        ("rebuilt layer", (_mean("tp") - _mean("selective")).xreplace(DENSE), "the core of the layer the backward recomputes"),
        ("head and loss", (1 - piped) * _f("memory.activations.logits"), "the head and loss on the last stage (here at p = 1)"),
    ]
    _claim(dv, ours, peer, [(label, _family(expr).xreplace(DENSE), why) for label, expr, why in terms],
           "exactly what Korthikanti's layer form leaves out")
    return dv


def math_states() -> Derivation:
    dv = Derivation("peers.transformer_math.states", "Transformer Math 101's 3D ZeRO-1 states", (MATH,))
    weights = dv.defines("M_model", 2 * P / (p * t), "'model / (PP·TP)' at 2 bytes")
    optimizer = dv.defines("M_opt", 12 * P / (t * p * d), "'optimizer / N' at 12 bytes")
    grads = dv.defines("M_grad", 2 * P / p, "'gradients / PP' at 2 bytes: tensor parallelism, it says, does not split them")
    peer = dv.defines("M_peer", (weights + optimizer + grads) * c_byte / u_param, "together")
    dv.concludes("peers.transformer_math.states")
    held = _family(_f("params.stage.first")).xreplace(DENSE)
    ours = ("M_ours", _f("memory.states.stage1").xreplace(MEGATRON_CORE).xreplace({P: held}),
                      "estimate's first stage priced as Megatron Core at ZeRO 1: the distributed optimizer, 6 + 12/d")
    shard = held - P / (t * p)
    terms = [("stage shard", (2 + 12 / d) * shard * c_byte / u_param,
              "the first stage holds its embedding and the norms TP keeps whole: Ψ_GPU − Ψ/(t·p) more parameters"),
             ("gradients", (4 * held - 2 * P / p) * c_byte / u_param,
              "fp32 main gradients of the GPU's shard (tensor parallelism splits them with the weights), not 16-bit ones over p")]
    _claim(dv, ours, peer, terms, "exactly the shard and the gradients")
    return dv


def math_flops() -> Derivation:
    dv = Derivation("peers.transformer_math.flops", "Transformer Math 101's 6PD", (MATH,))
    peer = dv.defines("F_peer", 6 * P * b * s * u_flop / u_param, "C = 6PD, D = b·s tokens")
    dv.concludes("peers.transformer_math.flops")
    ours = ("F_ours", _family(_f("flops.decoder.training")).xreplace(DENSE), "flops.decoder.training of a dense model")
    at = {P: _family(_f("params.decoder.total")).xreplace(DENSE)}
    per_token = 6 * b * s * u_flop / u_param
    biases = l * ((b_q * a * d_head + (b_k + b_v) * g * d_head + b_o * h) + b_mlp * ((1 + gated) * d_ff + h)) * u_param
    terms = [
        ("attention scores", 3 * l * _f("flops.decoder.attention.scores"), "QKᵀ and scores·V, which 6PD leaves out"),
        ("biases", -per_token * biases, "biases are added, not multiplied: no GEMM FLOPs"),
        ("norms", -per_token * _family(l * _f("params.decoder.norms") + _f("params.decoder.final_norm")),
         "norm scales (and shifts) do no GEMM"),
        ("embedding and head", per_token * (V * h * u_param - _family(_f("params.decoder.embeddings") + _f("params.decoder.head"))),
         "the lookup table and the position table do no GEMM; the head's V×h GEMM is counted once, tied or not"),
    ]
    _claim(dv, ours, peer.xreplace(at), [(label, _family(expr).xreplace(DENSE), why) for label, expr, why in terms],
           "exactly the scores and the parameters that do no GEMM")
    return dv


DERIVATIONS = (
    megatron_params,
    lambda: megatron_states(False),
    lambda: megatron_states(True),
    megatron_activations,
    megatron_activations_without_sp,
    megatron_flops,
    lambda: deepspeed_zero(2),
    lambda: deepspeed_zero(3),
    lambda: llm_analysis_activations(False),
    lambda: llm_analysis_activations(True),
    llm_analysis_kv,
    llm_analysis_flops,
    math_activations,
    math_states,
    math_flops,
)
