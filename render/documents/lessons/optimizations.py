"""Lesson: the optimizations of the seeds' last chapters, each with its arithmetic."""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Optimizations: ZeRO-R, scatter/gather, 1-bit Adam, paged KV cache

> *"1-bit Adam cuts communication by up to 5×."* (004) Why 5 and not 32?

About 15 minutes.

Each formula below is printed with its full derivation and the engine's verdict on every step, and
each evaluation prints in human units; the seeds' figures are quoted beside the formulas' values
wherever a seed prints one, so that a rounding or a slip shows at a glance.
"""),
    code("""
derive("optimizations.onebit_adam.reduction")
put("optimizations.onebit_adam.reduction", f_w="0.174", k_cmp=32)"""),
    markdown("""
A warm-up of about 17 % of the steps at full size caps the gain near 5×. ZeRO-R's partitioned
activations add a twelfth to the tensor-parallel traffic of a checkpointed block:
"""),
    code("""
derive("optimizations.zero_r.partitioned_activations")
derive("optimizations.scatter_gather")
put("optimizations.kv.contiguous_waste", s=1024, s_max=4096)
put("optimizations.kv.paged_waste", k_blk=16, s=1024)
derive("optimizations.pipeline.naive_in_flight")"""),
    markdown("""
## Where each optimization's number comes from

1-bit Adam compresses the momentum to one bit per value with error feedback, 32 times smaller
than fp32, but only after a warm-up in which Adam's variance stabilises, and the warm-up sends
everything at full size. The overall reduction is 1/(f + (1 − f)/32): with 15 % of the steps in
warm-up, 5.7 times; with 17.4 %, exactly the "up to 5×" the CAS slides quote. The warm-up, not
the compression, sets the gain: even an infinitely good compressor cannot beat 1/f.

ZeRO-R's partitioned activation checkpointing stores each checkpointed block input split over
the t tensor-parallel ranks instead of replicated, and all-gathers it once for the recompute.
Against the block's own tensor-parallel traffic with checkpointing, six all-reduces of b·s·h
values that each move about twice their message, 12·b·s·h, the extra all-gather is one twelfth:
ZeRO's "less than 10 %". Megatron's scatter/gather applies the same idea to the pipeline
boundary: the t ranks of a stage hold the same b·s·h tensor, so each sends one t-th of it over
the network and the next stage rebuilds it over NVLink.

For serving, a KV cache reserved contiguously for the longest sequence a request may reach
wastes 1 − s/s_max of what it reserves: the 60 to 80 % the slides quote correspond to sequences
that use a fifth to two fifths of their reservation. Paging the cache in blocks of k tokens
wastes at most k − 1 tokens per sequence, under 3 % for 16-token blocks and 512-token
sequences. Static batching keeps a slot busy s of s_max steps; continuous batching refills the
slot as soon as its sequence ends, which is where most of its throughput gain comes from.
Finally, two rules of Li Bojie's article: a naive pipeline, one layer per GPU, holds 2N − 1
micro-batches of activations at its first stage (159 for 80 stages, which the article rounds to
160), and a pipeline only stays full when the global batch is at least b·p·d sequences.
"""),

    markdown("""
## Summary, and what to try next

Every optimization in the slides comes with a number, and every number comes from a small
formula with an input the slides leave implicit: the warm-up share for 1-bit Adam, the block
size and the sequence lengths for paged KV caches, the ratio of mean to longest sequence for
continuous batching, the tensor-parallel degree for scatter/gather. Making the input explicit
turns a marketing figure into a prediction for your own run: a 1-bit Adam run with a 25 %
warm-up saves 3.6×, not 5×; a paged cache with 256-token blocks wastes up to half of a
512-token sequence. Try them, and try the export penalty of the A800 and H800 (002's 5 % and
10–30 % longer training, stated as cited inputs): the cut NVLink slows only what crosses it.
"""),
    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("optimizations.onebit_warmup")"""),
    code("""
answer = None  # times less traffic
check("optimizations.onebit_warmup", answer)"""),
]
