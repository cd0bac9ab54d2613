"""Lesson: cost. What did DeepSeek-V3 cost to rent, when does a GPU pay for itself, and what does a dollar buy on an H100 or a 4090?"""

from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("cost", model="llama2-7b", gpu="a100-80gb", minutes=10, compare_gpus=("h100-sxm", "rtx4090"), U="2/5")
F.number("U_percent", F["U"], percent=True)
TOTAL = "deepseekv3.t1.total.cost"
F.published("H_gpu", TOTAL, input="H_gpu")
F.published("c_rent", TOTAL, input="c_rent")
F.published("total_cost", TOTAL)
F.published("days_per_T", "deepseekv3.s1.days_per_T")
F.published("dsv3_n", "deepseekv3.s1.days_per_T", input="n")
F.number("li_c_gpu", 40000, unit="dollar")
F.value("payback", "cost.payback_months", c_gpu=F["li_c_gpu"])
F.number("flop_per_gpu_hour", F["U"] * F["X"] * 3600, unit="FLOP")
F.number("tokens_per_gpu_hour", F["flop_per_gpu_hour"] / (6 * F["P"]), unit="token")
A100_RENT = gpu("a100-80gb").rent  # the A100's own price per GPU-hour (formulas.data.gpus), not DeepSeek's H800 figure
F.number("a100_own_rent", A100_RENT, unit="dollar")
F.name("a100_rent_code", f'"{float(A100_RENT)}"')
F.number("tokens_per_dollar", F.compute("cost.tokens_per_dollar", c_rent=A100_RENT), unit="token", digits=2)
F.number("li_months", 7)
F.value("li_rent", "cost.breakeven_rent", c_gpu=F["li_c_gpu"], N_pay=F["li_months"])
for symbol in ("c_gpu", "c_ref", "x_thr"):
    F.source_input(f"v_{symbol}", "S24", symbol)
F.case("value_ratio", "S24", digits=2)
F.example("S24")
F.value("value_ratio_40k", "cost.value_ratio", c_gpu=F["li_c_gpu"], c_ref=F["v_c_ref"], x_thr=F["v_x_thr"], digits=3)
F.case("compute_ratio", "S25", digits=2)
F.refuted("bandwidth_ratio", "cost.bandwidth_ratio", "S26: 3.35×")
F.source_input("h100_bandwidth", "S26", "W_mem")
F.source_input("rtx_bandwidth", "S26", "W_ref")
F.number("essay_rtx_bandwidth", 10**12, unit="byte/second")
F.case("breakeven_30k", "S27")
F.number("rtx_memory", gpu("rtx4090").memory, unit="byte")
F.source_input("nic_W", "S28", "W_nic")
F.number("nic_gbit", F["nic_W"] * 8 / 10**9)
F.source_input("nic_k", "S28", "k_nic")
F.source_input("nic_P", "S28", "P")
F.number("stages", 80)
F.number("micro_step", "0.6", unit="second")
F.number("step_seconds", F["stages"] * F["micro_step"], unit="second")
F.number("fp32_gradients", 4 * F["nic_P"], unit="byte")
F.case("nic_time", "S28")
F.source_input("nic_budget", "S29", "tau")
F.refuted("nics", "comms.nic.count", "S29: 8 NICs for under 1 s")
F.number("nics_needed", -(-F["nics_correct"] // 1))
F.number("nics_bandwidth", F["nic_k"] * F["nic_W"], unit="byte/second")
F.number("pcie_bandwidth", 8 * gpu("rtx4090").link("pcie") / 2, unit="byte/second")
F.refuted("nics_pcie", "comms.nic.count", "S30: 8 NICs push PCIe Gen4 out")
F.number("list_rent", 8, unit="dollar")
F.value("cost_at_list", "cost.training", c_rent=F["list_rent"])
F.number("a100_price", 15000, unit="dollar")
F.number("a100_rent", "1.5", unit="dollar")
F.value("a100_payback", "cost.payback_months", c_gpu=F["a100_price"], c_rent=F["a100_rent"], digits=2)
F.number("budget", 10**6, unit="dollar")
F.number("tokens_for_budget", F["budget"] * F.compute("cost.tokens_per_dollar", X=gpu("h100-sxm").flops("bf16"), P=70 * 10**9),
         unit="token")
F.number("chinchilla_tokens", 20 * 70 * 10**9, unit="token")

CELLS = [
    markdown(F.text("""
# Cost: rent, payback and tokens per dollar

> *"DeepSeek-V3 reports {{H_gpu}} H800 GPU-hours at {{c_rent}} each: {{total_cost}}. What does a
> dollar buy, on an {{gpu}} training {{model}}?"*

About {{minutes}}.

Money prints in dollars with k, M and B; `.exact` on any value gives every cent the formula implies.
""")),
    code("""
derive("cost.training")
put("cost.training", H_gpu=2788000, c_rent=2)
derive("cost.wall_clock")
put("cost.wall_clock", H_gpu=180000, n=2048)"""),
    markdown(F.text("""
{{days_per_T}} for each trillion tokens on {{dsv3_n}} H800s, as the report says. A GPU bought at c
and rented at c_rent an hour pays back in c/(720·c_rent) months (001: an H100 in about {{li_months}}
months).
""")),
    code(F.code("""
derive("cost.payback_months")
put("cost.payback_months", c_gpu=40000, c_rent=2)
derive("cost.tokens_per_dollar")
put("cost.tokens_per_dollar", X=gpu("a100-80gb")["X"], U="0.4", P=model("llama2-7b")["P"], c_rent={{a100_rent_code}})""")),
    code("""picture("tokens_per_dollar", gpus=("a100-80gb", "h100-sxm"), U="2/5")"""),
    markdown(F.text("""
## What the price of a GPU-hour hides

A rental price per GPU-hour turns GPU-hours into dollars, and nothing else does: the
DeepSeek-V3 report is explicit that its $5.576M counts only the final run at an assumed $2 per
H800-hour, not the research, the ablations or the failed runs before it, nor the cluster's
purchase. The same arithmetic in the other direction says what a dollar buys. At {{U_percent}} of an
A100's {{X}}, one GPU-hour does {{flop_per_gpu_hour}} of useful work; {{model}} needs 6Ψ FLOPs per
token, Ψ = {{P}} (its real count, not the "7B" of its name), so one GPU-hour trains
{{tokens_per_gpu_hour}}, and one dollar at the A100's own {{a100_own_rent}} an hour (the H100's is
higher; the picture prices each GPU at its own rent) {{tokens_per_dollar}}. A model ten times larger gets ten times fewer tokens per dollar: the cost of a run
grows as the product of its parameters and its tokens.

Buying instead of renting changes the question to when the GPU pays for itself. Li Bojie's
article says an H100 rented out at list price pays back in about {{li_months}} months, which implies
{{li_rent}} per GPU-hour for a card bought near {{li_c_gpu}}; at DeepSeek's {{c_rent}} it takes
{{payback}} months.
The formula ignores power, hosting and the fact that a rented GPU is rarely busy around the
clock; each of those lengthens the payback. A negative or zero price is refused by every command that takes
one. Reading a cost in a paper, ask what it counts: the final run, the compute of the whole
project, or the cluster; and at whose price.

## An H100 against an RTX 4090, per dollar

The article's comparison of the two cards survives only as text (LambdaLabs' tables were
images): the H100 trains about {{v_x_thr}} times as fast as a 4090 on one card, has about
{{compute_ratio}} times its dense FP16 rate and {{bandwidth_ratio}} times its memory bandwidth, sells
for about {{v_c_gpu}} against the 4090's {{v_c_ref}}, and so, in its words, "{{S24}}" in tokens per dollar. Throughput per dollar is the
throughput over the price, so the ratio of two cards' values is the price ratio over the
throughput ratio, and the throughput itself cancels:
""")),
    code("""
derive("cost.value_ratio")
put("cost.value_ratio", c_gpu=30000, c_ref=1600, x_thr=2)
put("cost.compute_ratio", X=989 * 10**12, X_ref=330 * 10**12)
put("cost.bandwidth_ratio", W_mem=gpu("h100-sxm")["W_mem"], W_ref=gpu("rtx4090")["W_mem"])
put("cost.breakeven_rent", c_gpu=30000, N_pay=7)"""),
    markdown(F.text("""
{{value_ratio}} at {{v_c_gpu}}, {{value_ratio_40k}} at the {{li_c_gpu}} of the article's Microsoft
arithmetic. The bandwidth ratio is {{bandwidth_ratio_correct}}, not {{bandwidth_ratio}}: the article
divided the H100's {{h100_bandwidth}} by a 4090 taken at {{essay_rtx_bandwidth}} (its datasheet says
{{rtx_bandwidth}}), a slip the errata list. The seven-month payback cannot be reproduced,
because the article never prints the list price it read; what the formula can say is the
price it implies, {{breakeven_30k}} per GPU-hour for a {{v_c_gpu}} card, and the rent stays an input
you set. The 4090's low price is why the article finds it up to twice as good per dollar for
serving, where memory bandwidth per dollar decides, and useless for training large models,
where the missing NVLink and the {{rtx_memory}} decide.

## How many network cards a PCIe machine needs

The same essay trains LLaMA-2 70B over plain data parallelism on {{stages}} pipeline stages of about
{{nic_P}}, each GPU summing its {{stages}} micro-batches' gradients before it sends them: a
{{step_seconds}} step ({{stages}} × {{micro_step}}), and per GPU {{fp32_gradients}} of fp32 gradients out
and the averages back in. The eight
GPUs of a machine share its NICs, so the exchange takes 2·g·4Ψ/(k·W_NIC):
""")),
    code("""
derive("comms.nic.count")
put("comms.nic.time", g_node=8, P=10**9, k_nic=8, W_nic=25 * 10**9)
put("comms.nic.count", g_node=8, P=10**9, tau=1, W_nic=25 * 10**9)"""),
    markdown(F.text("""
With the article's {{nic_k}} ConnectX-6 cards of {{nic_gbit}} Gb/s ({{nic_W}} each) the exchange takes
{{nic_time}}, well inside its budget of {{nic_budget}}; that budget needs only {{nics_correct}} cards, so
{{nics_needed}}. The article's {{nics}} is one card per GPU, which carries {{nics_bandwidth}} of the
{{pcie_bandwidth}} the eight PCIe Gen4 x16 links can send; matching them exactly would take
{{nics_pcie_correct}} cards. The article's "basically {{nics_pcie}}" is the PCIe-matching count
rounded to one per GPU, not what the one-second budget asks for.
""")),

    markdown(F.text("""
## Summary, and what to try next

Three formulas carry this lesson: cost is GPU-hours times the price, the wall-clock time is
GPU-hours over the GPU count, and tokens per dollar is the sustained rate over six FLOPs per
parameter per token, over the price. Every input is one a procurement spreadsheet already has,
and each comes with the paper it was taken from, so a reader can replace it with their own.
Try DeepSeek's numbers at a cloud list price of {{list_rent}} per GPU-hour instead of {{c_rent}}: the
same run costs {{cost_at_list}}. Try the payback of an A100 bought at {{a100_price}} and rented at
{{a100_rent}} an hour: {{a100_payback}} months, before power. Then try the opening question in
reverse: with a budget of {{budget}}, how many tokens of a 70B model can you train at
{{U_percent}} of an H100's peak? The answer, {{tokens_for_budget}} at {{c_rent}} an hour, is close to
the {{chinchilla_tokens}} Chinchilla's rule of twenty tokens per parameter asks for a 70B model, which shows how quickly the size of
the model eats the budget: cost grows as Ψ·D, and the compute-optimal recipe grows both
together, so a model twice as large costs four times as much to train well.
""")),
    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (2,664K read as 2,664, millions typed as dollars). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("cost.deepseek_pretraining")"""),
    code("""
answer = None  # dollars
check("cost.deepseek_pretraining", answer)"""),
]
