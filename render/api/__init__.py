"""llm-formulas: the arithmetic of large-model systems as checked SymPy derivations."""

from importlib.metadata import version as _version

__version__: str = _version("llm-formulas")
