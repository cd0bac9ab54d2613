"""The sizing page driven in one headless Chromium run: many URL states at once, each read back from its DOM.

``states(queries)`` loads ``calculator.html?QUERY`` once per query, each in its own frame of one harness
page (real navigations: the page reads its URL as a user's link makes it), and reads back what each frame
shows. ``fuzz(queries)`` loads the page once and walks it through the queries as the browser's back and
forward buttons do (``history.replaceState`` and a ``popstate`` event, which the page answers by loading the
URL's state afresh): hundreds of states in seconds. Both return, per query: whether the page's script ran
to its end (``ready``), an exception it threw (``error``), the verdict, its reason, the state it wrote back,
the figures it shows (text and full-precision value), the selects, the formulas' condition warnings, the serving
view (its verdict or refusal, whether it fits, the bound of a decoding step, each figure's full-precision value), and
whether any text it wrote reads NaN, Infinity or undefined.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from build_session import calculator, scratch

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

COLLECT = """
function collect(d) {
  const typed = /'(?:[^'\\\\]|\\\\.)*'/g;  // what the reason quotes of the input may read anything
  const dynamic = Array.from(d.querySelectorAll("output, #verdict, .legend, .warn")).map(function (e) { return e.textContent; })
    .concat(Array.from(d.querySelectorAll(".bar span")).map(function (s) { return s.title; }))
    .concat(["reason", "serve-verdict"].map(function (id) { return d.getElementById(id).textContent.replace(typed, ""); })).join("\\n");
  const verdict = d.getElementById("verdict"), served = d.getElementById("serve-verdict");
  return {
    ready: d.body.dataset.ready || "", verdict: verdict.textContent, fits: verdict.dataset.fits || "",
    total: verdict.dataset.total || "", reason: d.getElementById("reason").textContent, state: d.body.dataset.state || "",
    figures: Object.fromEntries(Array.from(d.querySelectorAll("output[data-report]")).map(function (o) {
      return [o.dataset.report, [o.textContent, o.dataset.value]]; })),
    selects: Object.fromEntries(Array.from(d.querySelectorAll("select")).map(function (s) {
      return [s.id, [s.value, s.classList.contains("invalid")]]; })),
    warnings: Object.fromEntries(Array.from(d.querySelectorAll(".warn")).filter(function (w) { return w.textContent; }).map(function (w) {
      return [w.id.slice(5), w.textContent]; })),
    accounting: d.getElementById("accounting").textContent,
    serving: {verdict: served.textContent, fits: served.dataset.fits || "", bound: d.getElementById("serve-bound").dataset.value,
      flag: d.getElementById("serve-flag").textContent, context: d.querySelector('output[data-serve-report="memory.max_context"]').textContent,
      contextNote: d.getElementById("context-note").textContent,
      figures: Object.fromEntries(Array.from(d.querySelectorAll("output[data-serve-report]")).map(function (o) {
        return [o.dataset.serveReport, o.dataset.value]; }))},
    unreadable: ["NaN", "Infinity", "undefined"].filter(function (word) { return dynamic.includes(word); }),
  };
}
"""


def _chromium(url: str, timeout: int = 300) -> str:
    profile = scratch("chromium-profile-harness")
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--allow-file-access-from-files",
               "--disable-ipc-flooding-protection",  # else Chromium ignores history.replaceState after 200 calls in 10 s
               f"--user-data-dir={profile}", "--dump-dom", url]
    run = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr[-500:]
    found = re.search(r'<pre id="harness">(.*?)</pre>', run.stdout, flags=re.S)
    assert found, "the harness script did not run"
    return html.unescape(found.group(1))


def _page_copy(folder: Path) -> Path:
    page = folder / "calculator.html"
    shutil.copyfile(calculator(), page)
    return page


def states(queries: list[str]) -> list[dict]:
    """What the page shows at ``calculator.html?QUERY``, for each query (one frame each, one browser run)."""
    folder = scratch("harness-states")
    _page_copy(folder)
    frames = "\n".join(f'<iframe src="calculator.html?{html.escape(query)}"></iframe>' for query in queries)
    (folder / "harness.html").write_text(f"""<!DOCTYPE html><html><body>{frames}<pre id="harness"></pre>
<script>{COLLECT}
window.addEventListener("load", function () {{
  const rows = Array.from(document.querySelectorAll("iframe")).map(function (frame) {{
    try {{ return collect(frame.contentDocument); }} catch (error) {{ return {{error: String(error)}}; }}
  }});
  document.getElementById("harness").textContent = JSON.stringify(rows);
}});
</script></body></html>""")
    return json.loads(_chromium((folder / "harness.html").as_uri()))


def fuzz(queries: list[str]) -> list[dict]:
    """The page walked through ``queries`` by back/forward navigation (popstate), read after each one."""
    folder = scratch("harness-fuzz")
    page = _page_copy(folder)
    walker = f"""<pre id="harness"></pre><script>{COLLECT}
window.addEventListener("load", function () {{
  const rows = [];
  let thrown = null;  // an exception in the page's popstate handler reaches window.onerror, not the dispatcher
  window.addEventListener("error", function (event) {{ thrown = event.message + " " + (event.error && event.error.stack); }});
  {json.dumps(queries)}.forEach(function (query, index) {{
    let row;
    thrown = null;
    try {{
      history.replaceState(null, "", "?" + query + "&harness=" + index);  // the page ignores a key it has no input for
      if (new URLSearchParams(window.location.search).get("harness") !== String(index)) throw new Error("history throttled");
      window.dispatchEvent(new PopStateEvent("popstate"));
      row = thrown === null ? collect(document) : {{error: thrown}};
    }} catch (error) {{ row = {{error: String(error && error.stack || error)}}; }}
    delete row.figures; delete row.warnings;
    rows.push(row);
  }});
  document.getElementById("harness").textContent = JSON.stringify(rows);
}});
</script>"""
    page.write_text(page.read_text().replace("</body>", walker + "</body>"))
    return json.loads(_chromium(page.as_uri(), timeout=600))
