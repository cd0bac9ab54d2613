"""The reference site (``OUT/reference/``) in a real headless Chromium at 1280 × 800.

``load(page)`` opens a copy of one page with a probe that runs at its load event: how long the page took to load and
lay out (``performance.now()`` after a forced layout: navigation start to a laid-out page), whether it scrolls sideways
(``scrollWidth`` against ``clientWidth``), the size of its first displayed equation, how many ``<math>`` it holds, and what its
search box lists after each query is typed into it, a character at a time, as ``input`` events.
``widths(pages)`` loads every page in a frame of 1280 × 800 of one harness page and reads each one's widths.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
WINDOW = (1280, 800)

PROBE = """
<script>
window.addEventListener("load", function () {
  const root = document.documentElement;
  const width = {scroll: root.scrollWidth, client: root.clientWidth};
  const loaded = performance.now();
  const first = document.querySelector("article.formula .display math");
  const box = first ? first.getBoundingClientRect() : null;
  const seen = {loaded: loaded, width: width, firstMath: box ? [box.width, box.height] : null,
                maths: document.querySelectorAll("math").length, questions: document.querySelectorAll(".questions a").length,
                search: {}};
  const input = document.getElementById("search");
  for (const query of QUERIES) {
    input.value = "";
    for (const character of query) {
      input.value += character;
      input.dispatchEvent(new InputEvent("input", {data: character, inputType: "insertText"}));
    }
    seen.search[query] = Array.from(document.querySelectorAll("#results a")).map(function (a) { return a.dataset.id; });
  }
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(seen);
  root.appendChild(out);
});
</script>
"""


def chromium(url: str, profile: Path, *extra: str) -> str:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--allow-file-access-from-files",
               f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={profile}", *extra, "--dump-dom", url]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180)  # a hang guard, not a measure
    assert run.returncode == 0, run.stderr[-500:]
    return run.stdout


def _read(dom: str, name: str) -> dict | list:
    found = re.search(rf'<pre id="{name}">(.*?)</pre>', dom, flags=re.S)
    assert found, f"the {name} script did not run"
    return json.loads(html.unescape(found.group(1)))


def copy_of(site: Path, work: Path) -> Path:
    """A copy of the site to put probes in (the build's own files stay as written)."""
    target = work / "reference"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(site, target)
    return target


def load(site: Path, page: str, work: Path, queries: tuple[str, ...] = ()) -> dict:
    """What one page of a copy of the site shows at its load event (see the module's docstring)."""
    copy = copy_of(site, work)
    path = copy / page
    probe = PROBE.replace("QUERIES", json.dumps(list(queries)))
    path.write_text(path.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    return _read(chromium(path.as_uri(), work / "profile"), "probe")


def widths(site: Path, pages: list[str], work: Path) -> dict[str, dict]:
    """Each page's scrollWidth and clientWidth in a frame of 1280 × 800."""
    copy = copy_of(site, work)
    frames = "".join(f'<iframe src="{html.escape(page)}" width="{WINDOW[0]}" height="{WINDOW[1]}" style="border:0;display:block"></iframe>'
                     for page in pages)
    harness = copy / "harness.html"
    harness.write_text(f"""<!DOCTYPE html><html><body style="margin:0">{frames}<pre id="harness"></pre><script>
window.addEventListener("load", function () {{
  const rows = {{}};
  for (const frame of document.querySelectorAll("iframe")) {{
    const root = frame.contentDocument.documentElement;
    rows[frame.getAttribute("src")] = {{scroll: root.scrollWidth, client: root.clientWidth}};
  }}
  document.getElementById("harness").textContent = JSON.stringify(rows);
}});
</script></body></html>""", encoding="utf-8")
    return _read(chromium(harness.as_uri(), work / "profile"), "harness")
