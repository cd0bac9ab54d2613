"""Lesson: cost. What did DeepSeek-V3 cost to rent, and when does a GPU pay for itself?"""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Cost: rent, payback and tokens per dollar

> *"DeepSeek-V3 reports 2.788M H800 GPU-hours at $2 each: $5.576M. What does a dollar buy?"*

About 10 minutes.
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
]
