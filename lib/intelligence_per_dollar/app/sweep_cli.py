"""``ipd sweep SPEC``: run a sweep (``data/sweeps/*.yml``) on a local Dask cluster or an existing one.

The table goes to the sweep cache (``build/.cache/sweeps``, ``IPD_SWEEP_CACHE``), where the book
build finds it, and with ``--out`` to a Parquet file. A cached identical sweep (same spec, same
library and data) is reused unless ``--no-cache``. ``--scheduler tcp://host:8786`` (or
``IPD_DASK_SCHEDULER``) runs the samples on that cluster; otherwise a local cluster of
``--workers`` processes (default: this machine's cores) runs them.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import sweeps

EXIT_OK, EXIT_INPUT = 0, 2


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``sweep`` to the ``ipd`` subcommands ``sub``."""
    s = sub.add_parser("sweep", help="run a sweep spec on Dask (local cluster or --scheduler)",
                       description=__doc__.split("\n\n", 1)[1].strip())
    s.add_argument("spec", metavar="SPEC", help="sweep spec: a YAML file, or a name in data/sweeps/ (gpu-ratio-10t)")
    s.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help=f"Dask scheduler address (default: ${sweeps.SCHEDULER_ENV}, else a local cluster); "
                        f"'{sweeps.SERIAL}' runs in this process")
    s.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes of the local cluster (default: this machine's cores)")
    s.add_argument("--samples", type=int, default=None, metavar="N", help="override the spec's sample size")
    s.add_argument("--seed", type=int, default=None, help="override the spec's seed")
    s.add_argument("--out", metavar="FILE.parquet", default=None, help="also write the table here")
    s.add_argument("--no-cache", action="store_true", help="compute even if an identical sweep is cached")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_sweep)
    return s


def _summary(table: pd.DataFrame, spec: sweeps.SweepSpec) -> pd.DataFrame:
    """p5/p50/p95 of every numeric output column (sample values, so an unbounded sample stays inf)."""
    num = table.drop(columns=[sweeps.SAMPLE, *spec.parameters]).select_dtypes("number")
    q = {c: np.nanquantile(num[c].to_numpy(float), [0.05, 0.5, 0.95], method="inverted_cdf")
         for c in num.columns if num[c].notna().any()}
    return pd.DataFrame(q, index=["p5", "p50", "p95"]).T


def cmd_sweep(args) -> int:
    try:
        spec = sweeps.load_spec(args.spec)
        if args.samples is not None or args.seed is not None:
            spec = spec.with_samples(args.samples or spec.samples, args.seed)
        path = sweeps.cache_path(spec)
        cached = path.is_file() and not args.no_cache
        t0 = time.perf_counter()
        table = sweeps.run(spec, scheduler=args.scheduler, workers=args.workers, progress=not args.quiet,
                           cache=not args.no_cache)
    except ValueError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return EXIT_INPUT
    wall = time.perf_counter() - t0
    if args.out:
        table.to_parquet(args.out, index=False)
    how = "from the cache" if cached else f"computed in {wall:.1f} s"
    print(f"{spec.name}: {len(table)} samples, {how}; table: {args.out or path}")
    print(_summary(table, spec).to_string(float_format=lambda v: f"{v:.4g}"))
    return EXIT_OK
