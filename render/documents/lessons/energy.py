"""Lesson: energy and emissions. Can we reproduce Llama 2's 31.22 tCO2eq?"""

from render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Energy and emissions of a training run

> *"Llama 2 7B: 184,320 A100 GPU-hours, 31.22 tCO2eq. Where does that number come from?"*

GPU-hours × board power gives the GPUs' energy; the data centre draws PUE times that; the grid
emits so many grams per kWh. LLaMA's paper gives the two factors (PUE 1.1, 0.385 kg/kWh).
About 10 minutes.
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
]
