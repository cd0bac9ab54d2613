"""The one error type of bad input, shared by every surface.

``InputError`` is what a value, a name or a model that breaks a rule raises: the command line prints its message on
one line and exits 2, the library (``llm_formulas``) lets it through as the same ValueError with the same words.
Imports nothing, so the command line's start-up stays light.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(ValueError):
    """Bad input, in one line: the command line prints it and exits 2; the library raises it."""
