"""The footprint of a training run that ``estimate`` reports: GPU-hours, energy, emissions, cost.

Glue over the catalogue (``energy.training``, ``energy.emissions``, ``cost.training``):
the run's GPU-hours are n × its days × 24, the board power is the GPU's datasheet
TDP. The defaults are cited figures a user overrides: PUE 1.1 and 385 g CO2eq/kWh
(Touvron et al. 2023, LLaMA §6, the US average), $2 per GPU-hour (DeepSeek-V3
Technical Report, Table 1, H800 rental).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.reports.estimate import exact

DEFAULT_PUE = sp.Rational(11, 10)
DEFAULT_INTENSITY = sp.Integer(385)  # g CO2eq per kWh
DEFAULT_PRICE = sp.Integer(2)  # $ per GPU-hour


def footprint(training_days: sp.Rational, n: int, board_watts: sp.Rational | None, pue: sp.Rational,
              intensity: sp.Rational, price: sp.Rational) -> dict:
    """GPU-hours, and with a board power, energy (J) and emissions (g); the cost at ``price`` per GPU-hour."""
    hours = n * training_days * 24
    doc = {"gpu_hours": hours, "cost_dollars": exact("cost.training", H_gpu=hours, c_rent=price),
           "PUE": pue, "carbon_intensity_g_per_kwh": intensity, "price_per_gpu_hour": price}
    if board_watts is not None:
        doc["board_watts"] = board_watts
        doc["energy_joules"] = exact("energy.training", H_gpu=hours, W_gpu=board_watts, PUE=pue)
        doc["emissions_grams"] = exact("energy.emissions", H_gpu=hours, W_gpu=board_watts, PUE=pue, I_co2=intensity)
    return doc
