"""The lessons, one module each: CELLS, the Markdown and code cells of one notebook (render.documents.notebooks)."""
