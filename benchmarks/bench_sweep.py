"""Benchmark of the GPU-ratio sweep (data/sweeps/gpu-ratio-10t.yml): CPU seconds per sample
(serial), the cold sweep on a local Dask cluster, and the warm (cached) read.

Run: ``python benchmarks/bench_sweep.py [SAMPLES] [WORKERS]`` (default: 16 samples of the shipped
spec on 2 workers; the full spec's cold time is about samples x CPU-seconds per sample / workers,
plus the cluster's start). Caches go to a temporary folder, so the book's cache is untouched.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

from intelligence_per_dollar.analysis import sweeps  # noqa: E402
from intelligence_per_dollar.analysis.sweeps import gpu_ratio  # noqa: E402


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    full = gpu_ratio.spec()
    spec = full.with_samples(samples)
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    sweeps.compute(spec.with_samples(min(samples, 4)), scheduler=sweeps.SERIAL)
    serial_n = min(samples, 4)
    cpu_per_sample = (time.process_time() - cpu0) / serial_n
    print(f"serial: {serial_n} samples, {cpu_per_sample:.2f} CPU-s and "
          f"{(time.perf_counter() - t0) / serial_n:.2f} wall-s per sample")
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        cold = sweeps.run(spec, workers=workers, cache_dir=tmp)
        t_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        sweeps.run(spec, cache_dir=tmp)
        t_warm = time.perf_counter() - t0
    print(f"local cluster ({workers} workers): {samples} samples cold in {t_cold:.1f} s "
          f"({cold.attrs['wall_s']:.1f} s computing); warm read {t_warm * 1e3:.0f} ms")
    est = full.samples * cpu_per_sample / workers
    print(f"shipped spec: {full.samples} samples, estimated cold {est:.0f} s on {workers} idle cores "
          f"(+ cluster start)")


if __name__ == "__main__":
    main()
