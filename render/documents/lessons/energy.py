"""Lesson: energy and emissions. Can we reproduce Llama 2's 31.22 tCO2eq?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Energy and emissions of a training run

> *"Llama 2 7B: 184,320 A100 GPU-hours, 31.22 tCO2eq. Where does that number come from?"*

GPU-hours × board power gives the GPUs' energy; the data centre draws PUE times that; the grid
emits so many grams per kWh. LLaMA's paper gives the two factors (PUE 1.1, 0.385 kg/kWh).
About 10 minutes.

A note on units: energy prints in kWh and MWh, emissions in tonnes of CO2-equivalent, and `.exact`
on any value gives the joules or grams, every digit.
"""),
    code("""
derive("energy.training")
derive("energy.emissions")
put("energy.emissions", H_gpu=184320, W_gpu=400, PUE="1.1", I_co2=385)"""),
    markdown("""
31,223.8 kg: the paper prints 31.22 t (its column is truncated: 62.4476 t prints as 62.44).

## Compute in PF-days

Kaplan et al. measure compute in petaFLOP/s-days, 8.64·10¹⁹ FLOPs; GPT-3 175B took 3.64·10³.
"""),
    code("""
derive("energy.pf_day")
put("energy.pf_days", C_flops="3.1428e23")"""),
    markdown("""
## What the factors mean, and which ones a paper leaves out

The energy of a run is not what its GPUs draw alone. Board power (400 W for an A100 SXM, 700 W
for an H100 SXM, each as its datasheet prints it, and stored in the GPU presets as `tdp`) is
the ceiling of what one GPU draws; the host CPUs, memory, network cards and switches draw more,
and the building spends more again on cooling and power conversion. The power usage
effectiveness, PUE, is the ratio of what the facility draws to what the IT equipment draws:
1.1 for a modern hyperscale data centre, 1.5 or more for an older machine room. LLaMA's paper
uses 1.1 and the US average grid intensity, 0.385 kg of CO2-equivalent per kWh; with those two
factors every row of Llama 2's Table 2 comes out, truncated to two decimals.

Other papers make other choices, and the same formula reproduces them when the factors match.
BLOOM's carbon footprint paper counts the GPUs' dynamic consumption alone (PUE 1, 433,196 kWh
for 1,082,990 GPU-hours at 400 W) and the French grid's 57 g/kWh, which is why its 24.7 t is a
tenth of what the same run would emit on the US grid. The grid intensity, not the GPU, is the
biggest lever on the emissions of a training run: the same 433 MWh are 167 t at 385 g/kWh.

The other unit here, the PF-day, is Kaplan's: 10¹⁵ FLOP/s sustained for a day, 8.64·10¹⁹ FLOPs.
It is a unit of work, not of time: GPT-3's 3.14·10²³ FLOPs are 3,640 PF-days whatever the
hardware. Dividing it by a GPU's sustained rate gives GPU-days: at 140 TFLOP/s an A100 does a
PF-day of work in about 7.1 days. Every `estimate` report now ends with the run's footprint:
GPU-hours, rental cost, energy at the preset's board power and the PUE you give (`--pue`), and
emissions at the intensity you give (`--carbon-intensity`). A PUE below 1 is refused, since no
data centre draws less than its IT equipment.
"""),

    markdown("""
## Summary, and what to try next

The chain is short and every link is a stated input: GPU-hours from the run, board power from
the datasheet, PUE from the facility, grid intensity from where and when the run took place.
Change one and the answer scales with it; none of them hides in a constant. Try the opening
question with the factors of another paper: the same Llama-2-70B run on the French grid at
57 g/kWh and PUE 1.2 emits about 47 t rather than 291 t. Try it with the H100's 700 W: the
same GPU-hours would draw 75 % more energy, but an H100 finishes the same work in fewer hours,
so the honest comparison divides by the work done, not the hours spent. Energy per token
trained, or per PF-day of useful work, is the number to compare across hardware generations.
"""),
    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("energy.llama2_70b")"""),
    code("""
answer = None  # tonnes of CO2eq
check("energy.llama2_70b", answer)"""),
]
