"""Proofs of the PF-day, energy and emissions formulas (Kaplan 2020 §1.3; LLaMA §6; Llama 2 Table 2)."""

from __future__ import annotations

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.topics.energy import KAPLAN, LLAMA, LLAMA2
from llm_formulas.formulas.vocabulary.symbols import C_flops, H_gpu, I_co2, PUE, W_gpu, c_hour, c_kwh, c_pfday, u_gpu


def pf_day() -> Derivation:
    d = Derivation("energy.pf_day", "One PF-day", (KAPLAN,))
    d.defines("PF·day", 10**15 * 24 * 3600, "10^15 FLOP/s for 24 hours of 3600 s")
    d.equals("8.64e19", 864 * 10**17, "Kaplan's 8.64 × 10^19 FLOPs")
    d.concludes("energy.pf_day")
    return d


def pf_days() -> Derivation:
    d = Derivation("energy.pf_days", "A FLOP count in PF-days", (KAPLAN,))
    d.defines("C_PF·days", C_flops / c_pfday, "divide by one PF-day")
    d.concludes("energy.pf_days")
    return d


def training() -> Derivation:
    d = Derivation("energy.training", "Energy of a training run", (LLAMA, LLAMA2))
    e_it = d.defines("E_IT", H_gpu * c_hour * W_gpu / u_gpu, "H GPU-hours at board power W per GPU: the GPUs' energy")
    d.defines("E", e_it * PUE, "the facility draws PUE times the IT power (cooling, conversion)")
    d.concludes("energy.training")
    return d


def emissions() -> Derivation:
    d = Derivation("energy.emissions", "Emissions of a training run", (LLAMA, LLAMA2))
    e_kwh = d.defines("E_kWh", H_gpu * c_hour * W_gpu * PUE / (c_kwh * u_gpu), "the run's energy in kWh")
    d.defines("m_CO2e", e_kwh * I_co2, "kWh × grams of CO2e per kWh of the grid")
    d.concludes("energy.emissions")
    return d


DERIVATIONS = (pf_day, pf_days, training, emissions)
