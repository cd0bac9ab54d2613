"""Every structural key of a config.json is read or reported: none shapes the model unseen.

The reader records each key a family's declaration looks at (formulas/data/blocks.py :class:`Config`). A key the
config holds that it never looked at, whose name says it shapes the model (a size, count, width, rank, layer
list, latent size, expert setting, attention variant: :data:`STRUCTURAL`), is *unread*: a count that ignores it
may be wrong (Nemotron-3-Super's ``moe_latent_size`` put the routed experts at a latent width and the reader,
not knowing the key, counted 458.6 B parameters for transformers' 120.7 B). A name that matches but never
shapes a weight is listed here with its reason (:data:`NOT_STRUCTURAL`, every family) or in its family's
declaration (``Family.not_structural``, formulas/data/families.py); a null value is a feature switched off.
"""

from __future__ import annotations

import re

from llm_formulas.formulas.data.blocks import Config, ConfigError, Family

# a name that says it shapes the model: sizes, counts, widths, ranks, layer lists, latent sizes, experts, heads, windows
STRUCTURAL = re.compile(
    r"(_size$|^num_|^n_|_dim$|_dims$|_rank$|_layers?($|_)|^layers|layer_types|expert|latent|heads|window|width|intermediate"
    r"|hidden|^d_|groups?$|kernel|vocab|pattern|block_type|lora|chunk|^moe_|_moe_|sparse|interval|period|offset|nextn|stride)"
)
# a name that matches but says a runtime setting: activations, dropout, epsilons, ids, initialisation, scales
RUNTIME = re.compile(r"(_act$|activation|dropout|_eps$|epsilon|initializer|_ids?$|token|kernels$|_logits|aux_loss|coef|factor"
                     r"|scale|scaling|theta|dtype)")

NOT_STRUCTURAL = {  # reviewed: keys whose names match STRUCTURAL that change no weight in any family, and why
    "n_group": "routing groups (DeepSeek's group-limited top-k): which experts are chosen, not their weights",
    "topk_group": "routing groups kept per token: selection only",
    "ep_size": "expert parallelism of the training run: a layout, not a weight",
    "num_logits_to_keep": "how many positions generation computes logits for",
    "output_hidden_states": "what the forward returns (every PretrainedConfig.to_dict() writes it)",
    "chunk_size_feed_forward": "the feed-forward applied in sequence chunks to save memory: the same weights",
}


def unread_structural_keys(data: dict, reader: Config, family: Family) -> list[str]:
    """The keys of ``data`` that name a structural setting the family's reader never looked at, in config order."""
    looked = set(reader.read) | set(reader.defaulted)
    return [key for key in data
            if isinstance(key, str) and data[key] is not None and key not in looked and STRUCTURAL.search(key)
            and not RUNTIME.search(key) and key not in NOT_STRUCTURAL and key not in family.not_structural]


def check_unread(keys: list[str], model_type: str, allowed: bool) -> tuple[str, ...]:
    """Refuse a count that ignores structural keys (ConfigError naming them), or, where allowed, return them for a caveat."""
    if keys and not allowed:
        named = ", ".join(repr(key) for key in keys)
        raise ConfigError(f"{model_type} config: {named} not read by the {model_type} declaration and may change the count "
                          f"(--allow-unread-keys counts without {'it' if len(keys) == 1 else 'them'})")
    return tuple(keys)


def caveat(keys: tuple[str, ...]) -> str:
    """The line a count made with unread keys prints."""
    return f"caveat: counted without the config keys {', '.join(keys)}, which the reader does not model"
