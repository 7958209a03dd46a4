"""Sweep results on disk, for reuse: one Parquet file per (spec, model/data version).

The key (:func:`cache_key`) hashes the resolved spec (function, method, sample size, seed, fixed
inputs and every parameter's distribution, after its assumption or derived values are read) and
:func:`intelligence_per_dollar.sources.io.code_fingerprint` (the library's source and ``data/``),
so a changed input, model or data file never returns a stale table; the book build, the claims
ledger and ``ipd sweep`` all find the same file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from intelligence_per_dollar.analysis.sweeps.spec import SweepSpec
from intelligence_per_dollar.sources import io


def cache_dir() -> Path:
    """Where sweep tables are kept (``IPD_SWEEP_CACHE`` overrides ``build/.cache/sweeps``)."""
    env = os.environ.get("IPD_SWEEP_CACHE")
    return Path(env) if env else io.repo_root() / "build" / ".cache" / "sweeps"


def cache_key(spec: SweepSpec) -> str:
    """Identifies one sweep's result: the resolved spec and the library + data fingerprint."""
    h = hashlib.sha256()
    h.update(spec.canonical().encode())
    h.update(io.code_fingerprint().encode())
    return h.hexdigest()[:24]


def cache_path(spec: SweepSpec, directory: Path | str | None = None) -> Path:
    """The file that holds (or will hold) ``spec``'s table."""
    return Path(directory or cache_dir()) / f"{spec.name}-{cache_key(spec)}.parquet"


def cached(spec: SweepSpec, directory: Path | str | None = None) -> pd.DataFrame | None:
    """``spec``'s table if an identical sweep was stored, else None (never computes)."""
    p = cache_path(spec, directory)
    return pd.read_parquet(p) if p.is_file() else None


def store(spec: SweepSpec, table: pd.DataFrame, directory: Path | str | None = None) -> Path:
    """Write ``table`` as ``spec``'s result (atomically: a reader never sees half a file)."""
    p = cache_path(spec, directory)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".sweep-", suffix=".parquet", dir=p.parent)
    os.close(fd)
    try:
        table.to_parquet(tmp, index=False)
        os.chmod(tmp, 0o644)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return p


#: How long a process waits for another that computes the same sweep, and how often it looks.
LOCK_WAIT_S, LOCK_POLL_S = 3600.0, 2.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def computing(spec: SweepSpec, directory: Path | str | None = None):
    """Hold ``spec``'s lock while computing it, so that a second process asking for the same
    sweep (two chapters executing at once) waits for the table instead of computing it again.
    Yields True if this process should compute, False if another one stored the table meanwhile.
    A lock left by a process that died is taken over."""
    p = cache_path(spec, directory)
    lock = p.with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            break
        except FileExistsError:
            if p.is_file():
                yield False
                return
            try:
                holder = int(lock.read_text() or 0)
            except (OSError, ValueError):
                holder = 0
            if (holder and not _alive(holder)) or time.monotonic() > deadline:
                lock.unlink(missing_ok=True)
                continue
            time.sleep(LOCK_POLL_S)
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        yield not p.is_file()
    finally:
        lock.unlink(missing_ok=True)
