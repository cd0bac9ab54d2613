"""Lesson: when a paper's convention is not the physical count. Both numbers, and the proof of the difference."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("conventions", model="gpt3-175b", gpu="a100-80gb", minutes=20)
ROW = "korthikanti2022.t5.175B.hfu"
F.published("k_hfu", ROW)
GPT3_ROW = {"B": 64, "s": 2048, "l": 96, "h": 12288, "V": 51200, "n": 64}  # Korthikanti et al. 2022, Table 5, the 175B row
F.number("physical_hfu", F.compute("utilization.hfu.selective", **GPT3_ROW, tau=F.published("k_tau", ROW, measured="tau")),
         percent=True)
F.published("eq4_days", "megatron2021.s5.gpt3")
F.published("eq4_n", "megatron2021.s5.gpt3", input="n")
F.published("eq4_rate", "megatron2021.s5.gpt3", measured="X_run")
_inputs = {"D": 300 * 10**9, "l": 96, "h": 12288, "V": 51200, "s": 2048, "n": 1024, "X_run": 140 * 10**12}  # §5.1's GPT-3 run
F.value("eq3_days", "utilization.training_time.megatron", display="days", **_inputs)
F.number("eq4_low", 1 - F.compute("conventions.megatron.eq4", P=175 * 10**9, **_inputs) / F["eq3_days"], percent=True, digits=2)
F.refuted("pinned", "conventions.chinchilla.pinned", "6ND = 5.76e23")
F.number("pinned_over", F["pinned_correct"] / F["pinned"] - 1, percent=True, digits=2)
# Chinchilla 70B's shape (Hoffmann et al. 2022, Table 4: 80 layers, d_model 8192, 64 heads; 2048 tokens, V = 32000)
CHINCHILLA = {"l": 80, "h": 8192, "a": 64, "s": 2048, "V": 32000, "b": 1}
F.number("chinchilla_extra", F.compute("conventions.chinchilla.forward", **CHINCHILLA) / F.compute("flops.forward", **CHINCHILLA) - 1,
         percent=True, digits=1)

CELLS = [
    markdown(F.text("""
# Conventions: the paper's formula as printed, beside the physical count

> *"Korthikanti et al. report {{k_hfu}} hardware FLOPs utilization for {{model}} on {{gpu}} GPUs.
> Counting the FLOPs the GPU runs, we get {{physical_hfu}}. Who is wrong?"*

Neither: they count differently. The catalogue states each paper's formula exactly as printed
(`conventions.*`) and proves, step by step, how it differs from the physical count: the exact
difference and the limit in which it vanishes. About {{minutes}}.
""")),
    markdown(F.text("""
## 1. Korthikanti's Eq. 8: selective recompute counted three times

Eq. 8 replaces s/6h by s/3h: 72Bslh²·s/6h = 12Bs²hl for a recompute that redoes QKᵀ and
scores·V forward, 4Bs²hl. Their {{model}} row, one iteration of {{k_tau}}:
""")),
    code("""
derive("conventions.korthikanti.hfu")
gpt3 = dict(B=64, s=2048, l=96, h=12288, V=51200, n=64, X=gpu("a100-80gb")["X"], tau="13.75")
put("conventions.korthikanti.hfu", **gpt3)
put("utilization.hfu.selective", **gpt3)"""),
    markdown(F.text("""
## 2. Megatron's Eq. 4 against its exact Eq. 3

8TP/(nX) drops s/6h + V/16lh and keeps the parameter count's 13/12h + (V+s)/12lh: for GPT-3 on
{{eq4_n}} A100s at {{eq4_rate}} it prints {{eq4_days}} where Eq. 3 gives {{eq3_days}}.
""")),
    code("""
derive("conventions.megatron.eq4")
put("conventions.megatron.eq4", D=300 * 10**9, P=175 * 10**9, n=1024, X_run=140 * 10**12)
put("utilization.training_time.megatron", D=300 * 10**9, l=96, h=12288, V=51200, s=2048, n=1024, X_run=140 * 10**12)"""),
    markdown(F.text("""
## 3. Kaplan's causal count, and Chinchilla's embedding and softmax
""")),
    code("""
derive("conventions.kaplan.forward_per_token")
derive("conventions.chinchilla.forward")
derive("conventions.chinchilla.pinned")"""),
    markdown(F.text("""
How far apart the counts of one {{model}} iteration land, each as a share of the exact forward and
backward count:
""")),
    code("""picture("flops_conventions", model="gpt3-175b", B=1536, s=2048)"""),
    markdown(F.text("""
## 4. Why keep both numbers

It is tempting to call a convention an error and move on. It is more useful to state it, for
three reasons. First, a published figure can only be reproduced with the formula its authors
used: Korthikanti's {{k_hfu}} comes out of Eq. 8 to the digit, and out of the physical count it
does not, so a calculator that knew only the physical count would report a disagreement that
is not one. Second, conventions travel: Eq. 8's hardware FLOPs are quoted in later papers and
in the README of Megatron-LM itself, and a reader comparing them with another library's HFU
needs to know that the recompute is counted three times over (12Bs²hl instead of 4Bs²hl),
which makes the reported HFU half a point to a point and a half higher than the physical one
for these models. Third, each proof gives the exact size of the difference and the limit in which it
vanishes, which tells you when the convention is harmless: Kaplan's causal count 2·l·s·h
differs from the exact causal triangle 2·l·h·(s + 1) by one part in s, and from the full
square by a factor of two that matters only when 12h is not much larger than s.

The Megatron case is a different kind of convention: not a different count, but a shortcut.
Eq. 4, 8TP/(nX), is what you can do in your head; Eq. 3 is what the paper's own Table 2
uses. The shortcut drops the attention and logits terms (s/6h + V/16lh) but keeps the
parameter count's small terms, and the two errors partly cancel: for GPT-3 it is {{eq4_low}} low.
The validate command shows both numbers beside the printed one for every such row, and names
the derivation that explains it; an unexplained difference fails the test suite.

The Chinchilla case is different again: the 67B row of Table 3 is not computed from its own
N and D at all. Its FLOPs are pinned to Gopher's budget, and N and D are the rounded optimum
for that budget, so 6ND at the printed 67B and 1.5T ({{pinned_correct}}) overshoots the printed {{pinned}} by
{{pinned_over}}.
The refutation step shows the two numbers and their ratio. Chinchilla's Appendix F, finally,
counts the embedding lookup as a matmul and three FLOPs per softmax entry: two refinements of
the GEMM count, both proved to vanish for wide and deep models, together {{chinchilla_extra}} for
Chinchilla 70B. Read every FLOP count in a paper with the question: which of these terms did they keep?
""")),

    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (6TP for 8TP, hours for days). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("conventions.megatron_eq4")"""),
    code("""
answer = None  # days
check("conventions.megatron_eq4", answer)"""),
]
