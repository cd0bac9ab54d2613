"""Reference output layer and loss, and token embedding, as Megatron-LM and Megatron Core run them (one TP rank).

``MegatronHead``: the final LayerNorm (on the rank's s/t tokens under sequence parallelism), the column-parallel
head of V/t rows (its input gathered along s under SP, only the shard saved: tests/megatron_block.GatheredLinear),
and the vocabulary-parallel cross-entropy as megatron/core/tensor_parallel/cross_entropy.py (L20–185 at d98e8a64)
computes it: the logits cast to fp32 (``vocab_parallel_logits.float()``), the max subtracted and the exponentials
taken in place, ``save_for_backward(exp_logits, target_mask, masked_target_1d)``. The other ranks' vocabulary
shards are stood in for by this one (the all-reduces of the max and of the sums are identities on one rank).
``MegatronEmbedding``: the vocabulary-parallel lookup (it keeps the int64 ids, masked to this rank's range) and the
embedding dropout (a 1-byte mask, on the rank's s/t tokens under SP; none at p = 0).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from megatron_block import DTYPE, GatheredLinear, bool_dropout


class VocabParallelCrossEntropy(torch.autograd.Function):
    """Megatron's loss over this rank's V/t logits: keeps the fp32 softmax, the target mask and the int64 targets."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor, start: int) -> torch.Tensor:
        logits = logits.float()
        logits -= logits.max(dim=-1, keepdim=True)[0]
        mask = (target < start) | (target >= start + logits.shape[-1])
        masked = target.clone() - start
        masked[mask] = 0
        predicted = logits.gather(-1, masked.unsqueeze(-1)).squeeze(-1).masked_fill(mask, 0.0)
        logits.exp_()
        total = logits.sum(dim=-1)
        logits.div_(total.unsqueeze(-1))
        ctx.save_for_backward(logits, mask, masked.view(-1))
        return torch.log(total) - predicted

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        softmax, mask, masked = ctx.saved_tensors
        flat = softmax.view(-1, softmax.shape[-1]).clone()
        rows = torch.arange(flat.shape[0])
        flat[rows, masked] -= 1.0 - mask.view(-1).float()
        return (flat.view_as(softmax) * grad.unsqueeze(-1)).to(DTYPE), None, None


class MegatronHead(torch.nn.Module):
    def __init__(self, h: int, V: int, *, tp: int = 1, sequence_parallel: bool = False):
        super().__init__()
        self.tp, self.sequence_parallel = tp, sequence_parallel
        self.norm = torch.nn.LayerNorm(h, dtype=DTYPE)
        self.head = torch.nn.Linear(h, V // tp, bias=False, dtype=DTYPE)

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        y = self.norm(x)
        if self.sequence_parallel:
            logits = GatheredLinear.apply(y, self.head.weight, None, self.tp)
        else:
            logits = self.head(y)
        return VocabParallelCrossEntropy.apply(logits, target, 0)


class MegatronEmbedding(torch.nn.Module):
    def __init__(self, h: int, V: int, *, tp: int = 1, sequence_parallel: bool = False, dropout: float = 0.1):
        super().__init__()
        self.tp, self.sequence_parallel, self.p = tp, sequence_parallel, dropout
        self.table = torch.nn.Embedding(V // tp, h, dtype=DTYPE)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        masked = ids.clone()  # this rank's range [0, V/t): the others' ids would be masked to 0
        masked[ids >= self.table.num_embeddings] = 0
        out = F.embedding(masked, self.table.weight)
        if self.sequence_parallel:  # reduce-scattered along s before the dropout
            out = out[: out.shape[0] // self.tp]
        return bool_dropout(out, self.p, self.training)
