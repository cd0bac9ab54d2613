"""Tiny config.json dicts of the families added in issue 28, made in code (no downloads): each exercises its
family's options (biases, q/k norms, windows, experts, recurrent layers) at sizes a CPU runs in milliseconds.
Windows of 4 tokens, so that s = 7 passes them; Mamba-2 chunks of 4, so that s = 5 and 7 pad to whole chunks."""

_DENSE = dict(num_hidden_layers=4, hidden_size=32, num_attention_heads=4, num_key_value_heads=2, intermediate_size=40, vocab_size=60,
              pad_token_id=0)
_EXPERTS = dict(num_local_experts=4, num_experts_per_tok=2)

CASES = {
    "nemotron": [dict(_DENSE, hidden_act="relu2", partial_rotary_factor=0.5),
                 dict(_DENSE, head_dim=4, num_key_value_heads=1, attention_bias=True, mlp_bias=True, tie_word_embeddings=True)],
    # Qwen3.5: Qwen3-Next's blocks, full attention at layer_types' entries, a dense MLP or every layer's experts
    "qwen3_5_text": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
                          head_dim=8, intermediate_size=24, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=4,
                          linear_value_head_dim=4, linear_conv_kernel_dim=3,
                          layer_types=["linear_attention", "full_attention", "linear_attention", "full_attention"])],
    "qwen3_5_moe_text": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
                              head_dim=8, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                              shared_expert_intermediate_size=12, linear_num_key_heads=2, linear_num_value_heads=4,
                              linear_key_head_dim=4, linear_value_head_dim=4, linear_conv_kernel_dim=3, full_attention_interval=2)],
    # DeepSeek sparse attention: MLA with the lightning indexer in every layer (its own heads, one cached key per token)
    "deepseek_v32": [dict(vocab_size=50, hidden_size=32, intermediate_size=48, moe_intermediate_size=8, num_hidden_layers=3,
                          num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4, num_experts_per_tok=2,
                          n_group=1, topk_group=1, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=4, v_head_dim=8,
                          qk_nope_head_dim=8, first_k_dense_replace=1, index_topk=4, index_head_dim=8, index_n_heads=2)],
    "glm_moe_dsa": [dict(vocab_size=50, hidden_size=32, intermediate_size=48, moe_intermediate_size=8, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=4, num_experts_per_tok=2,
                         n_group=1, topk_group=1, kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=4, v_head_dim=12,
                         qk_nope_head_dim=8, index_topk=4, index_head_dim=8, index_n_heads=3,
                         mlp_layer_types=["dense", "sparse", "sparse"])],
    "starcoder2": [dict(_DENSE, sliding_window=4), dict(_DENSE, use_bias=False, tie_word_embeddings=False)],
    "cohere": [dict(_DENSE, use_qk_norm=True, attention_bias=True)],
    "cohere2": [dict(_DENSE, sliding_window=4, sliding_window_pattern=2)],
    "granite": [dict(_DENSE, attention_bias=True, mlp_bias=True)],
    "granitemoe": [dict(_DENSE, **_EXPERTS)],
    "granitemoeshared": [dict(_DENSE, **_EXPERTS, shared_intermediate_size=24)],
    "stablelm": [dict(_DENSE, use_qkv_bias=True, qk_layernorm=True, use_parallel_residual=True), dict(_DENSE)],
    "olmoe": [dict(_DENSE, num_experts=4, num_experts_per_tok=2)],
    "smollm3": [dict(_DENSE, use_sliding_window=True, sliding_window=4)],
    "glm": [dict(_DENSE, head_dim=8)],
    "glm4": [dict(_DENSE, head_dim=12)],
    "olmo3": [dict(_DENSE, sliding_window=4)],
    "exaone4": [dict(_DENSE, sliding_window=4, sliding_window_pattern=2)],
    "seed_oss": [dict(_DENSE, head_dim=8, attention_out_bias=True)],
    "minimax_m2": [dict(_DENSE, head_dim=8, **_EXPERTS)],
    "phi": [dict(_DENSE)],
    "gpt_neo": [dict(num_layers=2, hidden_size=32, num_heads=4, vocab_size=60, max_position_embeddings=64,
                     attention_types=[[["global", "local"], 1]], window_size=4)],
    "mpt": [dict(n_layers=2, d_model=32, n_heads=4, vocab_size=60)],
    # DBRX in transformers 5.24 reads attn_config.rope_theta and clamps by clip_qkv: its published config gives both
    "dbrx": [dict(n_layers=2, d_model=32, n_heads=4, vocab_size=60, attn_config=dict(kv_n_heads=2, rope_theta=10000, clip_qkv=8),
                  ffn_config=dict(ffn_hidden_size=24, moe_num_experts=4, moe_top_k=2))],
    # --- state-space and hybrid ---
    "mamba": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=2, state_size=4, expand=2, conv_kernel=3, time_step_rank=5)],
    "falcon_mamba": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=2, state_size=4, expand=2, conv_kernel=3, use_bias=True)],
    "mamba2": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=2, state_size=4, expand=2, conv_kernel=3, num_heads=4, head_dim=8,
                    n_groups=2, chunk_size=4)],
    "jamba": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1, intermediate_size=24,
                   mamba_d_state=4, mamba_d_conv=3, mamba_expand=2, mamba_dt_rank=5, attn_layer_period=2, attn_layer_offset=1,
                   expert_layer_period=2, expert_layer_offset=1, num_experts=4, num_experts_per_tok=2, use_mamba_kernels=False)],
    "nemotron_h": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=5, hybrid_override_pattern="M*-EM", num_attention_heads=2,
                        num_key_value_heads=1, head_dim=8, intermediate_size=24, mamba_num_heads=4, mamba_head_dim=8, ssm_state_size=4,
                        n_groups=2, conv_kernel=3, chunk_size=4, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                        moe_shared_expert_intermediate_size=8),
                   # Nemotron-3-Super's shape shrunk: routed experts at a latent width (moe_latent_size) between a down and an up
                   # projection, the layers listed in layers_block_type without num_hidden_layers (Nemotron-3-Ultra's form)
                   dict(vocab_size=50, hidden_size=16, num_attention_heads=2, num_key_value_heads=1, head_dim=8, intermediate_size=24,
                        mamba_num_heads=4, mamba_head_dim=8, ssm_state_size=4, n_groups=2, conv_kernel=3, chunk_size=4,
                        n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=8, moe_shared_expert_intermediate_size=8,
                        moe_latent_size=6, layers_block_type=["linear_attention", "moe", "full_attention", "mlp", "moe"])],
    "recurrent_gemma": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1, lru_width=24,
                             attention_window_size=4, conv1d_width=3, intermediate_size=40, head_dim=8,
                             block_types=["recurrent", "recurrent", "attention"])],
    "qwen3_next": [dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                        linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=4, linear_value_head_dim=6,
                        linear_conv_kernel_dim=3, full_attention_interval=2, intermediate_size=24, moe_intermediate_size=8,
                        shared_expert_intermediate_size=8, num_experts=4, num_experts_per_tok=2, mlp_only_layers=[1])],
}
RECURRENT = {"mamba", "falcon_mamba", "mamba2", "jamba", "nemotron_h", "recurrent_gemma", "qwen3_next", "qwen3_5_text",
             "qwen3_5_moe_text"}


def config_json(family: str, index: int) -> dict:
    return {"model_type": family, **CASES[family][index]}


ALL = [(family, index) for family, configs in CASES.items() for index in range(len(configs))]
