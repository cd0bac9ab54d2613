"""The questions each topic of the reference answers, as a reader would ask them, each with the formula that answers it.

Written from the formulas' meanings (``llm-formulas show ID``); the site's index lists them under their topic and
links each to its formula's anchor. A topic of the catalogue with no entry here is listed by its formulas alone.
"""

from __future__ import annotations

TOPIC_QUESTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "params": (
        ("How many parameters does a decoder have?", "params.decoder.total"),
        ("Where does 12·l·h² come from?", "params.approx"),
        ("How many parameters does one attention block hold?", "params.decoder.attention"),
        ("How many parameters does one GPU of the first pipeline stage hold?", "params.stage.first"),
        ("How many parameters does LoRA train?", "params.lora.total"),
    ),
    "moe": (
        ("How many parameters does one token pass through in a mixture of experts?", "params.decoder.active"),
        ("How many parameters does one routed expert hold?", "params.decoder.expert"),
        ("How many FLOPs do a token's experts cost?", "flops.decoder.experts"),
        ("How many bytes does expert parallelism send per layer?", "comms.ep.per_layer"),
        ("How many experts does a decoding step touch?", "serving.decode.experts_touched"),
    ),
    "flops": (
        ("How many FLOPs does a training step take?", "flops.decoder.training"),
        ("Why is training about 6ΨD FLOPs?", "flops.training.approx"),
        ("How many FLOPs does one generated token cost?", "flops.inference.per_token"),
        ("What do the attention matmuls cost under a causal mask?", "flops.decoder.attention.scores.causal"),
        ("How many FLOPs does a matrix multiplication take?", "flops.gemm"),
        ("What does full activation recomputation add?", "flops.training.recompute"),
    ),
    "memory": (
        ("How much memory do the weights, gradients and Adam states take?", "memory.model_states"),
        ("How big is the KV cache per token?", "memory.kv_cache.per_token"),
        ("How much KV cache does a batch of long sequences hold?", "memory.kv_cache.decoder"),
        ("How many activation bytes does a layer keep for the backward pass?", "memory.activations.layer"),
        ("How much does ZeRO stage 3 save per GPU?", "memory.zero.stage3"),
        ("What is the largest micro-batch that fits on a GPU?", "memory.max_micro_batch"),
        ("How many bytes does a 4-bit quantized matrix take?", "memory.weights.nf4"),
    ),
    "comms": (
        ("How many bytes does an all-reduce send per GPU?", "comms.collective.allreduce"),
        ("How much does data parallelism send per iteration?", "comms.dp.per_iteration"),
        ("How much does tensor parallelism send per micro-batch?", "comms.tp.sent_per_microbatch"),
        ("What does pipeline parallelism send between stages?", "comms.pp.per_microbatch"),
        ("How much does ZeRO-3 communicate?", "comms.zero.stage3"),
        ("What link bandwidth keeps tensor parallelism from stalling?", "comms.tp.required_link"),
    ),
    "cluster": (
        ("How long does a training run take on n GPUs?", "cluster.training_time"),
        ("How many GPUs do I need to finish by a deadline?", "cluster.gpus_for_deadline"),
        ("How big is the pipeline bubble?", "cluster.bubble"),
        ("What model FLOPs utilization does a run imply?", "cluster.mfu"),
    ),
    "inference": (
        ("Is a decoding step memory-bound or compute-bound?", "inference.latency.step"),
        ("At what batch size does decoding become compute-bound?", "inference.balance_batch"),
        ("What is the arithmetic intensity of decoding?", "inference.arithmetic_intensity"),
        ("What does a KV cache save per decoding step?", "inference.kv_recompute.flops"),
    ),
    "serving": (
        ("How long until the first token (TTFT) with chunked prefill?", "serving.chunked.ttft"),
        ("What is the time per output token (TPOT)?", "serving.time.tpot"),
        ("How many sequences fit beside the weights (the KV wall)?", "serving.memory.max_batch"),
        ("How many cache bytes does a decoding step read?", "serving.decode.kv_read"),
        ("How many tokens per second does a GPU serve?", "serving.throughput.per_gpu"),
        ("How much does speculative decoding speed things up?", "serving.speculative.speedup"),
        ("What does one output token cost?", "serving.cost.per_token"),
    ),
    "perf": (
        ("How long does one training step take?", "perf.pipeline"),
        ("How long does one GEMM take on a GPU?", "perf.gemm.time"),
        ("How much ZeRO-3 communication is exposed?", "perf.zero.stage3.exposed"),
        ("How long does the optimizer step take?", "perf.optimizer"),
    ),
    "peers": (
        ("What does Megatron-LM's estimator count as parameters?", "peers.megatron.params"),
        ("What does DeepSpeed estimate for ZeRO-3 model states?", "peers.deepspeed.zero3"),
        ("How does Transformer Math 101 count compute?", "peers.transformer_math.flops"),
    ),
    "utilization": (
        ("What MFU does a token throughput imply?", "utilization.mfu.throughput"),
        ("What share of the peak does a measured rate reach?", "utilization.of_peak"),
        ("How many FLOPs does selective recompute add?", "utilization.selective_overhead"),
    ),
    "optimizations": (
        ("How much of a paged KV cache is wasted?", "optimizations.kv.paged_waste"),
        ("How much activation memory does selective recompute drop?", "optimizations.selective_recompute.saving"),
        ("How much less does 1-bit Adam communicate?", "optimizations.onebit_adam.reduction"),
    ),
    "cost": (
        ("What does a training run cost to rent?", "cost.training"),
        ("How many training tokens does a dollar buy?", "cost.tokens_per_dollar"),
    ),
    "reliability": (
        ("How often should I checkpoint?", "reliability.young_daly"),
        ("How often does a large cluster fail?", "reliability.cluster_mtbf"),
        ("How big is a full checkpoint?", "reliability.checkpoint.size"),
    ),
    "pipeline": (
        ("How much activation memory does the first pipeline stage hold?", "pipeline.activations.first_stage"),
        ("What does an uneven stage split cost?", "pipeline.bubble.uneven"),
    ),
    "conventions": (
        ("How does Kaplan count forward FLOPs per token?", "conventions.kaplan.forward_per_token"),
        ("How did Chinchilla count the FLOPs of a sequence?", "conventions.chinchilla.forward"),
    ),
    "energy": (
        ("How much energy does a training run use?", "energy.training"),
        ("How much CO₂ does a training run emit?", "energy.emissions"),
    ),
}
