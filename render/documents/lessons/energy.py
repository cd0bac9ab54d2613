"""Lesson: energy and emissions. Can we reproduce Llama 2's 31.22 tCO2eq?"""

from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("energy", model="llama2-7b", gpu="a100-80gb", minutes=10, compare_gpus=("h100-sxm",))
ROW = "llama2.t2.7B.co2"
for symbol in ("H_gpu", "W_gpu", "PUE", "I_co2"):
    F.published(symbol, ROW, input=symbol)
F.published("printed", ROW)
F.literal("H_code", int(F["H_gpu"]))
F.literal("W_code", int(F["W_gpu"]))
F.number("emissions_kg", F.compute("energy.emissions") / 1000, digits=6)
F.number("truncated_13b", F.compute("energy.emissions", **{"H_gpu": 368640}) / 10**6, digits=6)
F.published("printed_13b", "llama2.t2.13B.co2")
F.number("pf_day", F.compute("energy.pf_day"), unit="FLOP")
F.number("gpt3_flops", "3.1428e23", unit="FLOP")
F.value("gpt3_pf_days", "energy.pf_days", C_flops=F["gpt3_flops"])
F.number("h100_tdp", gpu("h100-sxm").tdp, unit="joule/second")
F.number("intensity_kg", F["I_co2"] / 1000, digits=3)
# BLOOM's footprint (Luccioni et al. 2022): dynamic consumption only, the French grid
BLOOM = {"H_gpu": 1082990, "W_gpu": 400, "PUE": 1, "I_co2": 57}
for symbol, value in BLOOM.items():
    F.number(f"bloom_{symbol}", value, unit="joule/second" if symbol == "W_gpu" else "1")
F.number("bloom_kwh", F.compute("energy.training", **BLOOM) / 3_600_000, digits=6)
F.value("bloom_t", "energy.emissions", **BLOOM)
F.value("bloom_us", "energy.emissions", **(BLOOM | {"I_co2": F["I_co2"]}))
F.number("bloom_share", F["bloom_t"] / F["bloom_us"], percent=True, digits=2)
F.number("a100_rate", 140 * 10**12, unit="FLOP/second")
F.number("pf_day_on_a100", F["pf_day"] / F["a100_rate"], unit="second")
F.number("fr_pue", "1.2")
F.value("llama70_fr", "energy.emissions", H_gpu=1720320, PUE="1.2", I_co2=57)
F.value("llama70_us", "energy.emissions", H_gpu=1720320)
F.number("h100_more", F["h100_tdp"] / F["W_gpu"] - 1, percent=True)

CELLS = [
    markdown(F.text("""
# Energy and emissions of a training run

> *"{{model}}: {{H_gpu}} GPU-hours of the {{gpu}}, {{printed}}. Where does that number come from?"*

GPU-hours × board power gives the GPUs' energy; the data centre draws PUE times that; the grid
emits so many grams per kWh. LLaMA's paper gives the two factors (PUE {{PUE}}, {{intensity_kg}} kg
per kWh). About {{minutes}}.

A note on units: energy prints in kWh and MWh, emissions in tonnes of CO2-equivalent, and `.exact`
on any value gives the joules or grams, every digit.
""")),
    code("""
derive("energy.training")
derive("energy.emissions")
put("energy.emissions", H_gpu=184320, W_gpu=400, PUE="1.1", I_co2=385)"""),
    markdown(F.text("""
{{emissions_kg}} kg: the paper prints {{printed}} (its column is truncated: the 13B row's
{{truncated_13b}} t prints as {{printed_13b}}).

## Compute in PF-days

Kaplan et al. measure compute in petaFLOP/s-days, {{pf_day}}; GPT-3 175B took {{gpt3_pf_days}}
PF-days.
""")),
    code("""
derive("energy.pf_day")
put("energy.pf_days", C_flops="3.1428e23")"""),
    markdown(F.text("""
## What the factors mean, and which ones a paper leaves out

The energy of a run is not what its GPUs draw alone. Board power ({{W_gpu}} for an A100 SXM,
{{h100_tdp}} for an H100 SXM, each as its datasheet prints it, and stored in the GPU presets as `tdp`) is
the ceiling of what one GPU draws; the host CPUs, memory, network cards and switches draw more,
and the building spends more again on cooling and power conversion. The power usage
effectiveness, PUE, is the ratio of what the facility draws to what the IT equipment draws:
{{PUE}} for a modern hyperscale data centre, more for an older machine room. LLaMA's paper uses
{{PUE}} and the US average grid intensity, {{intensity_kg}} kg of CO2-equivalent per kWh; with those two
factors every row of Llama 2's Table 2 comes out, truncated to two decimals.

Other papers make other choices, and the same formula reproduces them when the factors match.
BLOOM's carbon footprint paper counts the GPUs' dynamic consumption alone (PUE {{bloom_PUE}},
{{bloom_kwh}} kWh for {{bloom_H_gpu}} GPU-hours at {{bloom_W_gpu}}) and the French grid's
{{bloom_I_co2}} g per kWh, which is why its {{bloom_t}} are {{bloom_share}} of what the same run would
emit on the US grid ({{bloom_us}}). The grid intensity, not the GPU, is the biggest lever on the
emissions of a training run.

The other unit here, the PF-day, is Kaplan's: 10¹⁵ FLOP/s sustained for a day, {{pf_day}}.
It is a unit of work, not of time: GPT-3's {{gpt3_flops}} are {{gpt3_pf_days}} PF-days whatever the
hardware. Dividing it by a GPU's sustained rate gives GPU-days: at {{a100_rate}} an A100 does a
PF-day of work in {{pf_day_on_a100}}. Every `estimate` report now ends with the run's footprint:
GPU-hours, rental cost, energy at the preset's board power and the PUE you give (`--pue`), and
emissions at the intensity you give (`--carbon-intensity`). A PUE below 1 is refused, since no
data centre draws less than its IT equipment.
""")),

    markdown(F.text("""
The picture draws the emissions of these {{H_gpu}} GPU-hours against the grid's intensity, for three
PUEs:
""")),
    code(F.code("""picture("emissions_by_grid", H_gpu={{H_code}}, W_gpu={{W_code}}, pues=("1", "1.1", "1.5"))""")),
    markdown(F.text("""
## Summary, and what to try next

The chain is short and every link is a stated input: GPU-hours from the run, board power from
the datasheet, PUE from the facility, grid intensity from where and when the run took place.
Change one and the answer scales with it; none of them hides in a constant. Try the opening
question with the factors of another paper: the same Llama-2-70B run on the French grid at
{{bloom_I_co2}} g per kWh and PUE {{fr_pue}} emits {{llama70_fr}} rather than {{llama70_us}}. Try it
with the H100's {{h100_tdp}}: the same GPU-hours would draw {{h100_more}} more energy, but an H100 finishes the same work in fewer hours,
so the honest comparison divides by the work done, not the hours spent. Energy per token
trained, or per PF-day of useful work, is the number to compare across hardware generations.
""")),
    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (the PUE forgotten, kilograms for tonnes). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("energy.llama2_70b")"""),
    code("""
answer = None  # tonnes of CO2eq
check("energy.llama2_70b", answer)"""),
]
