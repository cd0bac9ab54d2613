"""Lesson: cost. What did DeepSeek-V3 cost to rent, when does a GPU pay for itself, and what does a dollar buy on an H100 or a 4090?"""

from llm_formulas.render.documents.notebooks import code, markdown

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
clock; each of those lengthens the payback. A negative or zero price is refused by every command that takes
one. Reading a cost in a paper, ask what it counts: the final run, the compute of the whole
project, or the cluster; and at whose price.

## An H100 against an RTX 4090, per dollar

The article's comparison of the two cards survives only as text (LambdaLabs' tables were
images): the H100 trains about twice as fast as a 4090 on one card, has about three times its
dense FP16 rate and 3.35 times its memory bandwidth, sells for about $30,000 against the 4090's
$1,600, and so trains "close to 10×" fewer tokens per dollar. Throughput per dollar is the
throughput over the price, so the ratio of two cards' values is the price ratio over the
throughput ratio, and the throughput itself cancels:
"""),
    code("""
derive("cost.value_ratio")
put("cost.value_ratio", c_gpu=30000, c_ref=1600, x_thr=2)
put("cost.compute_ratio", X=989 * 10**12, X_ref=330 * 10**12)
put("cost.bandwidth_ratio", W_mem=gpu("h100-sxm")["W_mem"], W_ref=gpu("rtx4090")["W_mem"])
put("cost.breakeven_rent", c_gpu=30000, N_pay=7)"""),
    markdown("""
9.4 at $30,000, 12.5 at the $40,000 of the article's Microsoft arithmetic. The bandwidth ratio
is 3.32, not 3.35: the article divided the H100's 3.35 TB/s by a 4090 taken at 1 TB/s (its
datasheet says 1008 GB/s), a slip the errata list. The seven-month payback cannot be reproduced,
because the article never prints the list price it read; what the formula can say is the
price it implies, about $5.95 per GPU-hour for a $30,000 card, and the rent stays an input you
set. The 4090's low price is why the article finds it up to twice as good per dollar for
serving, where memory bandwidth per dollar decides, and useless for training large models,
where the missing NVLink and the 24 GB decide.

## How many network cards a PCIe machine needs

The same essay trains LLaMA-2 70B over plain data parallelism on 80 pipeline stages of about
1B parameters, each GPU summing its 80 micro-batches' gradients before it sends them: a 48 s
step (80 × 0.6 s), and per GPU 4 GB of fp32 gradients out and the averages back in. The eight
GPUs of a machine share its NICs, so the exchange takes 2·g·4Ψ/(k·W_NIC):
"""),
    code("""
derive("comms.nic.count")
put("comms.nic.time", g_node=8, P=10**9, k_nic=8, W_nic=25 * 10**9)
put("comms.nic.count", g_node=8, P=10**9, tau=1, W_nic=25 * 10**9)"""),
    markdown("""
With the article's eight ConnectX-6 cards of 200 Gb/s (25 GB/s each) the exchange takes 0.32 s,
well inside its "less than 1 s"; that budget needs only 2.56 cards, so three. Eight is one card
per GPU, which carries 200 of the 256 GB/s the eight PCIe Gen4 x16 links can send; matching
them exactly would take 10.24 cards. The article's "basically 8" is the PCIe-matching count
rounded to one per GPU, not what the one-second budget asks for.
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
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("cost.deepseek_pretraining")"""),
    code("""
answer = None  # dollars
check("cost.deepseek_pretraining", answer)"""),
]
