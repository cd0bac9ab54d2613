"""``python -m llm_formulas``: the command line, as the ``llm-formulas`` script runs it."""

from llm_formulas.render.cli.main import entry_point

entry_point()
