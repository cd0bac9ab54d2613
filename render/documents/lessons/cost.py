"""Lesson: cost. What did DeepSeek-V3 cost to rent, and when does a GPU pay for itself?"""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Cost: rent, payback and tokens per dollar

> *"DeepSeek-V3 reports 2.788M H800 GPU-hours at $2 each: $5.576M. What does a dollar buy?"*

About 10 minutes.

Money prints in dollars with k, M and B; `.exact` on any value gives every cent the formula implies.
"""),
    code("""
derive("cost.training")
put("cost.training", H_gpu=2788000, c_rent=2)
derive("cost.wall_clock")
put("cost.wall_clock", H_gpu=180000, n=2048)"""),
    markdown("""
3.7 days for each trillion tokens on 2048 H800s, as the report says. A GPU bought at c and
rented at c_rent an hour pays back in c/(720·c_rent) months (001: an H100 "in about 7 months").
"""),
    code("""
derive("cost.payback_months")
put("cost.payback_months", c_gpu=40000, c_rent=2)
derive("cost.tokens_per_dollar")
put("cost.tokens_per_dollar", X=gpu("a100-80gb")["X"], U="0.4", P=7 * 10**9, c_rent=2)"""),
    markdown("""
## What the price of a GPU-hour hides

A rental price per GPU-hour turns GPU-hours into dollars, and nothing else does: the
DeepSeek-V3 report is explicit that its $5.576M counts only the final run at an assumed $2 per
H800-hour, not the research, the ablations or the failed runs before it, nor the cluster's
purchase. The same arithmetic in the other direction says what a dollar buys. At 40 % of an
A100's 312 TFLOP/s, one GPU-hour does 449 PFLOP of useful work; a 7B model needs 6 × 7·10⁹ FLOPs
per token, so one GPU-hour trains about 10.7 million tokens, and one dollar at $2 an hour about
5.3 million. A model ten times larger gets ten times fewer tokens per dollar: the cost of a run
grows as the product of its parameters and its tokens.

Buying instead of renting changes the question to when the GPU pays for itself. Li Bojie's
article says an H100 rented out at list price pays back in about seven months, which implies
about $7.9 per GPU-hour for a card bought near $40,000; at DeepSeek's $2 it takes 28 months.
The formula ignores power, hosting and the fact that a rented GPU is rarely busy around the
clock; each of those lengthens the payback. The RTX 4090 sits at the other end: $1,600 for
about a third of an H100's dense FP16 rate with FP16 accumulation and a third of its memory
bandwidth, which is why the article finds it up to twice as good per dollar for serving (where
memory bandwidth per dollar decides) and useless for training large models (where the missing
NVLink and the 24 GB decide). A negative or zero price is refused by every command that takes
one. Reading a cost in a paper, ask what it counts: the final run, the compute of the whole
project, or the cluster; and at whose price.
"""),

    markdown("""
## Summary, and what to try next

Three formulas carry this lesson: cost is GPU-hours times the price, the wall-clock time is
GPU-hours over the GPU count, and tokens per dollar is the sustained rate over six FLOPs per
parameter per token, over the price. Every input is one a procurement spreadsheet already has,
and each comes with the paper it was taken from, so a reader can replace it with their own.
Try DeepSeek's numbers at a cloud list price of $8 per GPU-hour instead of $2: the same run
costs $22M. Try the payback of an A100 bought at $15,000 and rented at $1.5 an hour: about
fourteen months, before power. Then try the opening question in reverse: with a budget of
one million dollars, how many tokens of a 70B model can you train at 40 % of an H100's peak?
The answer, about 1.7 trillion tokens at $2 an hour, is close to the 1.4 trillion Chinchilla's
rule of twenty tokens per parameter asks for a 70B model, which shows how quickly the size of
the model eats the budget: cost grows as Ψ·D, and the compute-optimal recipe grows both
together, so a model twice as large costs four times as much to train well.
"""),
    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("cost.deepseek_pretraining")"""),
    code("""
answer = None  # dollars
check("cost.deepseek_pretraining", answer)"""),
]
