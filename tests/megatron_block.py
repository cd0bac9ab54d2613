"""A reference Megatron-style GPT layer in plain PyTorch, and a meter of what it saves.

Layout [s, b, h], bf16 on the CPU, as Megatron-LM's GPT layer: LayerNorm, one
QKV GEMM whose output Q, K and V are views of, QKᵀ (baddbmm), softmax, dropout,
scores·V, output projection, dropout + residual, LayerNorm, h→4h GELU→h MLP (or a
gated SiLU MLP of width d_ff), dropout + residual. Dropout is torch.native_dropout,
which saves a bool mask (1 byte) as Megatron's fused kernel does (F.dropout on the
CPU saves a 16-bit mask). ``tp`` simulates one tensor-parallel rank: a/tp heads,
4h/tp MLP width, norms and residual whole. ``g`` KV heads (GQA, Megatron's
grouped QKV layout [s, b, g, (a/g + 2)·d_head]) are read in place: the eager core
runs QKᵀ, softmax, dropout and ·V once per query head of a group against the
group's shared K and V, never repeating them; ``d_head`` may differ from h/a. ``mode``: "eager", "selective"
(torch.utils.checkpoint around the core attention), "full" (checkpoint around the
layer), "flash" (F.scaled_dot_product_attention; no attention dropout).
``sequence_parallel`` (with tp > 1) keeps the norm and dropout regions as [s/t, b, h]
shards, gathers them before the column-parallel GEMMs (saving only the shard) and
reduce-scatters after the row-parallel ones. ``dropout=0`` runs as Megatron Core with
--attention-dropout 0 --hidden-dropout 0 (Llama's recipe): F.dropout with p = 0 returns its
input (ATen's Dropout.cpp), so no mask is saved and the softmax output is the scores·V
input. ``fused_swiglu`` replaces SiLU and product by one autograd function that saves only
its input, as Megatron Core's SwiGLUFunction (megatron/core/fusions/fused_bias_swiglu.py
L216–263 at d98e8a64).

``saved_bytes`` counts the unique storages saved for backward
(torch.autograd.graph.saved_tensors_hooks), parameters excluded.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

DTYPE = torch.bfloat16


def saved_bytes(run: Callable[[], torch.Tensor], parameters) -> int:
    """Bytes of the distinct non-parameter storages saved for backward while ``run()`` executes."""
    param_storages = {p.untyped_storage().data_ptr() for p in parameters}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in param_storages:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = run()
    output.float().sum().backward()  # the graph must be a valid one
    return sum(storages.values())


class GatheredLinear(torch.autograd.Function):
    """Sequence parallelism's all-gather before a column-parallel GEMM, on one rank.

    The other ranks' shards are stood in for by copies of this one; as in Megatron-LM,
    only the local [s/t, b, h] shard is saved and the gather is redone in backward.
    """

    @staticmethod
    def forward(ctx, shard: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, tp: int) -> torch.Tensor:
        ctx.save_for_backward(shard, weight)
        ctx.tp = tp
        return F.linear(shard.repeat(tp, 1, 1), weight, bias)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        shard, weight = ctx.saved_tensors
        full = shard.repeat(ctx.tp, 1, 1)
        grad_input = (grad @ weight).view(ctx.tp, *shard.shape).sum(0)  # the reduce-scatter, summed locally
        grad_weight = grad.flatten(0, 1).T @ full.flatten(0, 1)
        return grad_input, grad_weight, grad.sum((0, 1)) if ctx.needs_input_grad[2] else None, None


def bool_dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    if p == 0:  # what F.dropout does at p = 0: the input itself, nothing saved
        return x
    return torch.native_dropout(x, p, training)[0]


class FusedSwiGLU(torch.autograd.Function):
    """SiLU(gate)·up in one function that keeps only its [.., 2·d_ff] input, as Megatron Core's SwiGLUFunction."""

    @staticmethod
    def forward(ctx, z: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(z)
        gate, up = z.chunk(2, dim=-1)
        return F.silu(gate) * up

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (z,) = ctx.saved_tensors
        gate, up = z.chunk(2, dim=-1)
        sig = torch.sigmoid(gate)
        silu = gate * sig
        return torch.cat([grad * up * sig * (1 + gate * (1 - sig)), grad * silu], dim=-1)


class MegatronLayer(torch.nn.Module):
    def __init__(self, h: int, a: int, *, tp: int = 1, mode: str = "eager", dropout: float = 0.1, d_ff: int | None = None,
                 sequence_parallel: bool = False, g: int | None = None, d_head: int | None = None, fused_swiglu: bool = False):
        super().__init__()
        self.fused_swiglu = fused_swiglu
        g = a if g is None else g
        assert a % g == 0 and g % tp == 0 and (d_head is not None or h % a == 0)
        assert mode != "flash" or g == a
        self.h, self.a, self.tp, self.mode, self.p = h, a, tp, mode, dropout
        self.sequence_parallel = sequence_parallel
        self.heads, self.kv_heads = a // tp, g // tp
        self.group = a // g  # query heads per KV head
        self.d_head = h // a if d_head is None else d_head
        width = self.heads * self.d_head
        self.gated = d_ff is not None
        inner = (d_ff if self.gated else 4 * h) // tp
        self.ln1 = torch.nn.LayerNorm(h, dtype=DTYPE)
        self.qkv = torch.nn.Linear(h, (self.heads + 2 * self.kv_heads) * self.d_head, dtype=DTYPE)
        self.proj = torch.nn.Linear(width, h, dtype=DTYPE)
        self.ln2 = torch.nn.LayerNorm(h, dtype=DTYPE)
        self.fc1 = torch.nn.Linear(h, (2 if self.gated else 1) * inner, dtype=DTYPE)
        self.fc2 = torch.nn.Linear(inner, h, dtype=DTYPE)

    def core(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """QKᵀ → softmax → dropout → ·V, for each query head of a group against the group's K, V.

        q: [s, b·kv_heads, group, d_head], k and v: [s, b·kv_heads, d_head] (views of the QKV output);
        returns [b·heads, s, d_head], heads ordered group by group.
        """
        s, rows, _, d_qk = q.shape
        causal = torch.full((s, s), float("-inf"), dtype=DTYPE).triu(1).expand(rows, s, s)
        kb, vb = k.transpose(0, 1), v.transpose(0, 1)
        outputs = []
        for head in range(self.group):
            qb = q[:, :, head].transpose(0, 1)
            scores = torch.baddbmm(causal, qb, kb.transpose(1, 2), alpha=1.0 / math.sqrt(d_qk))
            probs = bool_dropout(torch.softmax(scores, dim=-1), self.p, self.training)
            outputs.append(torch.bmm(probs, vb))
        return torch.stack(outputs, dim=1).reshape(-1, s, v.shape[-1])

    def core_flash(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q = q.squeeze(2)  # flash runs without GQA: one query head per group
        s, rows, _ = q.shape
        b = rows // self.heads

        def heads_first(x: torch.Tensor) -> torch.Tensor:
            return x.reshape(s, b, self.heads, x.shape[-1]).permute(1, 2, 0, 3)

        out = F.scaled_dot_product_attention(heads_first(q), heads_first(k), heads_first(v), is_causal=True)
        return out.reshape(rows, s, v.shape[-1])

    def column(self, linear: torch.nn.Linear, y: torch.Tensor) -> torch.Tensor:
        """A column-parallel GEMM; under sequence parallelism its input is gathered along s first."""
        if self.sequence_parallel:
            return GatheredLinear.apply(y, linear.weight, linear.bias, self.tp)
        return linear(y)

    def row(self, linear: torch.nn.Linear, y: torch.Tensor) -> torch.Tensor:
        """A row-parallel GEMM; under sequence parallelism its output is reduce-scattered along s."""
        out = linear(y)
        return out[: out.shape[0] // self.tp] if self.sequence_parallel else out

    def mlp(self, y: torch.Tensor) -> torch.Tensor:
        z = self.column(self.fc1, y)
        if self.gated and self.fused_swiglu:
            return self.row(self.fc2, FusedSwiGLU.apply(z))
        if self.gated:
            gate, up = z.chunk(2, dim=-1)
            return self.row(self.fc2, F.silu(gate) * up)
        return self.row(self.fc2, F.gelu(z))

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """The core attention by ``mode``: q [s, b·kv_heads, group, d_qk], k [s, b·kv_heads, d_qk],
        v [s, b·kv_heads, d_v] → [s, b, heads·d_v] (a new tensor, the output projection's input)."""
        if self.mode == "selective":
            ctx = checkpoint(self.core, q, k, v, use_reentrant=False)
        elif self.mode == "flash":
            ctx = self.core_flash(q, k, v)
        else:
            ctx = self.core(q, k, v)
        s, rows, d_v = ctx.shape[1], ctx.shape[0], ctx.shape[-1]
        b = rows // self.heads
        return ctx.view(b, self.heads, s, d_v).permute(2, 0, 1, 3).reshape(s, b, self.heads * d_v)

    def attention(self, y: torch.Tensor, s: int, b: int) -> torch.Tensor:
        """Q, K, V from the first norm's output y (one grouped QKV GEMM), then the core."""
        qkv = self.column(self.qkv, y).view(s, b * self.kv_heads, self.group + 2, self.d_head)
        return self.attend(qkv[:, :, : self.group], qkv[:, :, self.group], qkv[:, :, self.group + 1])

    def layer(self, x: torch.Tensor) -> torch.Tensor:
        s, b, _ = x.shape
        s = s * self.tp if self.sequence_parallel else s
        ctx = self.attention(self.ln1(x), s, b)
        x = x + bool_dropout(self.row(self.proj, ctx), self.p, self.training)
        return x + bool_dropout(self.mlp(self.ln2(x)), self.p, self.training)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mode == "full":
            return checkpoint(self.layer, x, use_reentrant=False)
        return self.layer(x)


def measure(s: int, b: int, h: int, a: int, *, block: type = MegatronLayer, **options) -> int:
    """Saved-for-backward bytes of one layer (one rank) on an input that needs a gradient.

    Under sequence parallelism the rank's input is its [s/t, b, h] shard.
    """
    torch.manual_seed(0)
    layer = block(h, a, **options)
    rows = s // layer.tp if layer.sequence_parallel else s
    x = torch.randn(rows, b, h, dtype=DTYPE, requires_grad=True)
    return saved_bytes(lambda: layer(x), layer.parameters())
