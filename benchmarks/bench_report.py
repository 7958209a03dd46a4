"""Time the report build: each chapter's papermill execution and the book build, and the total.

Run twice in a row to see a warm build (the first run pays for cold imports and disk caches).
Prints figures; asserts nothing.
"""

import tempfile
import time
from pathlib import Path

from intelligence_per_dollar.app import build

with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    timings = build.build_report(Path(tmp) / "html", executed_out=None, log=lambda s: None)
    total = time.perf_counter() - t0
for t in timings:
    print(f"{t.chapter:28s} {t.seconds:6.1f} s")
print(f"{'total':28s} {total:6.1f} s  (target: warm build under 60 s on 2 cores)")
