"""Tiny config.json dicts for every decoder family, made in code (no downloads).

Several per family, covering the switches each family has: tied and untied heads,
g ≠ a (GQA, MQA), d_head ≠ h/a, biases on and off, one or two norms, OPT's
projected embedding and post-norm, Falcon's architectures. Keys a config leaves out
take transformers' defaults, so the readers' defaults are tested too.
Shared by tests/test_architecture_params.py and tests/test_architecture_flops.py.
"""

import torch
import transformers

CONFIGS = {
    "gpt2": [
        dict(n_layer=2, n_embd=32, n_head=4, vocab_size=101, n_positions=64),
        dict(n_layer=3, n_embd=48, n_head=6, vocab_size=97, n_positions=40, n_inner=80, tie_word_embeddings=False),
    ],
    "gptj": [
        dict(n_layer=2, n_embd=32, n_head=4, vocab_size=101, n_positions=64, rotary_dim=4),
        dict(n_layer=3, n_embd=48, n_head=4, vocab_size=97, n_positions=64, rotary_dim=6, n_inner=100, tie_word_embeddings=True),
    ],
    "gpt_neox": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=72, vocab_size=101),
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=6, intermediate_size=64, vocab_size=97,
             tie_word_embeddings=True, use_parallel_residual=False, attention_bias=False),
    ],
    "opt": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, ffn_dim=80, vocab_size=101, max_position_embeddings=64),
        # OPT-350m style: embedding width 24 projected to h = 48, post-norm (no final LayerNorm)
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=6, ffn_dim=64, vocab_size=97,
             max_position_embeddings=40, word_embed_proj_dim=24, do_layer_norm_before=False),
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, ffn_dim=48, vocab_size=90,
             max_position_embeddings=30, enable_bias=False, layer_norm_elementwise_affine=False, tie_word_embeddings=False),
    ],
    "bloom": [
        dict(n_layer=2, hidden_size=32, n_head=4, vocab_size=101),
        dict(n_layer=3, hidden_size=48, n_head=6, vocab_size=97, tie_word_embeddings=False),
    ],
    "falcon": [
        # Falcon-7B style: multi-query, parallel attention off one LayerNorm, no biases
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, vocab_size=101),
        # Falcon-40B style: new architecture, GQA g = 2, two LayerNorms (ln_attn, ln_mlp)
        dict(num_hidden_layers=2, hidden_size=48, num_attention_heads=6, num_kv_heads=2, vocab_size=97,
             new_decoder_architecture=True, tie_word_embeddings=False, ffn_hidden_size=100),
        # Falcon-RW style: ALiBi, MHA, sequential, biases
        dict(num_hidden_layers=3, hidden_size=32, num_attention_heads=4, vocab_size=90, alibi=True,
             multi_query=False, parallel_attn=False, bias=True),
        # new architecture with a single LayerNorm (Falcon-180B style)
        dict(num_hidden_layers=1, hidden_size=64, num_attention_heads=8, num_kv_heads=4, vocab_size=60,
             new_decoder_architecture=True, num_ln_in_parallel_attn=1, bias=True),
    ],
    "llama": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=72, vocab_size=101),
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
             intermediate_size=64, vocab_size=97, tie_word_embeddings=True),
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=12,
             intermediate_size=40, vocab_size=60, attention_bias=True, mlp_bias=True),
    ],
    "mistral": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=72, vocab_size=101),
        dict(num_hidden_layers=1, hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
             intermediate_size=40, vocab_size=60, tie_word_embeddings=True),
    ],
    "mixtral": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=40, vocab_size=101, num_local_experts=4, num_experts_per_tok=2),
        dict(num_hidden_layers=1, hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
             intermediate_size=56, vocab_size=60, num_local_experts=8, num_experts_per_tok=3, tie_word_embeddings=True),
    ],
    "qwen2": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=72, vocab_size=101),
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=6, num_key_value_heads=6,
             intermediate_size=64, vocab_size=97, tie_word_embeddings=True),
        dict(num_hidden_layers=1, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, head_dim=12,
             intermediate_size=40, vocab_size=60),
    ],
    "gemma": [
        # Gemma-2B style: MQA, tied (the default), d_head given
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=1, head_dim=8,
             intermediate_size=72, vocab_size=101),
        # Gemma-7B style: a·d_head = 64 ≠ h = 48
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
             intermediate_size=64, vocab_size=97, tie_word_embeddings=False, attention_bias=True),
    ],
    "phi3": [
        dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, intermediate_size=72, vocab_size=101,
             pad_token_id=0, eos_token_id=1),
        dict(num_hidden_layers=3, hidden_size=48, num_attention_heads=6, num_key_value_heads=2, intermediate_size=64,
             vocab_size=97, tie_word_embeddings=True, pad_token_id=0, eos_token_id=1),
    ],
    # --- today's families (issue 13); windows of 4 so that s = 5, 7 pass them ---
    "deepseek_v3": [
        # V3 style: query latent, first layer dense, one shared expert
        dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=4, intermediate_size=96,
             moe_intermediate_size=32, vocab_size=101, n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=1,
             q_lora_rank=24, kv_lora_rank=16, qk_rope_head_dim=8, qk_nope_head_dim=12, v_head_dim=10, n_group=2, topk_group=1),
    ],
    "deepseek_v2": [
        # V2-Lite style: no query latent, two shared experts
        dict(num_hidden_layers=2, hidden_size=48, num_attention_heads=4, intermediate_size=80, moe_intermediate_size=24,
             vocab_size=97, n_routed_experts=6, num_experts_per_tok=2, n_shared_experts=2, first_k_dense_replace=1,
             q_lora_rank=None, kv_lora_rank=12, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=12),
    ],
    "qwen3": [
        dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=24,
             intermediate_size=96, vocab_size=101, tie_word_embeddings=True),
    ],
    "qwen3_moe": [
        dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=24,
             intermediate_size=96, moe_intermediate_size=32, num_experts=8, num_experts_per_tok=2, vocab_size=101,
             decoder_sparse_step=2, mlp_only_layers=[]),
    ],
    "qwen2_moe": [
        dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96,
             moe_intermediate_size=32, shared_expert_intermediate_size=48, num_experts=6, num_experts_per_tok=2,
             vocab_size=101, mlp_only_layers=[1]),
    ],
    "gemma2": [
        dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
             intermediate_size=96, vocab_size=101, sliding_window=4),
    ],
    "gemma3_text": [
        dict(num_hidden_layers=4, hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=24,
             intermediate_size=96, vocab_size=101, sliding_window=4, sliding_window_pattern=3),
    ],
    "gpt_oss": [
        dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
             intermediate_size=48, num_local_experts=4, num_experts_per_tok=2, vocab_size=101, sliding_window=4),
    ],
    "llama4_text": [
        # Maverick style: MoE every second layer; chunks of 4 where RoPE is used
        dict(num_hidden_layers=4, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
             intermediate_size=32, intermediate_size_mlp=80, num_local_experts=4, num_experts_per_tok=1, vocab_size=101,
             interleave_moe_layer_step=2, attention_chunk_size=4),
    ],
    "olmo2": [
        dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96,
             vocab_size=101, eos_token_id=1, pad_token_id=0),
    ],
    "glm4_moe": [
        dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=24,
             intermediate_size=96, moe_intermediate_size=32, n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1,
             first_k_dense_replace=1, use_qk_norm=True, attention_bias=True, vocab_size=101),
    ],
    "phimoe": [
        dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
             num_local_experts=4, num_experts_per_tok=2, vocab_size=101, lm_head_bias=True, attention_bias=True),
    ],
}
CONFIGS["mistral"].append(  # Mistral-7B-v0.1's sliding window, here 4 tokens
    dict(num_hidden_layers=2, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=48,
         vocab_size=60, sliding_window=4))
MOE_FAMILIES = {"mixtral", "deepseek_v2", "deepseek_v3", "qwen3_moe", "qwen2_moe", "gpt_oss", "llama4_text", "glm4_moe", "phimoe"}

CASES = [(family, index) for family, configs in CONFIGS.items() for index in range(len(configs))]


def config_json(family: str, index: int) -> dict:
    """The config.json a user would bring: model_type and the keys given."""
    return {"model_type": family, **CONFIGS[family][index]}


def hf_config(family: str, index: int) -> transformers.PretrainedConfig:
    return transformers.AutoConfig.for_model(family, **CONFIGS[family][index])


def build(family: str, index: int, device: str) -> torch.nn.Module:
    """The real transformers model: on the meta device, or on the CPU in float32 with every GEMM countable."""
    config = hf_config(family, index)
    # The default experts kernel (aten._grouped_mm) has no FlopCounterMode formula: the eager one does.
    extra = {"experts_implementation": "eager"} if family in MOE_FAMILIES else {}
    if device == "meta":
        with torch.device("meta"):
            return transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager", **extra)
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager", dtype=torch.float32, **extra)
    return model.eval()
