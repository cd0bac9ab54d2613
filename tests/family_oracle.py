"""The oracles for any family, as transformers 5.24 builds and runs it (shared by the family tests).

``meta_count``: sum(p.numel()) of the model built on the meta device. ``run``: a tiny copy on the CPU in float32,
eager attention and eager experts, one forward under FlopCounterMode (use_cache=False), and one forward with a
cache, returning the bytes every layer's cache holds: keys and values (DynamicLayer, DynamicSlidingWindowLayer),
the convolution and recurrent states of LinearAttentionLayer, nothing for DummyLayer, and where a family keeps
its state in the module itself (RecurrentGemma's recurrent block) those tensors.
"""

from __future__ import annotations

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

EAGER = {"attn_implementation": "eager", "experts_implementation": "eager"}


def hf_config(config: dict) -> transformers.PretrainedConfig:
    settings = {key: value for key, value in config.items() if key != "model_type"}
    return transformers.AutoConfig.for_model(config["model_type"], **settings)


def meta_model(config: dict, **extra) -> torch.nn.Module:
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(hf_config(config), **extra)


def meta_count(config: dict) -> int:
    return sum(p.numel() for p in meta_model(config).parameters())


def _tensors(layer) -> list[torch.Tensor]:
    found = [getattr(layer, name, None) for name in ("keys", "values", "indexer_keys")]  # DSA: the indexer's keys too
    for name in ("conv_states", "recurrent_states"):
        found += list((getattr(layer, name, None) or {}).values())
    return [t for t in found if isinstance(t, torch.Tensor)]


def _module_states(model: torch.nn.Module) -> list[list[torch.Tensor]]:
    """Per decoder layer, the state tensors a family keeps on its modules (RecurrentGemma's recurrent block)."""
    layers = model.model.layers if hasattr(model, "model") and hasattr(model.model, "layers") else []
    held = []
    for layer in layers:
        block = getattr(layer, "temporal_block", None)
        tensors = [getattr(block, "conv1d_state", None), getattr(getattr(block, "rg_lru", None), "recurrent_states", None)]
        held.append([t for t in tensors if isinstance(t, torch.Tensor)])
    return held


def tiny(config: dict, dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(hf_config(config), dtype=torch.float32, **EAGER)
    return model.to(dtype).eval()


def tokens(config: dict, batch: int, seq: int) -> torch.Tensor:
    return torch.randint(1, min(config["vocab_size"], 50), (batch, seq), generator=torch.Generator().manual_seed(batch * 100 + seq))


def forward_flops(model: torch.nn.Module, config: dict, batch: int, seq: int) -> int:
    with FlopCounterMode(display=False) as counter:
        model(tokens(config, batch, seq), use_cache=False)
    return counter.get_total_flops()


def _returned_cache(output):
    for name in ("cache", "past_key_values", "cache_params"):
        try:
            found = getattr(output, name, None)
        except AttributeError:  # an output class without the attribute a deprecated alias forwards to
            found = None
        if found is not None:
            return found
    return None


def cache_bytes(model: torch.nn.Module, config: dict, batch: int, seq: int) -> list[int]:
    """Bytes each layer's cache holds after one forward of ``seq`` tokens: the cache the model returns, or (a model
    that returns none, RecurrentGemma) one passed in, plus the states a family keeps on its modules."""
    with torch.no_grad():
        output = model(tokens(config, batch, seq), use_cache=True)
        cache = _returned_cache(output)
        if cache is None:
            cache = transformers.DynamicCache(config=model.config.get_text_config())
            model(tokens(config, batch, seq), use_cache=True, cache=cache)
    held = _module_states(model)
    sizes = []
    for index, layer in enumerate(cache.layers):
        tensors = _tensors(layer) + (held[index] if index < len(held) else [])
        sizes.append(sum(t.numel() * t.element_size() for t in tensors))
    return sizes


def decode_step_flops(model: torch.nn.Module, config: dict, batch: int, prompt: int, seed: int = 3) -> int:
    """FlopCounterMode around one decoding step after a prefill of ``prompt`` tokens, with the model's own cache."""
    tokens_in = torch.randint(1, config["vocab_size"], (batch, prompt), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        cache = _returned_cache(model(tokens_in, use_cache=True, logits_to_keep=1))
        with FlopCounterMode(display=False) as counter:
            model(tokens_in[:, :1], cache=cache, use_cache=True)
    return counter.get_total_flops()
