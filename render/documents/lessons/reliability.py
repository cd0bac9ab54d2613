"""Lesson: failures and checkpoints. How often should a 2048-GPU run checkpoint?"""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Failures and checkpoints

> *"Each card fails once a month. On 2048 cards, one fails every 20 minutes."* (Li Bojie, 001)

A run that checkpoints every τ pays δ per checkpoint, and per failure a restart R plus the work
since the last checkpoint. SymPy finds the τ that minimises the waste: Young's √(2δM/n).
About 15 minutes.
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
]
