"""Lesson: failures and checkpoints. How often should a 2048-GPU run checkpoint?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("reliability", model="llama2-70b", gpu="h100-sxm", minutes=15, delta_ckpt=60, R_restore=600,
            W_store=2 * 10**12)  # Llama Team 2024 §3.3.4: 2 TB/s of sustained checkpoint bandwidth
F.source_input("M_fail", "S21", "M_fail")
F.source_input("n", "S21", "n")
F.example("S21")
F.number("delta_s", F["delta_ckpt"], unit="second", display="s")
for name, symbol in (("n_code", "n"), ("M_fail_code", "M_fail"), ("delta_code", "delta_ckpt"), ("R_code", "R_restore")):
    F.literal(name, int(F[symbol]))
F.value("mtbf", "reliability.cluster_mtbf")
F.value("restart", "reliability.restart_share", percent=True, digits=2)
F.value("young", "reliability.young_daly")
F.number("checkpoint_loss", (2 * F["delta_ckpt"] * F["n"] / F["M_fail"]) ** 0.5, percent=True, digits=2)
F.value("goodput", "reliability.goodput", percent=True, digits=2)
F.value("ckpt_size", "reliability.checkpoint.size")
F.value("ckpt_time", "reliability.checkpoint.time")
BIG = {"n": 16384, "M_fail": 365 * 86400, "delta_ckpt": 30, "R_restore": 180}
F.number("big_n", BIG["n"])
F.value("big_mtbf", "reliability.cluster_mtbf", **BIG)
F.number("big_delta", BIG["delta_ckpt"], unit="second")
F.number("big_restart", BIG["R_restore"], unit="second")
F.value("big_goodput", "reliability.goodput", percent=True, digits=2, **BIG)
F.number("fast_restart", 60, unit="second")
F.value("restart_fast", "reliability.restart_share", percent=True, digits=2, R_restore=60)

CELLS = [
    markdown(F.text("""
# Failures and checkpoints

> *"Each card fails once in {{M_fail}}. On {{n}} cards there is {{S21}}: how often should we
> checkpoint {{model}} on {{gpu}} GPUs?"* (after Li Bojie, 001)

A run that checkpoints every τ pays δ per checkpoint, and per failure a restart R plus the work
since the last checkpoint. SymPy finds the τ that minimises the waste: Young's √(2δM/n).
About {{minutes}}.

Durations print in seconds, minutes, hours or days as their size calls for; `.exact` gives the
seconds, every digit, and the proofs are printed step by step with the engine's verdict.
""")),
    code("""
derive("reliability.cluster_mtbf")
put("reliability.cluster_mtbf", M_fail=30 * 86400, n=2048)
derive("reliability.restart_share")
put("reliability.restart_share", M_fail=30 * 86400, n=2048, R_restore=600)"""),
    markdown(F.text("""
{{restart}} lost to a restore of {{R_restore}}: 001's "half of the effective compute". Now the interval:
""")),
    code("""
derive("reliability.young_daly")
put("reliability.young_daly", delta_ckpt=60, M_fail=30 * 86400, n=2048)
put("reliability.goodput", delta_ckpt=60, M_fail=30 * 86400, n=2048, R_restore=600)
put("reliability.checkpoint.size", P=70 * 10**9)"""),
    markdown(F.text("""
## Why the square root

The waste has two parts that pull in opposite directions. Writing a checkpoint costs δ every τ
seconds, a share δ/τ that shrinks as checkpoints get rarer. A failure costs the restart R plus,
on average, half an interval of work since the last checkpoint, and failures come n/M times a
second, a share (R + τ/2)·n/M that grows as checkpoints get rarer. The sum is smallest where
its derivative vanishes, −δ/τ² + n/(2M) = 0, at τ = √(2δM/n): where the two costs of the
interval balance. The engine does this the way you would on paper, differentiating with SymPy,
solving for the positive root and checking that the second derivative is positive there.

The numbers for a cluster of {{n}} GPUs are sobering. With one failure per GPU in {{M_fail}} the
cluster fails every {{mtbf}}; with a checkpoint of δ = {{delta_s}} the best interval is {{young}},
and even then the run loses √(2δn/M), {{checkpoint_loss}}, to checkpoints and re-done work, plus
R·n/M, {{restart}}, to restarts of {{R_restore}}, which leaves a goodput of {{goodput}}. The picture
draws the two costs and their sum against the interval: That is Li Bojie's point: at this
scale automated restarts in seconds, not minutes, and checkpoints that cost less than a minute
decide whether the cluster trains at all. Meta's Llama 3 report describes exactly that
engineering: {{W_store}} of sustained storage bandwidth for checkpoints and restarts measured in
minutes over a 54-day run with hundreds of interruptions.

The checkpoint itself holds the 16-bit weights and Adam's fp32 master weights, momentum and
variance, 14 bytes per parameter: {{ckpt_size}} for {{model}}, {{ckpt_time}} at {{W_store}} if every
GPU writes its own shard in parallel. An MTBF of zero is refused: it would mean a cluster that
is never up.
""")),

    code(F.code("""picture("waste_vs_interval", n={{n_code}}, M_fail={{M_fail_code}}, delta_ckpt={{delta_code}}, R_restore={{R_code}})""")),
    markdown(F.text("""
## Summary, and what to try next

Four numbers decide how much of a large cluster's time trains the model: the GPUs' mean time
between failures M, their count n, the time δ to write a checkpoint, and the time R to come
back after a failure. The cluster's MTBF is M/n, so doubling the cluster halves it; the best
checkpoint interval grows only as √(δM/n), and the share lost at that interval, √(2δn/M) +
R·n/M, grows with the cluster. Halving δ cuts the first part by √2; halving R cuts the second
part by two, which is why fast restarts matter more than fast checkpoints once clusters are
large. Try the numbers of a run on {{big_n}} GPUs with one failure per GPU per year: a failure
every {{big_mtbf}}, and with a checkpoint of {{big_delta}} and a restart of {{big_restart}} a goodput
of {{big_goodput}}. Try 001's case with a restart of {{fast_restart}} instead of {{R_restore}}: the share
lost to restarts falls from {{restart}} to {{restart_fast}}. Every formula here is first order in 1/M: when failures come
faster than checkpoints can be written, Daly's higher-order estimate is the better guide.
""")),
    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (hours or seconds where minutes were asked). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("reliability.mtbf_2048")"""),
    code("""
answer = None  # minutes
check("reliability.mtbf_2048", answer)"""),
]
