"""Lesson: failures and checkpoints. How often should a 2048-GPU run checkpoint?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Failures and checkpoints

> *"Each card fails once a month. On 2048 cards one fails every 20 minutes: how often should we checkpoint?"*
> (after Li Bojie, 001)

A run that checkpoints every τ pays δ per checkpoint, and per failure a restart R plus the work
since the last checkpoint. SymPy finds the τ that minimises the waste: Young's √(2δM/n).
About 15 minutes.

Durations print in seconds, minutes, hours or days as their size calls for; `.exact` gives the
seconds, every digit, and the proofs are printed step by step with the engine's verdict.
"""),
    code("""
derive("reliability.cluster_mtbf")
put("reliability.cluster_mtbf", M_fail=30 * 86400, n=2048)
derive("reliability.restart_share")
put("reliability.restart_share", M_fail=30 * 86400, n=2048, R_restore=600)"""),
    markdown("""
47 % lost to a 10-minute restore: 001's "half of the effective compute". Now the interval:
"""),
    code("""
derive("reliability.young_daly")
put("reliability.young_daly", delta_ckpt=60, M_fail=30 * 86400, n=2048)
put("reliability.goodput", delta_ckpt=60, M_fail=30 * 86400, n=2048, R_restore=600)
put("reliability.checkpoint.size", P=70 * 10**9)"""),
    markdown("""
## Why the square root

The waste has two parts that pull in opposite directions. Writing a checkpoint costs δ every τ
seconds, a share δ/τ that shrinks as checkpoints get rarer. A failure costs the restart R plus,
on average, half an interval of work since the last checkpoint, and failures come n/M times a
second, a share (R + τ/2)·n/M that grows as checkpoints get rarer. The sum is smallest where
its derivative vanishes, −δ/τ² + n/(2M) = 0, at τ = √(2δM/n): where the two costs of the
interval balance. The engine does this the way you would on paper, differentiating with SymPy,
solving for the positive root and checking that the second derivative is positive there.

The numbers for a 2048-GPU cluster are sobering. With one failure per GPU per month the cluster
fails every 21 minutes; with a one-minute checkpoint the best interval is about 6.5 minutes,
and even then the run loses √(2δn/M) ≈ 31 % to checkpoints and re-done work, plus R·n/M ≈ 47 %
to ten-minute restarts, which leaves a goodput near 22 %. That is Li Bojie's point: at this
scale automated restarts in seconds, not minutes, and checkpoints that cost less than a minute
decide whether the cluster trains at all. Meta's Llama 3 report describes exactly that
engineering: 2 TB/s of sustained storage bandwidth for checkpoints and restarts measured in
minutes over a 54-day run with hundreds of interruptions.

The checkpoint itself holds the 16-bit weights and Adam's fp32 master weights, momentum and
variance, 14 bytes per parameter: 980 GB for a 70B model, half a second at 2 TB/s if every
GPU writes its own shard in parallel. An MTBF of zero is refused: it would mean a cluster that
is never up.
"""),

    markdown("""
## Summary, and what to try next

Four numbers decide how much of a large cluster's time trains the model: the GPUs' mean time
between failures M, their count n, the time δ to write a checkpoint, and the time R to come
back after a failure. The cluster's MTBF is M/n, so doubling the cluster halves it; the best
checkpoint interval grows only as √(δM/n), and the share lost at that interval, √(2δn/M) +
R·n/M, grows with the cluster. Halving δ cuts the first part by √2; halving R cuts the second
part by two, which is why fast restarts matter more than fast checkpoints once clusters are
large. Try the numbers of a 16,384-GPU run with one failure per GPU per year: a failure every
32 minutes, and with a 30-second checkpoint and a three-minute restart a goodput near 73 %.
Try 001's case with a restart of one minute instead of ten: the lost share falls from 47 % to
under 5 % for the restarts. Every formula here is first order in 1/M: when failures come
faster than checkpoints can be written, Daly's higher-order estimate is the better guide.
"""),
    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("reliability.mtbf_2048")"""),
    code("""
answer = None  # minutes
check("reliability.mtbf_2048", answer)"""),
]
