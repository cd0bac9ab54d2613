"""Lesson: the optimizations of the seeds' last chapters, each with its arithmetic."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("optimizations", model="bloom-176b", gpu="a100-80gb", minutes=15, k_cmp=32, f_w="0.174", k_blk=16)
F.number("slides_claim", 5)  # Li Wei (004): "up to 5×" less communication with 1-bit Adam
F.number("f_w_percent", F["f_w"], percent=True, digits=3)
F.value("reduction", "optimizations.onebit_adam.reduction")
F.name("f_w_code", "0.174")
F.number("warmup_15", "0.15", percent=True)
F.value("reduction_15", "optimizations.onebit_adam.reduction", f_w="0.15", digits=2)
F.number("zero_r_claim", "1/10", percent=True)  # Rajbhandari et al. 2020, ZeRO-R: "less than 10 %"
F.number("slides_waste_low", "0.6", percent=True)  # 004: contiguous KV caches waste 60 to 80 %
F.number("slides_waste_high", "0.8", percent=True)
F.number("short_s", 512)
F.value("paged_512", "optimizations.kv.paged_waste", s=512, percent=True, digits=2)
F.refuted("in_flight", "optimizations.pipeline.naive_in_flight", "S23: 160")
F.source_input("naive_p", "S23", "p")
F.number("warmup_25", "0.25", percent=True)
F.value("reduction_25", "optimizations.onebit_adam.reduction", f_w="0.25", digits=2)
F.number("big_block", 256)
F.value("paged_big", "optimizations.kv.paged_waste", k_blk=256, s=512, percent=True, digits=2)
F.number("a800_penalty", "0.05", percent=True)  # 002: an A800 trains about 5 % longer
F.number("h800_low", "0.1", percent=True)  # 002: an H800, 10 to 30 % longer
F.number("h800_high", "0.3", percent=True)

CELLS = [
    markdown(F.text("""
# Optimizations: ZeRO-R, scatter/gather, 1-bit Adam, paged KV cache

> *"1-bit Adam cuts communication by up to {{slides_claim}} times."* (004) Why {{slides_claim}} and
> not {{k_cmp}}, when the model is {{model}} on {{gpu}} GPUs?

About {{minutes}}.

Each formula below is printed with its full derivation and the engine's verdict on every step, and
each evaluation prints in human units; the seeds' figures are quoted beside the formulas' values
wherever a seed prints one, so that a rounding or a slip shows at a glance.
""")),
    code("""
derive("optimizations.onebit_adam.reduction")
put("optimizations.onebit_adam.reduction", f_w="0.174", k_cmp=32)"""),
    markdown(F.text("""
A warm-up of {{f_w_percent}} of the steps at full size caps the gain at {{reduction}} times. ZeRO-R's partitioned
activations add a twelfth to the tensor-parallel traffic of a checkpointed block:
""")),
    code("""
derive("optimizations.zero_r.partitioned_activations")
derive("optimizations.scatter_gather")
put("optimizations.kv.contiguous_waste", s=1024, s_max=4096)
put("optimizations.kv.paged_waste", k_blk=16, s=1024)
derive("optimizations.pipeline.naive_in_flight")"""),
    markdown(F.text("""
## Where each optimization's number comes from

1-bit Adam compresses the momentum to one bit per value with error feedback, {{k_cmp}} times smaller
than fp32, but only after a warm-up in which Adam's variance stabilises, and the warm-up sends
everything at full size. The overall reduction is 1/(f + (1 − f)/{{k_cmp}}): with {{warmup_15}} of
the steps in warm-up, {{reduction_15}} times; with {{f_w_percent}}, exactly the "up to
{{slides_claim}} times" the CAS slides quote. The picture draws the reduction against the warm-up: The warm-up, not
the compression, sets the gain: even an infinitely good compressor cannot beat 1/f.

ZeRO-R's partitioned activation checkpointing stores each checkpointed block input split over
the t tensor-parallel ranks instead of replicated, and all-gathers it once for the recompute.
Against the block's own tensor-parallel traffic with checkpointing, six all-reduces of b·s·h
values that each move about twice their message, 12·b·s·h, the extra all-gather is one twelfth:
ZeRO's "less than {{zero_r_claim}}". Megatron's scatter/gather applies the same idea to the pipeline
boundary: the t ranks of a stage hold the same b·s·h tensor, so each sends one t-th of it over
the network and the next stage rebuilds it over NVLink.

For serving, a KV cache reserved contiguously for the longest sequence a request may reach
wastes 1 − s/s_max of what it reserves: the {{slides_waste_low}} to {{slides_waste_high}} the slides
quote correspond to sequences
that use a fifth to two fifths of their reservation. Paging the cache in blocks of k tokens
wastes at most k − 1 tokens per sequence, {{paged_512}} for blocks of k = {{k_blk}} tokens and
sequences of {{short_s}}. Static batching keeps a slot busy s of s_max steps; continuous batching refills the
slot as soon as its sequence ends, which is where most of its throughput gain comes from.
Finally, two rules of Li Bojie's article: a naive pipeline, one layer per GPU, holds 2N − 1
micro-batches of activations at its first stage ({{in_flight_correct}} for {{naive_p}} stages, which
the article rounds to {{in_flight}}), and a pipeline only stays full when the global batch is at least b·p·d sequences.
""")),

    code(F.code("""picture("onebit_vs_warmup", k_cmp={{k_cmp}}, marks=("0.15", "{{f_w_code}}"))""")),
    markdown(F.text("""
## Summary, and what to try next

Every optimization in the slides comes with a number, and every number comes from a small
formula with an input the slides leave implicit: the warm-up share for 1-bit Adam, the block
size and the sequence lengths for paged KV caches, the ratio of mean to longest sequence for
continuous batching, the tensor-parallel degree for scatter/gather. Making the input explicit
turns a marketing figure into a prediction for your own run: a 1-bit Adam run with a
{{warmup_25}} warm-up saves {{reduction_25}} times, not {{slides_claim}}; a paged cache with blocks of
{{big_block}} tokens wastes up to {{paged_big}} of a sequence of {{short_s}}. Try them, and try the
export penalty of the A800 and H800 (002's {{a800_penalty}} and {{h800_low}} to {{h800_high}} longer
training, stated as cited inputs): the cut NVLink slows only what crosses it.
""")),
    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (the warm-up ignored). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("optimizations.onebit_warmup")"""),
    code("""
answer = None  # times less traffic
check("optimizations.onebit_warmup", answer)"""),
]
