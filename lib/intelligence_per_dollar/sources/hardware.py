"""Accelerators and systems: the sourced catalogue, typed, plus like-for-like normalisation.

The catalogue lives in ``data/hardware/accelerators.csv`` and ``data/hardware/systems.csv`` in
long format (one row per value, each with source URL, date read, kind and note). Where sources
disagree the file keeps every row and marks the one the book uses (``used=true``); the others
stay visible as :attr:`Accelerator.alternatives`.

Conventions (SI throughout):

* ``*_dense_flop_per_s`` is the peak *without* 2:4 structured sparsity. Vendor headline figures
  are often sparse (2x dense) or, for Rubin, "Transformer Engine compute" (about 1.43x dense).
* ``scaleup_bytes_per_s_bidirectional`` is the NVLink bandwidth per GPU with both directions
  summed, as NVIDIA quotes it; collectives use the one-way half
  (:attr:`Accelerator.scaleup_bytes_per_s_one_way`).
* ``scaleout_bytes_per_s`` is one direction of the GPU's scale-out NIC.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from intelligence_per_dollar.sources import io

#: Precisions the book models, from narrowest to widest.
PRECISIONS = ("fp4", "fp8", "bf16", "tf32", "fp64")

#: Bytes per element for each precision (FP4 formats carry a per-block scale: NVFP4 stores one
#: FP8 scale per 16 values, i.e. 4.5 bits per value; MXFP4 one 8-bit scale per 32 -> 4.25 bits).
BYTES_PER_ELEMENT = MappingProxyType({"fp4": 4.5 / 8, "fp8": 1.0, "bf16": 2.0, "tf32": 4.0, "fp64": 8.0})

ACCELERATOR_IDS = ("A100-80GB", "H100-SXM", "H800", "H200", "B200", "GB200", "B300", "GB300",
                   "VR200", "Rubin-Ultra")
SYSTEM_IDS = ("HGX-H100", "HGX-H200", "GB200-NVL72", "GB300-NVL72", "Vera-Rubin-NVL72",
              "Rubin-Ultra-NVL576")

#: Other names people use, mapped to catalogue ids (lookups are case-insensitive too).
ALIASES = MappingProxyType({
    "A100": "A100-80GB", "H100": "H100-SXM", "Rubin": "VR200", "R200": "VR200",
    "VR-NVL72": "Vera-Rubin-NVL72", "VR200-NVL72": "Vera-Rubin-NVL72", "NVL72-VR": "Vera-Rubin-NVL72",
    "Rubin Ultra": "Rubin-Ultra", "RubinUltra": "Rubin-Ultra",
})


def _pos(v: float) -> bool:
    return v > 0


_ACC_NUMERIC = {
    "fp4_dense_flop_per_s": _pos, "fp8_dense_flop_per_s": _pos, "bf16_dense_flop_per_s": _pos,
    "tf32_dense_flop_per_s": _pos, "fp64_flop_per_s": _pos, "headline_flop_per_s": _pos,
    "hbm_bytes": _pos, "hbm_bytes_per_s": _pos, "scaleup_bytes_per_s_bidirectional": _pos,
    "scaleup_domain_gpus": lambda v: v >= 1 and v == int(v), "scaleout_bytes_per_s": _pos,
    "power_w": _pos, "year": lambda v: 2000 <= v <= 2100, "sm_count": lambda v: v >= 1,
}
_ACC_TEXT = ("headline_precision", "headline_counts", "memory_type", "scaleup_link")
_ACC_REQUIRED = ("hbm_bytes", "hbm_bytes_per_s", "scaleup_domain_gpus", "power_w", "year")

_SYS_NUMERIC = {
    "gpus": lambda v: v >= 1 and v == int(v), "cpus": lambda v: v >= 0,
    "scaleup_domain_gpus": lambda v: v >= 1, "system_power_w": _pos,
    "headline_fp4_flop_per_s": _pos, "nvlink_aggregate_bytes_per_s": _pos, "hbm_bytes": _pos,
    "lpddr_bytes": _pos, "year": lambda v: 2000 <= v <= 2100,
}
_SYS_TEXT = ("accelerator", "cpu_model", "headline_counts")
_SYS_REQUIRED = ("accelerator", "gpus", "scaleup_domain_gpus")


@dataclass(frozen=True)
class Accelerator:
    """One GPU package, with the value the book uses for each field and its provenance."""

    id: str
    year: int
    hbm_bytes: float
    hbm_bytes_per_s: float
    scaleup_domain_gpus: int
    power_w: float
    bf16_dense_flop_per_s: float | None = None
    scaleup_bytes_per_s_bidirectional: float | None = None
    fp4_dense_flop_per_s: float | None = None
    fp8_dense_flop_per_s: float | None = None
    tf32_dense_flop_per_s: float | None = None
    fp64_flop_per_s: float | None = None
    headline_flop_per_s: float | None = None
    headline_precision: str | None = None
    headline_counts: str | None = None
    scaleout_bytes_per_s: float | None = None
    memory_type: str | None = None
    scaleup_link: str | None = None
    sm_count: int | None = None
    provenance: Mapping[str, io.Provenance] = field(default_factory=dict, repr=False, compare=False)
    alternatives: Mapping[str, tuple[io.SourcedValue, ...]] = field(default_factory=dict, repr=False,
                                                                     compare=False)

    @property
    def scaleup_bytes_per_s_one_way(self) -> float:
        """NVLink bandwidth per GPU per direction: half the bidirectional figure.

        Raises ``ValueError`` when the catalogue has no figure (Rubin Ultra is unannounced).
        """
        if self.scaleup_bytes_per_s_bidirectional is None:
            raise ValueError(f"hardware {self.id!r} has no scale-up bandwidth in the catalogue "
                             f"(field scaleup_bytes_per_s_bidirectional)")
        return self.scaleup_bytes_per_s_bidirectional / 2.0

    def supports(self, precision: str) -> bool:
        """Whether the tensor cores run ``precision`` natively (has a dense peak for it)."""
        _check_precision(precision)
        return getattr(self, f"{precision}_dense_flop_per_s" if precision != "fp64" else "fp64_flop_per_s") is not None


@dataclass(frozen=True)
class System:
    """A rack or server: a number of accelerators joined by one scale-up (NVLink) domain."""

    id: str
    accelerator: str
    gpus: int
    scaleup_domain_gpus: int
    cpus: float | None = None
    cpu_model: str | None = None
    system_power_w: float | None = None
    headline_fp4_flop_per_s: float | None = None
    headline_counts: str | None = None
    nvlink_aggregate_bytes_per_s: float | None = None
    hbm_bytes: float | None = None
    lpddr_bytes: float | None = None
    year: int | None = None
    provenance: Mapping[str, io.Provenance] = field(default_factory=dict, repr=False, compare=False)


def _check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not known; allowed: {', '.join(PRECISIONS)}")


def _build(cls, ident, fields, required, path, int_fields=()):
    missing = [f for f in required if f not in fields]
    if missing:
        raise io.DataError(f"{path}: '{ident}' lacks required field(s) {', '.join(missing)}")
    kwargs = {}
    for name, values in fields.items():
        v = values[0].value
        kwargs[name] = int(v) if name in int_fields else v
    prov = MappingProxyType({k: vs[0].provenance for k, vs in fields.items()})
    extra = {"provenance": prov}
    if cls is Accelerator:
        extra["alternatives"] = MappingProxyType({k: tuple(vs[1:]) for k, vs in fields.items() if len(vs) > 1})
    return cls(id=ident, **kwargs, **extra)


@functools.lru_cache(maxsize=4)
def _catalogue(data_dir: str) -> tuple[Mapping[str, Accelerator], Mapping[str, System]]:
    acc_path = io.data_path("hardware", "accelerators.csv")
    raw = io.read_long_catalogue(acc_path, "accelerator", _ACC_NUMERIC, _ACC_TEXT)
    accs = {k: _build(Accelerator, k, f, _ACC_REQUIRED, acc_path,
                      int_fields=("year", "scaleup_domain_gpus", "sm_count")) for k, f in raw.items()}
    sys_path = io.data_path("hardware", "systems.csv")
    raw_s = io.read_long_catalogue(sys_path, "system", _SYS_NUMERIC, _SYS_TEXT)
    systems = {}
    for k, f in raw_s.items():
        s = _build(System, k, f, _SYS_REQUIRED, sys_path, int_fields=("gpus", "scaleup_domain_gpus", "year"))
        if s.accelerator not in accs:
            raise io.DataError(f"{sys_path}: system '{k}' names accelerator '{s.accelerator}', "
                               f"which is not in {acc_path}")
        systems[k] = s
    return MappingProxyType(accs), MappingProxyType(systems)


def catalogue() -> tuple[Mapping[str, Accelerator], Mapping[str, System]]:
    """Load (once) and return ``(accelerators, systems)`` keyed by id."""
    return _catalogue(str(io.data_dir()))


def accelerators() -> Mapping[str, Accelerator]:
    return catalogue()[0]


def systems() -> Mapping[str, System]:
    return catalogue()[1]


def _resolve(name: str, known: Mapping[str, object], what: str):
    if not isinstance(name, str):
        raise ValueError(f"{what}={name!r} must be a string; known: {', '.join(known)}")
    aliases_lower = {k.lower(): v for k, v in ALIASES.items()}
    key = ALIASES.get(name, aliases_lower.get(name.lower(), name))
    if key in known:
        return known[key]
    lower = {k.lower(): k for k in known}
    if key.lower() in lower:
        return known[lower[key.lower()]]
    raise ValueError(f"{what}={name!r} is not in the catalogue; known: {', '.join(known)}")


def get(name: str) -> Accelerator:
    """Look up an accelerator (or the accelerator of a system) by id or alias.

    Raises ``ValueError`` listing the known ids when the name is unknown.
    """
    accs, syss = catalogue()
    key = ALIASES.get(name, name) if isinstance(name, str) else name
    if isinstance(key, str) and key in syss:
        return accs[syss[key].accelerator]
    return _resolve(name, accs, "hardware")


def get_system(name: str) -> System:
    """Look up a system (rack or server) by id or alias; unknown names list the known ones."""
    return _resolve(name, systems(), "system")


def system_for(accelerator: str) -> System | None:
    """The catalogue's standard system for an accelerator (None if the catalogue has none)."""
    acc = get(accelerator)
    for s in systems().values():
        if s.accelerator == acc.id:
            return s
    return None


# ---------------------------------------------------------------------------------------------
# Normalisation: pure functions of records.
# ---------------------------------------------------------------------------------------------

def dense_flop_per_s(acc: Accelerator, precision: str, *, fallback: bool = False) -> float:
    """Dense peak FLOP/s of ``acc`` at ``precision``.

    With ``fallback=True`` a precision the tensor cores lack runs at the next wider one that they
    have (FP4 on Hopper runs as FP8: weights can be stored in 4 bits but the math is FP8). Without
    it, an unsupported precision raises ``ValueError``.
    """
    _check_precision(precision)
    order = PRECISIONS[PRECISIONS.index(precision):] if fallback else (precision,)
    for p in order:
        v = getattr(acc, "fp64_flop_per_s" if p == "fp64" else f"{p}_dense_flop_per_s")
        if v is not None:
            return float(v)
    have = [p for p in PRECISIONS if acc.supports(p)]
    raise ValueError(f"precision={precision!r} has no dense peak for hardware {acc.id!r}; "
                     f"it supports: {', '.join(have)}")


def headline_to_dense_ratio(acc: Accelerator) -> float | None:
    """The vendor headline figure over the dense peak of the same precision (2.0 = 2:4 sparse)."""
    if acc.headline_flop_per_s is None or acc.headline_precision is None:
        return None
    p = acc.headline_precision.lower()
    if p not in PRECISIONS or not acc.supports(p):
        return None
    return acc.headline_flop_per_s / dense_flop_per_s(acc, p)


def ridge_point_flop_per_byte(acc: Accelerator, precision: str) -> float:
    """Roofline ridge point (Williams, Waterman & Patterson 2009, Eq. 1): peak FLOP/s / HBM B/s.

    A kernel whose arithmetic intensity (FLOP per byte moved from HBM) is below this number is
    memory-bound on ``acc``.
    """
    return dense_flop_per_s(acc, precision) / acc.hbm_bytes_per_s


def flop_per_s_per_w(acc: Accelerator, precision: str) -> float:
    """Dense peak FLOP/s per watt of GPU power (FLOP per joule at the power limit)."""
    return dense_flop_per_s(acc, precision) / acc.power_w


def flop_per_s_per_usd(acc: Accelerator, precision: str, price_usd: float) -> float:
    """Dense peak FLOP/s per dollar of purchase price ``price_usd`` (per GPU)."""
    if not (isinstance(price_usd, (int, float)) and math.isfinite(price_usd) and price_usd > 0):
        raise ValueError(f"price_usd={price_usd!r} must be a positive finite number")
    return dense_flop_per_s(acc, precision) / price_usd


def system_totals(system: System) -> dict[str, float | None]:
    """Per-system totals from the per-GPU figures (dense FLOP/s per precision, HBM, bandwidth)."""
    acc = get(system.accelerator)
    out: dict[str, float | None] = {"gpus": float(system.gpus)}
    for p in ("fp4", "fp8", "bf16"):
        out[f"{p}_dense_flop_per_s"] = dense_flop_per_s(acc, p) * system.gpus if acc.supports(p) else None
    out["hbm_bytes"] = acc.hbm_bytes * system.gpus
    out["hbm_bytes_per_s"] = acc.hbm_bytes_per_s * system.gpus
    out["scaleup_bytes_per_s_bidirectional"] = (acc.scaleup_bytes_per_s_bidirectional * system.gpus
                                                if acc.scaleup_bytes_per_s_bidirectional else None)
    out["gpu_power_w"] = acc.power_w * system.gpus
    return out


# ---------------------------------------------------------------------------------------------
# Tables for the chapter (pure: records in, DataFrames out).
# ---------------------------------------------------------------------------------------------

def comparison_table(ids: list[str], precision: str, baseline: str) -> "pd.DataFrame":
    """Like-for-like per-GPU comparison at ``precision`` (dense), relative to ``baseline``.

    Columns: accelerator, year, dense_flop_per_s, native (False when the precision falls back to
    a wider one), headline_flop_per_s, headline_precision, headline_counts, headline_over_dense,
    hbm_bytes, hbm_bytes_per_s, ridge_flop_per_byte, flop_per_s_per_w, scaleup_bytes_per_s_one_way,
    scaleup_domain_gpus, power_w, and ``x_baseline`` ratios of dense FLOP/s, HBM bandwidth and
    FLOP/s per watt.
    """
    import pandas as pd

    _check_precision(precision)
    base = get(baseline)
    accs = [get(i) for i in ids]
    rows = []
    for a in accs:
        dense = dense_flop_per_s(a, precision, fallback=True)
        rows.append({
            "accelerator": a.id, "year": a.year,
            "dense_flop_per_s": dense, "native": a.supports(precision),
            "headline_flop_per_s": a.headline_flop_per_s, "headline_precision": a.headline_precision,
            "headline_counts": a.headline_counts, "headline_over_dense": headline_to_dense_ratio(a),
            "hbm_bytes": a.hbm_bytes, "hbm_bytes_per_s": a.hbm_bytes_per_s,
            "ridge_flop_per_byte": dense / a.hbm_bytes_per_s,
            "flop_per_s_per_w": dense / a.power_w,
            "scaleup_bytes_per_s_one_way": (a.scaleup_bytes_per_s_one_way
                                            if a.scaleup_bytes_per_s_bidirectional else None),
            "scaleup_domain_gpus": a.scaleup_domain_gpus, "power_w": a.power_w,
        })
    df = pd.DataFrame(rows)
    b_dense = dense_flop_per_s(base, precision, fallback=True)
    df["dense_x_baseline"] = df["dense_flop_per_s"] / b_dense
    df["hbm_bw_x_baseline"] = df["hbm_bytes_per_s"] / base.hbm_bytes_per_s
    df["per_w_x_baseline"] = df["flop_per_s_per_w"] / (b_dense / base.power_w)
    return df


def peaks_long(ids: list[str]) -> "pd.DataFrame":
    """Every published peak per accelerator in long form: dense per precision and the headline.

    Columns: accelerator, precision, figure ('dense' or 'headline: <what it counts>'), flop_per_s.
    """
    import pandas as pd

    rows = []
    for i in ids:
        a = get(i)
        for p in ("fp4", "fp8", "bf16"):
            if a.supports(p):
                rows.append({"accelerator": a.id, "precision": p, "figure": "dense",
                             "flop_per_s": dense_flop_per_s(a, p)})
        if a.headline_flop_per_s is not None:
            rows.append({"accelerator": a.id, "precision": a.headline_precision or "?",
                         "figure": "headline", "flop_per_s": a.headline_flop_per_s})
    return pd.DataFrame(rows)


def rack_table(ids: list[str], precision: str) -> "pd.DataFrame":
    """Per-system totals: GPUs, dense FLOP/s at ``precision``, HBM, scale-up, power, per-watt."""
    import pandas as pd

    _check_precision(precision)
    rows = []
    for i in ids:
        s = get_system(i)
        a = get(s.accelerator)
        dense = dense_flop_per_s(a, precision, fallback=True) * s.gpus
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


def roofline_curves(ids: list[str], precision: str, intensities: "np.ndarray | None" = None) -> "pd.DataFrame":
    """Attainable FLOP/s = min(peak, intensity x HBM B/s) (Williams et al. 2009, Eq. 1) per GPU."""
    import numpy as np
    import pandas as pd

    x = np.logspace(-1, 4, 121) if intensities is None else np.asarray(intensities, dtype=float)
    frames = []
    for i in ids:
        a = get(i)
        peak = dense_flop_per_s(a, precision, fallback=True)
        frames.append(pd.DataFrame({"system": a.id, "intensity_flop_per_byte": x,
                                    "flop_per_s": np.minimum(peak, x * a.hbm_bytes_per_s)}))
    return pd.concat(frames, ignore_index=True)


def reconcile_headlines(new: str, old: str, precision: str = "fp4") -> "pd.DataFrame":
    """Set a vendor headline comparison beside the like-for-like (dense vs dense) one.

    Returns rows: 'headline vs headline' (what the seed compares), 'dense vs dense' (like for
    like), 'new headline vs old dense' and the factor that separates them.
    """
    import pandas as pd

    a, b = get(new), get(old)
    rows = []
    if a.headline_flop_per_s and b.headline_flop_per_s:
        rows.append({"comparison": "headline vs headline", "new_flop_per_s": a.headline_flop_per_s,
                     "old_flop_per_s": b.headline_flop_per_s, "new_counts": a.headline_counts,
                     "old_counts": b.headline_counts})
    if a.headline_flop_per_s and b.supports(precision):
        rows.append({"comparison": "new headline vs old dense", "new_flop_per_s": a.headline_flop_per_s,
                     "old_flop_per_s": dense_flop_per_s(b, precision), "new_counts": a.headline_counts,
                     "old_counts": "dense"})
    if a.supports(precision) and b.supports(precision):
        rows.append({"comparison": "dense vs dense", "new_flop_per_s": dense_flop_per_s(a, precision),
                     "old_flop_per_s": dense_flop_per_s(b, precision), "new_counts": "dense",
                     "old_counts": "dense"})
    df = pd.DataFrame(rows)
    df["ratio"] = df["new_flop_per_s"] / df["old_flop_per_s"]
    df.insert(0, "new", a.id)
    df.insert(1, "old", b.id)
    return df


def provenance_table(ids: list[str]) -> "pd.DataFrame":
    """Every value the book uses for ``ids``, with source, date, kind and note (plus alternatives)."""
    import pandas as pd

    rows = []
    for i in ids:
        a = get(i)
        for fld, prov in a.provenance.items():
            rows.append({"accelerator": a.id, "field": fld, "value": getattr(a, fld), "used": True,
                         "kind": prov.kind, "source_url": prov.source_url, "date_read": prov.date_read,
                         "note": prov.note})
            for alt_v in a.alternatives.get(fld, ()):
                rows.append({"accelerator": a.id, "field": fld, "value": alt_v.value, "used": False,
                             "kind": alt_v.provenance.kind, "source_url": alt_v.provenance.source_url,
                             "date_read": alt_v.provenance.date_read, "note": alt_v.provenance.note})
    return pd.DataFrame(rows)


def measured_vs_datasheet(gemm: "pd.DataFrame", hbm: "pd.DataFrame", sustained_flop_per_s: float,
                          accelerator: str) -> "pd.DataFrame":
    """Measured ceilings over datasheet peaks for one accelerator.

    ``gemm`` and ``hbm`` are :mod:`measurements` tables. Returns one row per measured quantity:
    what, measured, datasheet, ratio.
    """
    import pandas as pd

    a = get(accelerator)
    rows = []
    for p, g in gemm.groupby("precision"):
        best = g.loc[g["flop_per_s"].idxmax()]
        rows.append({"what": f"best {p} GEMM ({int(best.m)}x{int(best.k)}x{int(best.n)})",
                     "measured": best.flop_per_s, "datasheet": dense_flop_per_s(a, p), "unit": "FLOP/s"})
    rows.append({"what": "sustained bf16 GEMM at the power cap", "measured": sustained_flop_per_s,
                 "datasheet": dense_flop_per_s(a, "bf16"), "unit": "FLOP/s"})
    best_bw = hbm.loc[hbm["bytes_per_s"].idxmax()]
    rows.append({"what": f"HBM {best_bw.op} ({best_bw.gib:g} GiB)", "measured": best_bw.bytes_per_s,
                 "datasheet": a.hbm_bytes_per_s, "unit": "B/s"})
    df = pd.DataFrame(rows)
    df["ratio"] = df["measured"] / df["datasheet"]
    return df


def gemm_efficiency(gemm: "pd.DataFrame", accelerator: str) -> "pd.DataFrame":
    """Per-shape measured FLOP/s over the datasheet dense peak, and HBM B/s over datasheet B/s."""
    a = get(accelerator)
    df = gemm.copy()
    df["peak_flop_per_s"] = [dense_flop_per_s(a, p) for p in df["precision"]]
    df["compute_efficiency"] = df["flop_per_s"] / df["peak_flop_per_s"]
    df["hbm_efficiency"] = df["bytes_per_s"] / a.hbm_bytes_per_s
    df["roofline_flop_per_s"] = (df["arithmetic_intensity_flop_per_byte"] * a.hbm_bytes_per_s).clip(
        upper=df["peak_flop_per_s"])
    df["of_roofline"] = df["flop_per_s"] / df["roofline_flop_per_s"]
    df["shape"] = [f"{m}x{k}x{n}" for m, k, n in zip(df.m, df.k, df.n)]
    return df


def per_dollar_table(ids: list[str], precision: str, system_price_usd: "Mapping[str, tuple[float, float, float]]") -> "pd.DataFrame":
    """Dense FLOP/s per dollar of system price, with the price's (low, central, high) range.

    ``system_price_usd`` maps system id -> (low, central, high) USD; systems without a price are
    left out. More FLOP/s per dollar at the *low* price is the *high* end of the range.
    """
    import pandas as pd

    _check_precision(precision)
    rows = []
    for i in ids:
        s = get_system(i)
        if s.id not in system_price_usd:
            continue
        lo, mid, hi = system_price_usd[s.id]
        if not 0 < lo <= mid <= hi:
            raise ValueError(f"system_price_usd[{s.id!r}]={(lo, mid, hi)!r} must satisfy 0 < low <= central <= high")
        dense = dense_flop_per_s(get(s.accelerator), precision, fallback=True) * s.gpus
        rows.append({"system": s.id, "price_usd": mid, "price_low_usd": lo, "price_high_usd": hi,
                     "dense_flop_per_s": dense, "flop_per_s_per_usd": dense / mid,
                     "flop_per_s_per_usd_low": dense / hi, "flop_per_s_per_usd_high": dense / lo})
    return pd.DataFrame(rows)
