"""Lesson: uneven pipeline stages. Why does BLOOM put 5 blocks on its first and last stage?"""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Uneven pipeline stages: BLOOM-176B's 5, 6, …, 6, 5

> *"70 blocks on 12 stages do not divide. BLOOM gave the first and last stage 5 blocks and the
> embedding, and the ten others 6."* (004; BigScience 2022)

The slowest stage paces 1F1B; the first keeps p micro-batches of its layers. About 15 minutes.
Try it whole: `llm-formulas estimate --model bloom-176b --gpu a100-80gb --seq 2048 --layout bloom-176b`.
"""),
    code("""
derive("pipeline.logits_layers")
logits = put("pipeline.logits_layers", V=250880, h=14336, s=2048)"""),
    markdown("""
The last stage's 5 blocks plus the head are 6.42 layer-forwards: the slowest stage.
"""),
    code("""
derive("pipeline.step_factor")
derive("pipeline.bubble.uneven")
w_max = 5 + logits.value
w_tot = 70 + logits.value
put("pipeline.step_factor", p=12, w_max=w_max, w_tot=w_tot)
put("pipeline.bubble.uneven", p=12, m=128, w_max=w_max, w_tot=w_tot)
put("cluster.bubble", p=12, m=128)"""),
    code("""
derive("pipeline.activations.whole_model")"""),
]
