"""Helpers for users' own tests: exact assertions, and (with Hypothesis installed) strategies of valid points.

    from llm_formulas.testing import assert_identity, assert_approximation, assert_derivation
    from llm_formulas.testing.strategies import valid_point    # pip install 'llm-formulas[hypothesis]'
"""

from llm_formulas.derivations.reports.testing import assert_approximation, assert_derivation, assert_identity

__all__ = ["assert_approximation", "assert_derivation", "assert_identity"]
