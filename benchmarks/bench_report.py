"""Time the report build: each chapter's papermill execution and the book build, and the total;
then the timings the chapters record of themselves (e.g. chapter 2's explore-panel compute, target
under 20 ms).

Run twice in a row to see a warm build (the first run pays for cold imports and disk caches).
Prints figures; asserts nothing.
"""

import tempfile
import time
from pathlib import Path

from intelligence_per_dollar.app import build
from intelligence_per_dollar.app import scenario
from intelligence_per_dollar.views.notebook import read_records

with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    timings = build.build_report(Path(tmp) / "html", executed_out=Path(tmp) / "executed", log=lambda s: None)
    total = time.perf_counter() - t0
    recorded = {ch: scenario.flatten(read_records(Path(tmp) / "executed" / f"{ch}.ipynb")) for ch in build.CHAPTERS}
for t in timings:
    print(f"{t.chapter:28s} {t.seconds:6.1f} s")
print(f"{'total':28s} {total:6.1f} s  (target: warm build under 60 s on 2 cores)")
for ch, flat in recorded.items():
    for key, value in flat.items():
        if scenario.VOLATILE.search(key):
            print(f"{ch:28s} {key} = {value:.2f}")
