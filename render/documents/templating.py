"""The jinja2 environments of ``render/documents/templates/``.

HTML autoescapes; LaTeX uses delimiters that LaTeX never contains
(``\\VAR{...}``, ``\\BLOCK{...}``, ``\\#{...}``) and no autoescape; Markdown has
no autoescape. All are StrictUndefined, so a misspelt field fails the build,
and every format has its escaping filters (``md``, ``mdmath``, ``tex``, ``texmath``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import jinja2

from llm_formulas.render.printers.escape import md_display, md_inline, md_text, tex_math, tex_text

TEMPLATES = Path(__file__).parent / "templates"


@cache
def environment(kind: Literal["html", "tex", "md"]) -> jinja2.Environment:
    options: dict = {
        "loader": jinja2.FileSystemLoader(str(TEMPLATES)),
        "undefined": jinja2.StrictUndefined,
        "keep_trailing_newline": True,
        "trim_blocks": True,
        "lstrip_blocks": True,
    }
    if kind == "tex":
        options.update(
            block_start_string=r"\BLOCK{",
            block_end_string="}",
            variable_start_string=r"\VAR{",
            variable_end_string="}",
            comment_start_string=r"\#{",
            comment_end_string="}",
            line_statement_prefix=None,
            autoescape=False,
        )
    else:
        options["autoescape"] = kind == "html"
    env = jinja2.Environment(**options)
    env.filters.update(md=md_text, mdinline=md_inline, mddisplay=md_display, tex=tex_text, texmath=tex_math,
                       # an id, a unit or a sentence naming ids may break after a dot or a slash
                       texid=lambda text: tex_text(text).replace(".", r".\allowbreak{}").replace("/", r"/\allowbreak{}"))
    return env


def render(template: str, **context) -> str:
    """Render a template; its extension (.md, .tex, else HTML) picks the environment."""
    extension = template.rsplit(".", 1)[-1]
    kind = {"md": "md", "tex": "tex"}.get(extension, "html")
    return environment(kind).get_template(template).render(**context)
