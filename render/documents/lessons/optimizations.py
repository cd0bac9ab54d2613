"""Lesson: the optimizations of the seeds' last chapters, each with its arithmetic."""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Optimizations: ZeRO-R, scatter/gather, 1-bit Adam, paged KV cache

> *"1-bit Adam cuts communication by up to 5×."* (004) Why 5 and not 32?

About 15 minutes.
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
]
