"""Chapter 1's hardware tables: like-for-like comparisons built from the catalogue (records in,
DataFrames out).

Per-accelerator figures come from :mod:`intelligence_per_dollar.model.peaks` (dense peaks, ridge
point, per watt); per-system totals multiply them by the GPUs of a system. Measured ceilings
(:mod:`intelligence_per_dollar.sources.measurements`) are set beside the datasheet peaks.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import efficiency, peaks
from intelligence_per_dollar.sources import ceilings as ceiling_data
from intelligence_per_dollar.sources import hardware

__all__ = ["comparison_table", "peaks_long", "rack_table", "roofline_curves", "reconcile_headlines",
           "provenance_table", "measured_vs_datasheet", "gemm_efficiency", "per_dollar_table", "dense_fp4_kernels",
           "dense_fp4_kernels_long"]

def comparison_table(ids: list[str], precision: str, baseline: str) -> pd.DataFrame:
    """Like-for-like per-GPU comparison at ``precision`` (dense), relative to ``baseline``.

    Columns: accelerator, year, dense_flop_per_s, native (False when the precision falls back to
    a wider one), headline_flop_per_s, headline_precision, headline_counts, headline_over_dense,
    hbm_bytes, hbm_bytes_per_s, ridge_flop_per_byte, flop_per_s_per_w, scaleup_bytes_per_s_one_way,
    scaleup_domain_gpus, power_w, and ``x_baseline`` ratios of dense FLOP/s, HBM bandwidth and
    FLOP/s per watt.
    """
    hardware.check_precision(precision)
    base = hardware.get(baseline)
    accs = [hardware.get(i) for i in ids]
    rows = []
    for a in accs:
        dense = peaks.dense_flop_per_s(a, precision, fallback=True)
        rows.append({
            "accelerator": a.id, "year": a.year,
            "dense_flop_per_s": dense, "native": a.supports(precision),
            "headline_flop_per_s": a.headline_flop_per_s, "headline_precision": a.headline_precision,
            "headline_counts": a.headline_counts, "headline_over_dense": peaks.headline_to_dense_ratio(a),
            "hbm_bytes": a.hbm_bytes, "hbm_bytes_per_s": a.hbm_bytes_per_s,
            "ridge_flop_per_byte": peaks.ridge_point_flop_per_byte(a, precision, fallback=True),
            "flop_per_s_per_w": peaks.flop_per_s_per_w(a, precision, fallback=True),
            "scaleup_bytes_per_s_one_way": (a.scaleup_bytes_per_s_one_way
                                            if a.scaleup_bytes_per_s_bidirectional else None),
            "scaleup_domain_gpus": a.scaleup_domain_gpus, "power_w": a.power_w,
        })
    df = pd.DataFrame(rows)
    df["dense_x_baseline"] = df["dense_flop_per_s"] / peaks.dense_flop_per_s(base, precision, fallback=True)
    df["hbm_bw_x_baseline"] = df["hbm_bytes_per_s"] / base.hbm_bytes_per_s
    df["per_w_x_baseline"] = df["flop_per_s_per_w"] / peaks.flop_per_s_per_w(base, precision, fallback=True)
    return df


def peaks_long(ids: list[str]) -> pd.DataFrame:
    """Every published peak per accelerator in long form: dense per precision and the headline.

    Columns: accelerator, precision, figure ('dense' or 'headline: <what it counts>'), flop_per_s.
    """
    rows = []
    for i in ids:
        a = hardware.get(i)
        for p in ("fp4", "fp8", "bf16"):
            if a.supports(p):
                rows.append({"accelerator": a.id, "precision": p, "figure": "dense",
                             "flop_per_s": peaks.dense_flop_per_s(a, p)})
        if a.headline_flop_per_s is not None:
            rows.append({"accelerator": a.id, "precision": a.headline_precision or "?",
                         "figure": "headline", "flop_per_s": a.headline_flop_per_s})
    return pd.DataFrame(rows)


def rack_table(ids: list[str], precision: str) -> pd.DataFrame:
    """Per-system totals: GPUs, dense FLOP/s at ``precision``, HBM, scale-up, power, per-watt."""
    hardware.check_precision(precision)
    rows = []
    for i in ids:
        s = hardware.get_system(i)
        a = hardware.get(s.accelerator)
        dense = peaks.dense_flop_per_s(a, precision, fallback=True) * s.gpus
        power = s.system_power_w
        rows.append({
            "system": s.id, "accelerator": a.id, "gpus": s.gpus, "cpus": s.cpus,
            "dense_flop_per_s": dense, "headline_fp4_flop_per_s": s.headline_fp4_flop_per_s,
            "headline_counts": s.headline_counts, "hbm_bytes": a.hbm_bytes * s.gpus,
            "hbm_bytes_per_s": a.hbm_bytes_per_s * s.gpus, "scaleup_domain_gpus": s.scaleup_domain_gpus,
            "system_power_w": power, "flop_per_s_per_w": dense / power if power else None,
            "power_kind": s.provenance["system_power_w"].kind if power else None,
        })
    return pd.DataFrame(rows)


def roofline_curves(ids: list[str], precision: str, intensities: np.ndarray | None = None) -> pd.DataFrame:
    """Attainable FLOP/s = min(peak, intensity x HBM B/s) (Williams et al. 2009, Eq. 1) per GPU.

    Columns: accelerator, intensity_flop_per_byte, flop_per_s (``intensities``: default 0.1 to 1e4).
    """
    x = np.logspace(-1, 4, 121) if intensities is None else np.asarray(intensities, dtype=float)
    frames = []
    for i in ids:
        a = hardware.get(i)
        peak = peaks.dense_flop_per_s(a, precision, fallback=True)
        frames.append(pd.DataFrame({"accelerator": a.id, "intensity_flop_per_byte": x,
                                    "flop_per_s": np.minimum(peak, x * a.hbm_bytes_per_s)}))
    return pd.concat(frames, ignore_index=True)


def reconcile_headlines(new: str, old: str, precision: str = "fp4") -> pd.DataFrame:
    """Set a vendor headline comparison beside the like-for-like (dense vs dense) one.

    Returns rows: 'headline vs headline' (what the seed compares), 'dense vs dense' (like for
    like), 'new headline vs old dense' and the factor that separates them.
    """
    a, b = hardware.get(new), hardware.get(old)
    rows = []
    if a.headline_flop_per_s and b.headline_flop_per_s:
        rows.append({"comparison": "headline vs headline", "new_flop_per_s": a.headline_flop_per_s,
                     "old_flop_per_s": b.headline_flop_per_s, "new_counts": a.headline_counts,
                     "old_counts": b.headline_counts})
    if a.headline_flop_per_s and b.supports(precision):
        rows.append({"comparison": "new headline vs old dense", "new_flop_per_s": a.headline_flop_per_s,
                     "old_flop_per_s": peaks.dense_flop_per_s(b, precision), "new_counts": a.headline_counts,
                     "old_counts": "dense"})
    if a.supports(precision) and b.supports(precision):
        rows.append({"comparison": "dense vs dense", "new_flop_per_s": peaks.dense_flop_per_s(a, precision),
                     "old_flop_per_s": peaks.dense_flop_per_s(b, precision), "new_counts": "dense",
                     "old_counts": "dense"})
    df = pd.DataFrame(rows)
    df["ratio"] = df["new_flop_per_s"] / df["old_flop_per_s"]
    df.insert(0, "new", a.id)
    df.insert(1, "old", b.id)
    return df


def provenance_table(ids: list[str]) -> pd.DataFrame:
    """Every value the book uses for ``ids``, with source, date, kind and note (plus alternatives)."""
    rows = []
    for i in ids:
        a = hardware.get(i)
        for fld, prov in a.provenance.items():
            rows.append({"accelerator": a.id, "field": fld, "value": getattr(a, fld), "used": True,
                         "kind": prov.kind, "source_url": prov.source_url, "date_read": prov.date_read,
                         "note": prov.note})
            for alt_v in a.alternatives.get(fld, ()):
                rows.append({"accelerator": a.id, "field": fld, "value": alt_v.value, "used": False,
                             "kind": alt_v.provenance.kind, "source_url": alt_v.provenance.source_url,
                             "date_read": alt_v.provenance.date_read, "note": alt_v.provenance.note})
    return pd.DataFrame(rows)


def measured_vs_datasheet(gemm: pd.DataFrame, hbm: pd.DataFrame, sustained_flop_per_s: float,
                          accelerator: str) -> pd.DataFrame:
    """Measured ceilings over datasheet peaks for one accelerator.

    ``gemm`` and ``hbm`` are :mod:`measurements` tables. Returns one row per measured quantity:
    what, measured, datasheet, ratio.
    """
    a = hardware.get(accelerator)
    rows = []
    for p, g in gemm.groupby("precision"):
        best = g.loc[g["flop_per_s"].idxmax()]
        rows.append({"what": f"best {p} GEMM ({int(best.m)}x{int(best.k)}x{int(best.n)})",
                     "measured": best.flop_per_s, "datasheet": peaks.dense_flop_per_s(a, p), "unit": "FLOP/s"})
    rows.append({"what": "sustained bf16 GEMM at the power cap", "measured": sustained_flop_per_s,
                 "datasheet": peaks.dense_flop_per_s(a, "bf16"), "unit": "FLOP/s"})
    best_bw = hbm.loc[hbm["bytes_per_s"].idxmax()]
    rows.append({"what": f"HBM {best_bw.op} ({best_bw.gib:g} GiB)", "measured": best_bw.bytes_per_s,
                 "datasheet": a.hbm_bytes_per_s, "unit": "B/s"})
    df = pd.DataFrame(rows)
    df["ratio"] = df["measured"] / df["datasheet"]
    return df


def gemm_efficiency(gemm: pd.DataFrame, accelerator: str) -> pd.DataFrame:
    """Per-shape measured FLOP/s over the datasheet dense peak, and HBM B/s over datasheet B/s."""
    a = hardware.get(accelerator)
    df = gemm.copy()
    df["peak_flop_per_s"] = [peaks.dense_flop_per_s(a, p) for p in df["precision"]]
    df["compute_efficiency"] = df["flop_per_s"] / df["peak_flop_per_s"]
    df["hbm_efficiency"] = df["bytes_per_s"] / a.hbm_bytes_per_s
    df["roofline_flop_per_s"] = (df["arithmetic_intensity_flop_per_byte"] * a.hbm_bytes_per_s).clip(
        upper=df["peak_flop_per_s"])
    df["of_roofline"] = df["flop_per_s"] / df["roofline_flop_per_s"]
    df["shape"] = [f"{m}x{k}x{n}" for m, k, n in zip(df.m, df.k, df.n)]
    return df


def per_dollar_table(ids: list[str], precision: str, system_price_usd: Mapping[str, tuple[float, float, float]]) -> pd.DataFrame:
    """Dense FLOP/s per dollar of system price, with the price's (low, central, high) range.

    ``system_price_usd`` maps system id -> (low, central, high) USD; systems without a price are
    left out (none priced: an empty table with the same columns). More FLOP/s per dollar at the *low* price is the
    *high* end of the range.
    """
    hardware.check_precision(precision)
    rows = []
    for i in ids:
        s = hardware.get_system(i)
        if s.id not in system_price_usd:
            continue
        lo, mid, hi = system_price_usd[s.id]
        if not 0 < lo <= mid <= hi:
            raise ValueError(f"system_price_usd[{s.id!r}]={(lo, mid, hi)!r} must satisfy 0 < low <= central <= high")
        dense = peaks.dense_flop_per_s(hardware.get(s.accelerator), precision, fallback=True) * s.gpus
        rows.append({"system": s.id, "price_usd": mid, "price_low_usd": lo, "price_high_usd": hi,
                     "dense_flop_per_s": dense, "flop_per_s_per_usd": dense / mid,
                     "flop_per_s_per_usd_low": dense / hi, "flop_per_s_per_usd_high": dense / lo})
    return pd.DataFrame(rows, columns=["system", "price_usd", "price_low_usd", "price_high_usd", "dense_flop_per_s",
                                       "flop_per_s_per_usd", "flop_per_s_per_usd_low", "flop_per_s_per_usd_high"])


#: Bytes per stored value of a block-scaled FP4 operand: 4 bits and one 8-bit scale per 16 values (NVFP4).
FP4_OPERAND_BYTES = 0.5625


def dense_fp4_kernels(accelerator: str = "B200") -> pd.DataFrame:
    """The published dense block-scaled FP4 GEMMs on B200 (``data/efficiency/dense_fp4_gemm_b200.csv``) against the
    model's GEMM time on ``accelerator``: kernel, m, n, k, shape, measured TFLOP/s, ``model_tflop_per_s`` (the serving
    model's FP4 terms, :func:`efficiency.dense_gemm_terms`) and ``max_roofline_tflop_per_s`` (the max of the two roofs
    with the 2 us the other GEMMs keep), each with its ``error`` (model / measured rate - 1)."""
    a = hardware.get(accelerator)
    c = efficiency.ceilings(a)
    norm, kernel_s = efficiency.dense_gemm_terms("fp4", c)
    peak = peaks.dense_flop_per_s(a, "fp4")
    rows = []
    for r in ceiling_data.dense_fp4_gemm_b200():
        m, n, k = r["m"], r["n"], r["k"]
        kw = dict(peak_flop_per_s=peak, hbm_bytes_per_s=a.hbm_bytes_per_s, ceil=c, precision="fp4",
                  operand_bytes=FP4_OPERAND_BYTES, output_bytes=r["output_bytes"])
        t_fit = float(efficiency.gemm_time_s(m, n, k, overlap_norm=norm, kernel_s=kernel_s, **kw))
        t_max = float(efficiency.gemm_time_s(m, n, k, **kw))
        flop = 2.0 * m * n * k
        rows.append({"kernel": r["kernel"], "m": int(m), "n": int(n), "k": int(k),
                     "shape": f"{int(m)}x{int(n)}x{int(k)}", "measured_tflop_per_s": r["tflop_per_s"],
                     "model_tflop_per_s": flop / t_fit / 1e12, "max_roofline_tflop_per_s": flop / t_max / 1e12})
    df = pd.DataFrame(rows)
    df["error"] = df["model_tflop_per_s"] / df["measured_tflop_per_s"] - 1.0
    df["max_roofline_error"] = df["max_roofline_tflop_per_s"] / df["measured_tflop_per_s"] - 1.0
    return df


def dense_fp4_kernels_long(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`dense_fp4_kernels` with one row per kernel and timing (``terms``: the serving model's FP4 terms, or the
    max roofline with 2 us), ``model_tflop_per_s`` and ``error`` of that timing: for a predicted-against-measured
    chart."""
    keep = ["kernel", "shape", "measured_tflop_per_s"]
    fit = df[keep + ["model_tflop_per_s", "error"]].assign(terms="model: p-norm + fixed time (fitted)")
    old = df[keep + ["max_roofline_tflop_per_s", "max_roofline_error"]].rename(
        columns={"max_roofline_tflop_per_s": "model_tflop_per_s", "max_roofline_error": "error"}).assign(
        terms="max roofline + 2 us (Hopper fit)")
    return pd.concat([fit, old], ignore_index=True)
