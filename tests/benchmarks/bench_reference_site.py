"""How long each page of the reference site takes to load and lay out in headless Chromium at 1280 × 800 (issue 31).

    python tests/benchmarks/bench_reference_site.py [--site OUT/reference] [--runs 3]

Without ``--site`` it builds the reference stage first (``build --only reference``) and prints that stage's seconds.
Prints, per page, its bytes and the median milliseconds from navigation start to its load event with the page laid
out (tests/site_probe.py), and whether it scrolls sideways. Target (issue 31): every page under 1 s; exits 1 if one
is over it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from site_probe import load  # noqa: E402

TARGET_MS = 1000


def built_site(folder: Path) -> Path:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "llm_formulas.render.cli.main", "build", "--only", "reference", "--out",
                    str(folder)], check=True, capture_output=True)
    print(f"build --only reference: {time.perf_counter() - started:.1f} s")
    return folder / "reference"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-site-") as scratch:
        work = Path(scratch)
        site = options.site or built_site(work / "out")
        slow = 0
        for page in sorted(path.name for path in site.glob("*.html")):
            seen = [load(site, page, work) for _ in range(options.runs)]
            ms = statistics.median(s["loaded"] for s in seen)
            wide = seen[0]["width"]["scroll"] > seen[0]["width"]["client"]
            slow += ms > TARGET_MS
            print(f"{page:22} {(site / page).stat().st_size / 1024:8.0f} KiB {ms:7.0f} ms{'  SCROLLS SIDEWAYS' if wide else ''}")
        print(f"target: every page under {TARGET_MS} ms; {slow} over")
    return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
