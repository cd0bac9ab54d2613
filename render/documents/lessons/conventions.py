"""Lesson: when a paper's convention is not the physical count. Both numbers, and the proof of the difference."""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Conventions: the paper's formula as printed, beside the physical count

> *"Korthikanti et al. report 52.8 % hardware FLOPs utilization for GPT-3. Counting the FLOPs the
> GPU runs, we get 51.9 %. Who is wrong?"*

Neither: they count differently. The catalogue states each paper's formula exactly as printed
(`conventions.*`) and proves, step by step, how it differs from the physical count: the exact
difference and the limit in which it vanishes. About 20 minutes.
"""),
    markdown("""
## 1. Korthikanti's Eq. 8: selective recompute counted three times

Eq. 8 replaces s/6h by s/3h: 72Bslh²·s/6h = 12Bs²hl for a recompute that redoes QKᵀ and
scores·V forward, 4Bs²hl.
"""),
    code("""
derive("conventions.korthikanti.hfu")
gpt3 = dict(B=64, s=2048, l=96, h=12288, V=51200, n=64, X=gpu("a100-80gb")["X"], tau="13.75")
put("conventions.korthikanti.hfu", **gpt3)
put("utilization.hfu.selective", **gpt3)"""),
    markdown("""
## 2. Megatron's Eq. 4 against its exact Eq. 3

8TP/(nX) drops s/6h + V/16lh and keeps the parameter count's 13/12h + (V+s)/12lh: for GPT-3 on
1024 A100s at 140 TFLOP/s it prints 34 days where Eq. 3 gives 34.7.
"""),
    code("""
derive("conventions.megatron.eq4")
put("conventions.megatron.eq4", D=300 * 10**9, P=175 * 10**9, n=1024, X_run=140 * 10**12)
put("utilization.training_time.megatron", D=300 * 10**9, l=96, h=12288, V=51200, s=2048, n=1024, X_run=140 * 10**12)"""),
    markdown("""
## 3. Kaplan's causal count, and Chinchilla's embedding and softmax
"""),
    code("""
derive("conventions.kaplan.forward_per_token")
derive("conventions.chinchilla.forward")
derive("conventions.chinchilla.pinned")"""),
]
