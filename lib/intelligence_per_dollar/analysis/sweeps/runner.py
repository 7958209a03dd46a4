"""Running a sweep: its function once per sample, serially or on a Dask cluster, into one table.

:func:`run` reuses a cached table when an identical sweep was run before (:mod:`.cache`).
Otherwise it calls the function on every sample: in this process (``scheduler="serial"``), on a
``distributed.LocalCluster`` started on the machine's cores (the default), or on an existing
cluster (``scheduler="tcp://host:8786"``, or the ``IPD_DASK_SCHEDULER`` environment variable, or
a ``distributed.Client``). Every path gives the same table: the functions are deterministic and
the rows are put back in sample order.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Mapping, Sequence

import dask
import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.sweeps import cache as sweep_cache
from intelligence_per_dollar.analysis.sweeps.sampling import draw
from intelligence_per_dollar.analysis.sweeps.spec import SweepSpec, resolve_function

#: Environment variable naming the Dask scheduler to run sweeps on (else a local cluster).
SCHEDULER_ENV = "IPD_DASK_SCHEDULER"
SERIAL = "serial"
#: Dask settings for the local cluster's workers. Distributed sets MALLOC_TRIM_THRESHOLD_=65536 in
#: every worker by default; setting it at all stops glibc from raising its mmap threshold, so each
#: NumPy temporary above 128 KiB of the layout search is mmap'd and unmapped again, and the workers
#: spent most of their time in the kernel (measured: a 128-sample sweep took 500 s on 2 workers
#: instead of the ~110 s its serial CPU time predicts). None unsets it.
LOCAL_WORKER_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def default_workers() -> int:
    """Worker processes of the local cluster: the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _scalar(v) -> bool:
    return v is None or isinstance(v, (bool, int, float, str, np.integer, np.floating, np.bool_))


def call(fn: Callable, kwargs: Mapping[str, Any]) -> dict:
    """``fn(**kwargs)``, checked to return a flat mapping of scalars (one table row)."""
    out = fn(**kwargs)
    if not isinstance(out, Mapping) or not all(isinstance(k, str) and _scalar(v) for k, v in out.items()):
        raise ValueError(f"sweep function {getattr(fn, '__qualname__', fn)!r} returned {out!r}; expected a "
                         f"mapping of str -> number, str, bool or None")
    return dict(out)


def _plain(v):
    """NumPy scalars and objects as plain Python values (what a function gets from YAML)."""
    return v.item() if isinstance(v, np.generic) else v


def _calls(spec: SweepSpec, samples: pd.DataFrame) -> list[dict]:
    names = list(spec.parameters)
    return [dict(spec.fixed) | {k: _plain(v) for k, v in zip(names, row)}
            for row in samples[names].itertuples(index=False, name=None)]


def _bar(progress: bool, total: int, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not progress, unit="sample")


def run_serial(fn: Callable, calls: Sequence[Mapping], *, progress: bool = False, desc: str = "sweep") -> list[dict]:
    """Every call in this process, in order."""
    out = []
    with _bar(progress, len(calls), desc) as bar:
        for kw in calls:
            out.append(call(fn, kw))
            bar.update(1)
    return out


def _client(scheduler, workers: int | None):
    """``(client, owned)``: a client of ``scheduler`` (address or Client) or of a new local cluster."""
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        return scheduler, False
    if scheduler:
        return Client(scheduler), True
    n = workers or default_workers()
    with dask.config.set(LOCAL_WORKER_CONFIG):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.ERROR)
    return Client(cluster), True


def run_dask(fn: Callable, calls: Sequence[Mapping], *, scheduler=None, workers: int | None = None,
             progress: bool = False, desc: str = "sweep") -> list[dict]:
    """Every call as one Dask task (results in call order). ``scheduler``: an address, a
    ``distributed.Client``, or None for a local cluster of ``workers`` processes."""
    from distributed import as_completed

    client, owned = _client(scheduler, workers)
    try:
        futures = client.map(call, [fn] * len(calls), list(calls), pure=False)
        with _bar(progress, len(calls), desc) as bar:
            for _ in as_completed(futures):
                bar.update(1)
        return client.gather(futures)
    finally:
        if owned:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()


def compute(spec: SweepSpec, *, scheduler=None, workers: int | None = None, progress: bool = False) -> pd.DataFrame:
    """The sweep's table, computed (no cache): samples, then the function's outputs per row.
    ``table.attrs`` says how: ``wall_s``, ``scheduler``, ``workers``."""
    fn = resolve_function(spec.function)
    t0 = time.perf_counter()
    samples = draw(spec)
    calls = _calls(spec, samples)
    scheduler = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV) or None
    if scheduler == SERIAL:
        rows = run_serial(fn, calls, progress=progress, desc=spec.name)
    else:
        rows = run_dask(fn, calls, scheduler=scheduler, workers=workers, progress=progress, desc=spec.name)
    outputs = pd.DataFrame(rows)
    clash = sorted(set(outputs.columns) & set(samples.columns))
    if clash:
        raise ValueError(f"sweep {spec.name}: function outputs {clash} clash with parameter names")
    table = pd.concat([samples, outputs], axis=1)
    # how the table was made (kept in the Parquet file's metadata; never part of the comparison)
    local = scheduler is None
    table.attrs.update({"wall_s": time.perf_counter() - t0,
                        "scheduler": "local cluster" if local else str(scheduler),
                        "workers": (workers or default_workers()) if local else (1 if scheduler == SERIAL else None)})
    return table


def run(spec: SweepSpec, *, scheduler=None, workers: int | None = None, progress: bool = False,
        cache: bool = True, cache_dir=None) -> pd.DataFrame:
    """The sweep's table: from the cache if an identical sweep was run, else computed
    (:func:`compute`) and stored; a second process asking for the same sweep meanwhile waits for
    it (:func:`.cache.computing`). ``scheduler``: ``"serial"``, a Dask address or ``Client``, or
    None (``IPD_DASK_SCHEDULER`` if set, else a local cluster of ``workers`` processes)."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"parameter workers={workers!r} is not allowed; allowed: an integer >= 1")
    if not cache:
        return compute(spec, scheduler=scheduler, workers=workers, progress=progress)
    hit = sweep_cache.cached(spec, cache_dir)
    if hit is not None:
        return hit
    with sweep_cache.computing(spec, cache_dir) as mine:
        if not mine:
            return sweep_cache.cached(spec, cache_dir)
        table = compute(spec, scheduler=scheduler, workers=workers, progress=progress)
        sweep_cache.store(spec, table, cache_dir)
    return table

