"""The dimension algebra and the checker run over every formula."""

import pytest
import sympy as sp

import dataclasses

from llm_formulas.derivations.reports.catalogue import unit_outcomes
from llm_formulas.formulas.vocabulary.catalogue import all_formulas, catalogue
from llm_formulas.formulas.vocabulary.dimensions import DimensionError, check_declared_unit, dimension_of
from llm_formulas.formulas.vocabulary.symbols import D, P, W_mem, X, c_flop, h, u_flop, u_gpu, u_layer, u_param, u_seq
from llm_formulas.formulas.vocabulary.units import UnitSyntaxError, parse_unit


def test_parse_and_print_round_trip():
    unit = parse_unit("FLOP/(parameter*token)")
    assert unit.as_dict == {"parameter": -1, "token": -1, "FLOP": 1}
    assert parse_unit(str(unit)) == unit
    assert parse_unit("byte/second") * parse_unit("second") == parse_unit("byte")
    assert parse_unit("1").is_dimensionless


@pytest.mark.parametrize("text", ["furlong", "byte/", "(byte", "byte**2", "__import__('os')"])
def test_unit_grammar_rejects(text):
    with pytest.raises(UnitSyntaxError):
        parse_unit(text)


def test_adding_bytes_to_flops_names_both_terms():
    flops = 3 * c_flop * P * D  # FLOP
    seconds_times_bandwidth = W_mem * flops / X  # byte
    with pytest.raises(DimensionError) as failure:
        dimension_of(flops + seconds_times_bandwidth)
    message = str(failure.value)
    assert "[FLOP]" in message and "[byte]" in message
    assert "c_flop" in message and "W_mem" in message


def test_declared_unit_mismatch_is_reported():
    with pytest.raises(DimensionError, match="declared byte"):
        check_declared_unit(3 * c_flop * P * D, parse_unit("byte"))


def test_a_count_states_its_unit_and_a_pure_number_is_not_a_count():
    assert check_declared_unit(12 * h**2 * u_param, parse_unit("parameter")) == "exact"
    with pytest.raises(DimensionError, match="pure number, declared parameter.*u_param"):
        check_declared_unit(12 * h**2, parse_unit("parameter"))
    with pytest.raises(DimensionError):
        check_declared_unit(12 * h**2, parse_unit("byte/second"))


def test_a_parameter_count_declared_in_flop_fails_check_naming_it():
    """The issue's case: params.total restated as FLOPs must not pass ``check``."""
    entries = catalogue()
    original = entries["params.total"]
    entries["params.total"] = dataclasses.replace(original, unit=parse_unit("FLOP"))
    try:
        failed = [o for o in unit_outcomes() if not o.ok]
    finally:
        entries["params.total"] = original
    assert [o.label for o in failed] == ["params.total"]
    assert "expression has unit parameter, declared FLOP" in failed[0].detail


def test_parameters_flops_layers_sequences_and_gpus_are_distinct_units():
    marks = [u_param, u_flop, u_layer, u_seq, u_gpu, D]  # D counts tokens
    units = {str(dimension_of(mark)) for mark in marks}
    assert units == {"parameter", "FLOP", "layer", "sequence", "GPU", "token"}


def test_functions_need_dimensionless_arguments():
    with pytest.raises(DimensionError, match="log"):
        dimension_of(sp.log(P))
    assert dimension_of(sp.ceiling(P)) == parse_unit("parameter")


def test_every_registered_formula_has_its_declared_unit():
    for formula in all_formulas():
        check_declared_unit(formula.dimensioned, formula.unit)
