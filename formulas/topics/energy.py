"""Compute in PF-days, and the energy and emissions of a training run.

One PF-day is 10¹⁵ FLOP/s for a day, 8.64·10¹⁹ FLOP (Kaplan et al. 2020 §1.3).
Energy is GPU-hours × board power × PUE; emissions multiply the energy in kWh
by the grid's carbon intensity (Touvron et al. 2023, LLaMA §6 and Llama 2
Table 2)."""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import C_flops, H_gpu, I_co2, PUE, W_gpu, c_hour, c_kwh, c_pfday, u_gpu

KAPLAN = Source("kaplan2020", "§1.3, PF-days")
LLAMA = Source("touvron2023a", "§6, carbon footprint")
LUCCIONI = Source("luccioni2022", "§4, BLOOM's dynamic power consumption and emissions")
LLAMA2 = Source("touvron2023b", "Table 2, CO2 emissions during pretraining")

pf_day = formula(
    "energy.pf_day",
    c_pfday,
    "FLOP",
    "one petaFLOP/s-day in FLOPs: 10^15 × 24 × 3600",
    sources=[KAPLAN],
    symbol_latex=r"\mathrm{PF\cdot day}",
)
pf_days = formula(
    "energy.pf_days",
    C_flops / c_pfday,
    "1",
    "a FLOP count in PF-days",
    sources=[KAPLAN],
    related=["energy.pf_day"],
    symbol_latex=r"C_{PF\cdot days}",
)
energy = formula(
    "energy.training",
    H_gpu * c_hour * W_gpu * PUE / u_gpu,
    "joule",
    "energy of a run: GPU-hours × board power × PUE",
    sources=[LLAMA, LLAMA2, LUCCIONI],
    symbol_latex=r"E_{train}",
)
emissions = formula(
    "energy.emissions",
    H_gpu * c_hour * W_gpu * PUE * I_co2 / (c_kwh * u_gpu),
    "gram",
    "CO2-equivalent emissions of a run: its energy in kWh × the grid's carbon intensity",
    sources=[LLAMA, LLAMA2, LUCCIONI],
    related=["energy.training"],
    symbol_latex=r"m_{CO_2e}",
)
