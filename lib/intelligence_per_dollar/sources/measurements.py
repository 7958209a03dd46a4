"""Measured ceilings (``data/measurements/<run>/``): typed, validated, SI-unit tables.

Each run folder holds CSVs written by its ``measure.py``; ``data/measurements/index.csv`` gives
each file's provenance. Loaders here convert to SI units (FLOP/s, bytes/s, s, W) and validate
every value, raising :class:`~intelligence_per_dollar.sources.io.DataError` that names file, row and
column.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from intelligence_per_dollar.sources import io

DEFAULT_RUN = "h200-2026-11-29"


@dataclass(frozen=True)
class MeasuredFile:
    run: str
    file: str
    accelerator: str
    what: str
    provenance: io.Provenance


@functools.lru_cache(maxsize=2)
def _index(data_dir: str) -> tuple[MeasuredFile, ...]:
    path = io.data_path("measurements", "index.csv")
    out = []
    for row, rec in io.read_rows(path, ["run", "file", "accelerator", "what", "source_url", "date_read", "kind", "note"]):
        prov = io.check_provenance(path, row, rec)
        if prov.kind != "measured":
            raise io.DataError(f"{path}, row {row}, column 'kind': measurements must be kind 'measured', got '{prov.kind}'")
        out.append(MeasuredFile(rec["run"], rec["file"], rec["accelerator"], rec["what"], prov))
    return tuple(out)


def index() -> tuple[MeasuredFile, ...]:
    """All measured files with their provenance."""
    return _index(str(io.data_dir()))


def _file(run: str, name: str) -> tuple[Path, MeasuredFile]:
    for m in index():
        if m.run == run and m.file == name:
            return io.data_path("measurements", run, name), m
    runs = sorted({m.run for m in index()})
    raise ValueError(f"run={run!r} has no measured file {name!r}; known runs: {', '.join(runs)}")


def accelerator_of(run: str = DEFAULT_RUN) -> str:
    """The catalogue id of the accelerator a run measured."""
    accs = {m.accelerator for m in index() if m.run == run}
    if not accs:
        raise ValueError(f"run={run!r} is not in data/measurements/index.csv")
    return accs.pop()


def _table(run: str, name: str, columns: dict[str, str]) -> pd.DataFrame:
    """Read a measured CSV; ``columns`` maps column -> 'str' | 'int' | 'pos' (positive float)."""
    path, _ = _file(run, name)
    rows = io.read_rows(path, list(columns))
    recs = []
    for row, rec in rows:
        out = {}
        for col, typ in columns.items():
            if typ == "str":
                if not rec[col]:
                    raise io.DataError(f"{path}, row {row}, column '{col}': empty value")
                out[col] = rec[col]
            else:
                v = io.parse_float(path, row, col, rec[col], positive=True, allow_zero=False)
                out[col] = int(v) if typ == "int" else v
        recs.append(out)
    if not recs:
        raise io.DataError(f"{path}: no data rows")
    return pd.DataFrame.from_records(recs)


_DTYPES = {"bf16": "bf16", "fp8_e4m3": "fp8"}


@functools.lru_cache(maxsize=4)
def _gemm(run: str, data_dir: str) -> pd.DataFrame:
    df = _table(run, "gemm.csv", {"dtype": "str", "m": "int", "n": "int", "k": "int", "seconds": "pos"})
    path, _ = _file(run, "gemm.csv")
    bad = sorted(set(df["dtype"]) - set(_DTYPES))
    if bad:
        raise io.DataError(f"{path}, column 'dtype': unknown dtype(s) {bad}; allowed: {sorted(_DTYPES)}")
    df["precision"] = df["dtype"].map(_DTYPES)
    df["flop"] = 2.0 * df["m"] * df["n"] * df["k"]
    df["flop_per_s"] = df["flop"] / df["seconds"]
    in_bytes = df["precision"].map({"bf16": 2.0, "fp8": 1.0})
    # operands in the compute precision, output written in BF16 (as measure.py does)
    df["bytes"] = in_bytes * (df["m"] * df["k"] + df["k"] * df["n"]) + 2.0 * df["m"] * df["n"]
    df["bytes_per_s"] = df["bytes"] / df["seconds"]
    df["arithmetic_intensity_flop_per_byte"] = df["flop"] / df["bytes"]
    return df[["precision", "m", "n", "k", "seconds", "flop", "bytes", "flop_per_s", "bytes_per_s",
               "arithmetic_intensity_flop_per_byte"]]


def gemm(run: str = DEFAULT_RUN) -> pd.DataFrame:
    """Matrix-product timings: precision, m, n, k, seconds, flop, bytes, flop_per_s, bytes_per_s."""
    return _gemm(run, str(io.data_dir())).copy()


def hbm(run: str = DEFAULT_RUN) -> pd.DataFrame:
    """HBM bandwidth tests: op, bytes_touched, seconds, bytes_per_s."""
    df = _table(run, "membw.csv", {"op": "str", "gib": "pos", "seconds": "pos", "tb_per_s": "pos"})
    df["bytes_per_s"] = df["tb_per_s"] * 1e12
    return df[["op", "gib", "seconds", "bytes_per_s"]]


def attention(run: str = DEFAULT_RUN) -> pd.DataFrame:
    """Causal flash-attention timings: seq, batch, heads, head_dim, fwd/fwdbwd seconds and FLOP/s."""
    df = _table(run, "attention.csv", {"seq": "int", "batch": "int", "heads": "int", "head_dim": "int",
                                        "fwd_s": "pos", "fwd_tflops": "pos", "fwdbwd_s": "pos",
                                        "fwdbwd_tflops": "pos"})
    df["fwd_flop_per_s"] = df.pop("fwd_tflops") * 1e12
    df["fwdbwd_flop_per_s"] = df.pop("fwdbwd_tflops") * 1e12
    return df


def power(run: str = DEFAULT_RUN) -> pd.DataFrame:
    """Power and clock samples during the sustained-GEMM test."""
    df = _table(run, "power.csv", {"timestamp": "str", "power_w": "pos", "power_limit_w": "pos",
                                    "sm_mhz": "pos", "mem_mhz": "pos", "temp_c": "pos", "util_pct": "pos"})
    df["t_s"] = (pd.to_datetime(df["timestamp"], format="%Y/%m/%d %H:%M:%S.%f")
                 - pd.to_datetime(df["timestamp"].iloc[0], format="%Y/%m/%d %H:%M:%S.%f")).dt.total_seconds()
    return df


def power_summary(run: str = DEFAULT_RUN) -> dict[str, float]:
    """Sustained BF16 FLOP/s and duration of the power test."""
    path, _ = _file(run, "power_summary.json")
    try:
        raw = json.loads(path.read_text())
        out = {"sustained_bf16_flop_per_s": float(raw["sustained_bf16_tflops"]) * 1e12,
               "seconds": float(raw["seconds"]), "matmuls": float(raw["matmuls"])}
    except (KeyError, ValueError, TypeError) as ex:
        raise io.DataError(f"{path}: expected keys sustained_bf16_tflops, seconds, matmuls ({ex})") from None
    if out["sustained_bf16_flop_per_s"] <= 0:
        raise io.DataError(f"{path}, key 'sustained_bf16_tflops': must be positive")
    return out
