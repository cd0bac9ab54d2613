"""Measuring a prefill and a decoding step of a real tiny transformers model on the CPU (no downloads).

- FLOPs: ``torch.utils.flop_counter.FlopCounterMode`` around the call (eager attention, eager experts).
- Bytes read: ``ReadBytes``, a ``TorchDispatchMode`` that sees every aten op with its tensor arguments and records,
  per op, the bytes it reads from each storage: a kernel-per-op implementation's traffic. An op whose output aliases
  an input (a view, ``_unsafe_view``) reads nothing through it; a gather (an embedding lookup, an index) reads the
  rows it returns; any other op reads each distinct element of an input once (an expanded view, stride 0, once, not
  once per copy). The reads are sorted after the call into the model's parameters, the cache tensors that hold the
  cache after it, and those of before it (DynamicCache's torch.cat copies them into new tensors every step).
  Every tensor seen is kept alive until then, so that no storage address is reused within the call.
- Experts routed to: a forward hook on each MoE layer's experts module records the ``top_k_index`` it is given.

Shared by tests/test_serving_oracles.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode
from transformers import DynamicCache

GATHERS = {torch.ops.aten.embedding.default, torch.ops.aten.index.Tensor, torch.ops.aten.index_select.default}


def storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def distinct_bytes(tensor: torch.Tensor) -> int:
    """Bytes of the distinct elements a tensor spans (a broadcast dimension, stride 0, counts once)."""
    elements = 1
    for size, stride in zip(tensor.shape, tensor.stride()):
        if stride != 0:
            elements *= size
    return elements * tensor.element_size()


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


class ReadBytes(TorchDispatchMode):
    """Every (storage, bytes) an op reads; ``total(storages)`` sums those of a group of storages."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[tuple[int, int]] = []
        self._alive: list[torch.Tensor] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        produced = _tensors(out)
        outputs = {storage(t) for t in produced}
        for position, tensor in enumerate(_tensors(list(args) + list(kwargs.values()))):
            where = storage(tensor)
            if where in outputs:
                continue
            gathered = func in GATHERS and position == 0
            self.reads.append((where, sum(t.numel() * t.element_size() for t in produced) if gathered else distinct_bytes(tensor)))
            self._alive.append(tensor)
        self._alive.extend(produced)
        return out

    def total(self, storages: set[int]) -> int:
        return sum(read for where, read in self.reads if where in storages)


def cache_storages(cache: DynamicCache) -> set[int]:
    return {storage(t) for layer in cache.layers if layer.is_initialized for t in (layer.keys, layer.values)}


def cache_bytes(cache: DynamicCache) -> int:
    """Bytes the cache holds: numel·element_size of every cached tensor."""
    return sum(t.numel() * t.element_size() for layer in cache.layers if layer.is_initialized for t in (layer.keys, layer.values))


class ExpertLog:
    """The experts each MoE layer's experts module is given in one call (its top_k_index)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self._hit: list[set[int]] = []
        for module in model.modules():
            if type(module).__name__.endswith("Experts"):
                module.register_forward_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs, output) -> None:
        index = args[1] if len(args) > 1 else kwargs["top_k_index"]
        self._hit.append(set(index.flatten().tolist()))

    def take(self) -> tuple[int, ...]:
        """How many distinct experts each MoE layer was given since the last call."""
        taken, self._hit = self._hit, []
        return tuple(len(hit) for hit in taken)


@dataclass(frozen=True)
class Step:
    """What one call (a prefill or a decoding step) computed and read."""

    flops: int
    weights: int  # bytes read from the parameters
    cache: int  # bytes read from the tensors that hold the cache after the call
    old_cache: int  # bytes read from the cache tensors of before the call
    experts_hit: tuple[int, ...]  # distinct experts per MoE layer


def run_step(model: torch.nn.Module, tokens: torch.Tensor, cache: DynamicCache, experts: ExpertLog | None = None,
             **kwargs: object) -> Step:
    """One forward of ``tokens`` (b × new tokens) with ``cache``, counted and read."""
    parameters = {storage(p) for p in model.parameters()}
    before = cache_storages(cache)
    reads = ReadBytes()
    with torch.no_grad(), FlopCounterMode(display=False) as counter, reads:
        model(tokens, cache=cache, use_cache=True, **kwargs)
    hit = experts.take() if experts else ()
    return Step(counter.get_total_flops(), reads.total(parameters), reads.total(cache_storages(cache)), reads.total(before), hit)
