"""Reference mixture-of-experts and multi-head-latent-attention layers, siblings of tests/megatron_block.py.

Same layout ([s, b, h], bf16 on the CPU), the same norms, dropouts, tensor and sequence parallelism
on one rank, the same ``mode`` (eager, selective, flash, full) and the same meter (``measure``).

``MoELayer`` replaces the MLP by a top-k mixture of experts, as Megatron-Core's MoE layer and
transformers 5.24's Mixtral/DeepseekV3 MoE run it:
  router     logits = y·W_r (h → E, 16-bit), softmax over the E experts in fp32 (saves its [T, E] output;
             DeepSeek-V3's sigmoid scores and Megatron-Core's load-balancing softmax are the same size), top-k
             (saves its int64 indices), the k weights renormalised to sum to 1 (the division saves the k values
             and their fp32 sum; Mixtral, DeepSeek-V3's norm_topk_prob);
  dispatch   the T·k (token, expert) pairs sorted by expert (argsort; int64), the tokens gathered in that order
             (a new [T·k, h] buffer, the experts' GEMM input; the gather keeps its int64 token index) and the
             weights likewise (its own int64 index);
  experts    each local expert runs the dense block's MLP on its rows at d_moe/tp (gated: one up-and-gate GEMM,
             SiLU, product; ungated: GELU); its routing weight multiplies the activation's output before the
             down projection, as Megatron-Core's ``activation_func_with_probs`` does (the product is saved by
             that multiply, the weights in fp32);
  combine    the down projections' outputs added back to their tokens (scatter_add: only the index is saved;
             index_add would also keep the [T·k, h] outputs);
  latent     ``d_lat`` > 0 (Nemotron-3-Super): a replicated h → d_lat projection before the dispatch (its input is
             the router's) and d_lat → h after the combine (saves its d_lat-wide input); the copies are d_lat wide;
  shared     ``d_sh`` > 0: a dense MLP of width d_sh/tp on every token (column/row parallel like the dense MLP),
             optionally scaled by a sigmoid gate h → 1 (Qwen2-MoE; the product saves the shared output).
Expert parallelism is not simulated: under balanced routing an expert-parallel rank receives as many copies
(T·k) as it sends, so one rank holding every expert stores what each of e ranks stores. Under sequence
parallelism the router and dispatch run on the rank's s/tp tokens and the copies are all-gathered over the
tp ranks before the experts (Megatron-Core's all-to-all dispatcher; repeats of this rank's copies stand in for
the others'), so the experts' h-wide input is whole; the outputs are reduce-scattered back.
``fused_swiglu`` runs each expert's SwiGLU and routing-weight multiply as one function that keeps fc1's output
and the fp32 weight, as Megatron Core's WeightedSwiGLUFunction (fused_bias_swiglu.py L266–290, used by
moe/experts.py L963–971 at d98e8a64). ``expert_tp`` (t_E < tp, with sequence parallelism) splits each expert over
t_E ranks only: the copies are not all-gathered over tp, every expert runs at width d_moe/t_E on this rank's copies.
Where the reference differs from a real framework: Megatron-Core's fused permute keeps an int32 map instead of
the int64 indices, and its all-to-all buffers (not saved for backward) are not modelled; transformers' Mixtral
and DeepseekV3 multiply the weights into each expert's h-wide output instead (saving that output, + h − d_moe
values per copy) and loop over experts without a permuted buffer (they save each expert's gathered rows).

``MLALayer`` replaces the attention by DeepSeek-V2/V3's multi-head latent attention (transformers'
DeepseekV3Attention): queries h → r_Q (normed) → a·(d_nope + d_rope), or h → a·(d_nope + d_rope) without a
query latent; keys and values h → r_KV + d_rope, the latent part normed and up-projected r_KV → a·(d_nope + d_v),
the d_rope part rotated and shared by every head. The down projections are replicated on the tp ranks (run on
the s/tp shard under sequence parallelism), the up projections column-parallel. The rotation is one autograd
function that keeps only its position tables (as Megatron's fused RoPE kernel), so it saves no activation. The
latent norms are LayerNorms: they save their input and per-row statistics as DeepSeek's RMSNorms save their
input (and one rstd). V is a view of the up projection's [.., a·(d_nope + d_v)] output, which it keeps whole.
``mode="flash"`` needs d_v = d_nope + d_rope (PyTorch's CPU flash kernel takes one head width).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from megatron_block import DTYPE, FusedSwiGLU, GatheredLinear, MegatronLayer


class Rotary(torch.autograd.Function):
    """Rotary embedding of the last dimension (pairs (x₀, x_{d/2}), ...) by a position's angle; backward rotates
    back. The cos/sin tables ride on ctx, not saved_tensors: position-only, as a fused kernel's frequencies."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        ctx.tables = (cos, sin)
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        cos, sin = ctx.tables
        half = grad.shape[-1] // 2
        g1, g2 = grad[..., :half], grad[..., half:]
        return torch.cat([g1 * cos + g2 * sin, g2 * cos - g1 * sin], dim=-1), None, None


def rotary_tables(s: int, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of shape [s, 1, width/2] (broadcast over b and heads by the caller's view)."""
    angles = torch.arange(s, dtype=torch.float32)[:, None] / (10000.0 ** (torch.arange(width // 2) / (width // 2)))
    return angles.cos().to(DTYPE)[:, None, :], angles.sin().to(DTYPE)[:, None, :]


class WeightedSwiGLU(torch.autograd.Function):
    """SiLU(gate)·up·w in one function that keeps its input and the fp32 weights (Megatron Core's WeightedSwiGLUFunction)."""

    @staticmethod
    def forward(ctx, z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(z, w)
        gate, up = z.chunk(2, dim=-1)
        return (F.silu(gate) * up * w).to(z.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        z, w = ctx.saved_tensors
        gate, up = z.float().chunk(2, dim=-1)
        sig = torch.sigmoid(gate)
        glu = gate * sig * up
        g = grad.float() * w
        dz = torch.cat([g * up * sig * (1 + gate * (1 - sig)), g * gate * sig], dim=-1)
        return dz.to(z.dtype), (grad.float() * glu).sum(-1, keepdim=True)


class MoELayer(MegatronLayer):
    """The dense reference layer with its MLP replaced by E experts of width d_moe, k per token (see the module)."""

    def __init__(self, h: int, a: int, *, E: int, k: int, d_moe: int, gated: bool = True, d_sh: int = 0,
                 sh_gate: bool = False, expert_tp: int | None = None, d_lat: int = 0, **options):
        super().__init__(h, a, **options)
        tp = self.tp
        self.expert_tp = tp if expert_tp is None else expert_tp
        assert d_moe % self.expert_tp == 0 and d_sh % tp == 0 and k <= E
        assert self.expert_tp == tp or self.sequence_parallel
        self.E, self.k, self.moe_gated, self.d_sh, self.has_sh_gate = E, k, gated, d_sh, sh_gate
        del self.fc1, self.fc2  # the dense MLP's matrices
        self.router = torch.nn.Linear(h, E, bias=False, dtype=DTYPE)
        width = (2 if gated else 1) * d_moe // self.expert_tp
        outer = d_lat or h  # Nemotron-3-Super's latent MoE: the experts read and write d_lat
        self.w1 = torch.nn.Parameter(torch.randn(E, width, outer, dtype=DTYPE) / outer**0.5)
        self.w2 = torch.nn.Parameter(torch.randn(E, outer, d_moe // self.expert_tp, dtype=DTYPE) / d_moe**0.5)
        if d_lat:  # fc1_latent_proj h → d_lat before the experts, fc2_latent_proj d_lat → h after (replicated)
            self.lat_down = torch.nn.Linear(h, d_lat, bias=False, dtype=DTYPE)
            self.lat_up = torch.nn.Linear(d_lat, h, bias=False, dtype=DTYPE)
        self.d_lat = d_lat
        if d_sh:
            self.sh_fc1 = torch.nn.Linear(h, (2 if gated else 1) * d_sh // tp, dtype=DTYPE)
            self.sh_fc2 = torch.nn.Linear(d_sh // tp, h, dtype=DTYPE)
        if sh_gate:
            self.sh_gate = torch.nn.Linear(h, 1, bias=False, dtype=DTYPE)

    def activation(self, z: torch.Tensor) -> torch.Tensor:
        if self.moe_gated and self.fused_swiglu:  # the shared experts: Megatron Core's MLP, bias_swiglu_impl
            return FusedSwiGLU.apply(z)
        if self.moe_gated:
            gate, up = z.chunk(2, dim=-1)
            return F.silu(gate) * up
        return F.gelu(z)

    def experts(self, copies: torch.Tensor, weights: torch.Tensor, counts: list[int]) -> torch.Tensor:
        """Each expert's rows (copies sorted by expert, ``counts`` rows each): fc1, activation × weight, fc2."""
        outputs, start = [], 0
        for expert, rows in enumerate(counts):
            x, w = copies[start:start + rows], weights[start:start + rows, None]
            if self.moe_gated and self.fused_swiglu:
                weighted = WeightedSwiGLU.apply(F.linear(x, self.w1[expert]), w)
            else:
                weighted = (self.activation(F.linear(x, self.w1[expert])) * w).to(DTYPE)
            outputs.append(F.linear(weighted, self.w2[expert]))
            start += rows
        return torch.cat(outputs)

    def mlp(self, y: torch.Tensor) -> torch.Tensor:
        rows, b, h = y.shape  # rows = s/tp under sequence parallelism
        tokens = y.reshape(-1, h)
        scores = torch.softmax(self.router(tokens).float(), dim=-1)
        values, index = scores.topk(self.k, dim=-1)
        weights = values / values.sum(dim=-1, keepdim=True)
        with torch.no_grad():
            order = index.flatten().argsort(stable=True)
            token_of = order // self.k
            counts = torch.bincount(index.flatten(), minlength=self.E).tolist()
        routed = self.lat_down(tokens) if self.d_lat else tokens  # the latent projection saves the router's input
        copies, routed_weights = routed[token_of], weights.flatten()[order]
        if self.sequence_parallel and self.expert_tp < self.tp:  # experts over t_E ranks: this rank's copies only
            out = self.experts(copies, routed_weights, counts)
        elif self.sequence_parallel:  # all-gather over the tp ranks: every rank runs its d_moe/tp of all copies
            copies, routed_weights = copies.repeat(self.tp, 1), routed_weights.repeat(self.tp)
            out = torch.cat([self.experts(part, w, counts) for part, w in
                             zip(copies.chunk(self.tp), routed_weights.chunk(self.tp))])
            out = out[: out.shape[0] // self.tp]  # the reduce-scatter: this rank's copies
        else:
            out = self.experts(copies, routed_weights, counts)
        combined = torch.zeros_like(routed).scatter_add(0, token_of[:, None].expand(-1, routed.shape[1]), out)  # saves the index only
        if self.d_lat:
            combined = self.lat_up(combined)  # saves its d_lat-wide input
        if self.d_sh:
            z = self.column(self.sh_fc1, y)
            shared = self.row(self.sh_fc2, self.activation(z)).reshape(-1, h)
            if self.has_sh_gate:
                shared = shared * torch.sigmoid(self.sh_gate(tokens))
            combined = combined + shared
        return combined.view(rows, b, h)


class MLAMixin:
    """Multi-head latent attention in place of the grouped QKV (see the module); a = g, heads split over tp."""

    def setup_mla(self, h: int, *, r_q: int, r_kv: int, d_rope: int, d_nope: int, d_v: int) -> None:
        heads, d_qk = self.heads, d_nope + d_rope
        self.r_q, self.r_kv, self.d_rope, self.d_nope, self.d_v = r_q, r_kv, d_rope, d_nope, d_v
        del self.qkv
        if r_q:
            self.q_down = torch.nn.Linear(h, r_q, bias=False, dtype=DTYPE)
            self.q_norm = torch.nn.LayerNorm(r_q, dtype=DTYPE)
            self.q_up = torch.nn.Linear(r_q, heads * d_qk, bias=False, dtype=DTYPE)
        else:
            self.q_proj = torch.nn.Linear(h, heads * d_qk, bias=False, dtype=DTYPE)
        self.kv_down = torch.nn.Linear(h, r_kv + d_rope, bias=False, dtype=DTYPE)
        self.kv_norm = torch.nn.LayerNorm(r_kv, dtype=DTYPE)
        self.kv_up = torch.nn.Linear(r_kv, heads * (d_nope + d_v), bias=False, dtype=DTYPE)
        self.proj = torch.nn.Linear(heads * d_v, h, dtype=DTYPE)

    def attention(self, y: torch.Tensor, s: int, b: int) -> torch.Tensor:
        heads, d_rope, d_nope, d_v = self.heads, self.d_rope, self.d_nope, self.d_v
        shard = y.shape[0]
        if self.r_q:
            q = self.column(self.q_up, self.q_norm(F.linear(y, self.q_down.weight)))
        else:
            q = self.column(self.q_proj, y)
        latent, k_rope = F.linear(y, self.kv_down.weight).split([self.r_kv, d_rope], dim=-1)
        kv = self.column(self.kv_up, self.kv_norm(latent)).view(s, b, heads, d_nope + d_v)
        cos, sin = rotary_tables(s, d_rope)
        start = 0  # this rank's positions under sequence parallelism: the first shard (the others are copies)
        k_rope = Rotary.apply(k_rope, cos[start:start + shard], sin[start:start + shard])
        if self.sequence_parallel:
            k_rope = k_rope.repeat(self.tp, 1, 1)  # all-gathered along s
        q = q.view(s, b, heads, d_nope + d_rope)
        q_rope = Rotary.apply(q[..., d_nope:], cos[:, :, None], sin[:, :, None])
        query = torch.cat([q[..., :d_nope], q_rope], dim=-1)
        key = torch.cat([kv[..., :d_nope], k_rope[:, :, None].expand(s, b, heads, d_rope)], dim=-1)
        value = kv[..., d_nope:]
        rows = b * heads
        return self.attend(query.view(s, rows, 1, d_nope + d_rope), key.view(s, rows, d_nope + d_rope),
                           value.reshape(s, rows, d_v))


class MLALayer(MLAMixin, MegatronLayer):
    def __init__(self, h: int, a: int, *, r_q: int, r_kv: int, d_rope: int, d_nope: int, d_v: int, **options):
        super().__init__(h, a, d_head=d_nope + d_rope, **options)
        self.setup_mla(h, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope, d_v=d_v)


class MLAMoELayer(MLAMixin, MoELayer):
    """DeepSeek-V3's MoE layer: latent attention and a mixture of experts with shared experts."""

    def __init__(self, h: int, a: int, *, r_q: int, r_kv: int, d_rope: int, d_nope: int, d_v: int, **options):
        super().__init__(h, a, d_head=d_nope + d_rope, **options)
        self.setup_mla(h, r_q=r_q, r_kv=r_kv, d_rope=d_rope, d_nope=d_nope, d_v=d_v)


__all__ = ["MoELayer", "MLALayer", "MLAMoELayer", "GatheredLinear"]
