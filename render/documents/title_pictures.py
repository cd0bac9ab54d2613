"""A title in Chinese as a small PDF picture, for pdflatex, which has no CJK fonts here.

``title_pdf(text)`` sets the text in a CJK font of the system (Droid Sans Fallback or Noto
Sans CJK, found by fontconfig) with matplotlib and returns the tightly cropped PDF, its font
embedded as TrueType with its Unicode map, so that the title can be read and copied from the
reference's PDF; None when the system has no such font. Fixed metadata: the same title gives
the same bytes.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from functools import cache
from pathlib import Path

CANDIDATES = (
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
)


@cache
def cjk_font() -> str | None:
    """A font file with Chinese glyphs, or None."""
    for path in CANDIDATES:
        if Path(path).exists():
            return path
    if shutil.which("fc-match"):
        found = subprocess.run(["fc-match", "-f", "%{file}", ":lang=zh"], capture_output=True, text=True).stdout.strip()
        if found and Path(found).exists() and found.endswith((".ttf", ".otf", ".ttc")):
            return found
    return None


@cache
def title_pdf(text: str) -> bytes | None:
    font = cjk_font()
    if font is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties, fontManager

    fontManager.addfont(font)
    cjk = FontProperties(fname=font).get_name()
    with plt.rc_context({"pdf.fonttype": 42}):  # Latin letters and digits in DejaVu Sans, the rest in the CJK font
        figure = plt.figure(figsize=(8, 0.4))
        figure.text(0, 0.1, text, fontproperties=FontProperties(family=["DejaVu Sans", cjk], size=10))
        buffer = io.BytesIO()
        figure.savefig(buffer, format="pdf", bbox_inches="tight", pad_inches=0.01,
                       metadata={"Creator": None, "Producer": None, "CreationDate": None})
        plt.close(figure)
    return buffer.getvalue()
