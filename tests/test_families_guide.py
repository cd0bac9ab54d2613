"""The guide's family chapter is generated from the declarations, and the README points to it."""

from pathlib import Path

from llm_formulas.formulas.data.families import FAMILIES
from llm_formulas.formulas.data.multimodal import MULTIMODAL
from llm_formulas.render.documents.families_table import CHAPTER, refreshed

ROOT = Path(__file__).resolve().parent.parent


def test_the_family_table_is_what_the_declarations_say():
    text = CHAPTER.read_text(encoding="utf-8")
    assert refreshed(text) == text, "run: python -m llm_formulas.render.documents.families_table"
    assert all(f"| `{name}` |" in text for name in (*FAMILIES, *MULTIMODAL))


def test_the_readme_links_the_generated_family_list():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "guide/families.md" in readme
