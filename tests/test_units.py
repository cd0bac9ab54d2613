"""The dimension algebra and the checker run over every formula."""

import pytest
import sympy as sp

from formulas.catalogue import all_formulas
from formulas.dimensions import DimensionError, check_declared_unit, dimension_of
from formulas.symbols import D, P, W_mem, X, c_flop, h
from formulas.units import UnitSyntaxError, parse_unit


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


def test_count_may_be_declared_as_a_base_unit_only():
    assert check_declared_unit(12 * h**2, parse_unit("parameter")) == "count"
    with pytest.raises(DimensionError):
        check_declared_unit(12 * h**2, parse_unit("byte/second"))


def test_functions_need_dimensionless_arguments():
    with pytest.raises(DimensionError, match="log"):
        dimension_of(sp.log(P))
    assert dimension_of(sp.ceiling(P)) == parse_unit("parameter")


def test_every_registered_formula_has_its_declared_unit():
    for formula in all_formulas():
        check_declared_unit(formula.expr, formula.unit)
