"""Joint uncertainty of chapter 2's GPU ratio: how many Vera Rubin GPUs per GB200 GPU train the
10T MoE on 100T tokens in 30 days, with the deciding assumptions sampled together.

The sweep (``data/sweeps/gpu-ratio-10t.yml``) draws, per sample, the active parameters, the
share and precision of the layers an NVFP4 recipe keeps out of FP4, the efficiency ceilings of
the unmeasured chip (VR200), the sizing regime and global batch, the software stack and the MoE
load imbalance, and runs the full layout search on both accelerators (:func:`sample`). The model's
validated error on measured cross-accelerator ratios (:mod:`.derived`) multiplies the modelled
ratio. :func:`summarise` reduces the table to the ratio's distribution, its drivers (PRCC,
:mod:`.sensitivity`) and the region where the claim holds, judged by the ledger's own rule
(:func:`intelligence_per_dollar.analysis.claims.verdicts.meets_claim`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.claims.verdicts import Verdict, claim_bar, decide, meets_claim
from intelligence_per_dollar.analysis.sweeps.runner import run
from intelligence_per_dollar.analysis.sweeps.sensitivity import encode, rank_sensitivity, region
from intelligence_per_dollar.analysis.sweeps.spec import (SweepSpec, assumption_record, load_spec, read_spec_dict,
                                                          spec_from_dict)
from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model import training as tr
from intelligence_per_dollar.sources import workloads
from intelligence_per_dollar.sources.assumptions import Assumption

#: The sweep's spec in data/sweeps/.
SPEC = "gpu-ratio-10t"
#: The rule of a "one-quarter the GPUs" claim stated as candidate / reference GPUs.
RULE = "at_most"
#: Global batches are whole multiples of this many sequences (the book's low/central/high, 8,192,
#: 20,480 and 32,768 sequences, all are): real runs pick batches that split evenly over their
#: data-parallel ranks, and a sampled count such as 27,863 sequences (a prime) would force absurd layouts.
BATCH_QUANTUM_SEQS = 1024
#: Readable names of the sampled inputs (charts and prose).
LABELS = {"active_params": "active parameters", "kept_layer_fraction": "share of layers kept out of FP4",
          "kept_precision": "precision of the kept layers", "ceiling_scale": "VR200 efficiency ceilings",
          "regime": "sizing regime", "global_batch_tokens": "global batch", "stack": "software stack",
          "moe_load_factor": "MoE load imbalance", "model_error": "model error (validated)"}


def batch_quantum_tokens(seq_len: int, global_batch_tokens: float) -> int:
    """``global_batch_tokens`` rounded to a whole multiple of :data:`BATCH_QUANTUM_SEQS` sequences
    of ``seq_len`` (at least one multiple)."""
    quantum = BATCH_QUANTUM_SEQS * int(seq_len)
    return tr.batch_tokens(seq_len, max(1, round(global_batch_tokens / quantum)) * quantum)


def _side(d: tr.Deadline, prefix: str) -> dict:
    e = d.estimate
    return {f"gpus_{prefix}": d.gpus, f"racks_{prefix}": d.racks, f"gpus_in_use_{prefix}": e.gpus if e else None,
            f"mfu_{prefix}": e.mfu if e else None, f"days_{prefix}": d.days_needed}


def sample(*, workload: str, active_params: float, kept_layer_fraction: float, kept_precision: str,
           ceiling_scale: float, regime: str, global_batch_tokens: float, stack: str, moe_load_factor: float,
           model_error: float, total_params: float | None = None, tokens: float | None = None,
           precision: str | None = None) -> dict:
    """One sample: the deadline search of ``workload`` on its reference and candidate accelerators
    under these assumptions. ``ceiling_scale`` applies to the candidate only (the chip no one has
    measured). ``total_params``, ``tokens`` and ``precision`` replace the workload's (a
    scaled-down run of the same sweep, another precision).

    Returns GPUs, racks, GPUs in use, MFU and days per side, ``ratio_model`` (candidate /
    reference GPUs) and ``ratio`` = ``ratio_model * model_error``. A side that cannot meet the
    deadline with any number of racks needs unboundedly many GPUs: the ratio is +inf when the
    candidate cannot (the claim fails, whatever the reference does) and 0 when only the reference
    cannot (the candidate needs a vanishing share of its GPUs), so the ratio orders every sample
    by how far it is from the claim."""
    w = workloads.training(workload)
    if stack not in tr.STACKS:
        raise ValueError(f"parameter stack={stack!r} is not allowed; allowed: {', '.join(tr.STACKS)}")
    model = architecture.from_total_active(total_params or w.total_params, active_params)
    base = replace(tr.STACKS[stack], fp4_kept_precision=kept_precision, fp4_kept_layer_fraction=kept_layer_fraction,
                   moe_load_factor=moe_load_factor)
    kw = dict(tokens=tokens or w.tokens, days=w.days, seq_len=w.seq_len, regime=regime,
              global_batch_tokens=batch_quantum_tokens(w.seq_len, global_batch_tokens))
    precision = precision or w.precision
    ref = tr.deadline(model, w.reference_accelerator, precision, stack=base, **kw)
    cand = tr.deadline(model, w.candidate_accelerator, precision, stack=replace(base, ceiling_scale=ceiling_scale),
                       **kw)
    if not cand.feasible:
        r = math.inf
    elif not ref.feasible:
        r = 0.0
    else:
        r = cand.gpus / ref.gpus
    return {**_side(ref, "reference"), **_side(cand, "candidate"), "ratio_model": r, "ratio": r * model_error}


def spec(samples: int | None = None, *, seed: int | None = None, active_params: Assumption | None = None,
         precision: str | None = None) -> SweepSpec:
    """The GPU-ratio sweep of ``data/sweeps/gpu-ratio-10t.yml``. ``samples``/``seed`` change its
    size; ``active_params`` replaces the active-parameter range where it differs from the data's
    (a ledger override; a fixed number has low = central = high); ``precision`` replaces the
    workload's where it differs. Unchanged, the spec (and its cache entry) is the book's."""
    d, origin = read_spec_dict(SPEC)
    w = workloads.training(d["fixed"]["workload"])
    if precision is not None and precision != w.precision:
        d["fixed"]["precision"] = precision
    data = assumption_record(d["parameters"]["active_params"].get("assumption", ""))
    if active_params is not None and (data is None or (active_params.low, active_params.central, active_params.high)
                                      != (data.low, data.central, data.high)):
        prov = active_params.provenance
        d["parameters"]["active_params"] = {
            "distribution": "pert", "low": active_params.low, "central": active_params.central,
            "high": active_params.high, "unit": active_params.unit, "source_url": prov.source_url,
            "date_read": prov.date_read, "kind": prov.kind, "note": prov.note}
    s = spec_from_dict(d, origin)
    return s if samples is None and seed is None else s.with_samples(samples or s.samples, seed)


def table(s: SweepSpec | None = None, *, scheduler=None, workers: int | None = None, progress: bool = False,
          cache: bool = True) -> pd.DataFrame:
    """The sweep's table (:func:`.runner.run`: cached, else computed on a local Dask cluster)."""
    return run(s or load_spec(SPEC), scheduler=scheduler, workers=workers, progress=progress, cache=cache)


@dataclass(frozen=True)
class RatioUncertainty:
    """What the sweep says about the GPU ratio (candidate / reference GPUs; +inf where the
    candidate cannot meet the deadline, 0 where only the reference cannot, :func:`sample`)."""

    samples: int
    candidate_infeasible: int       # samples where the candidate cannot meet the deadline at any size
    reference_infeasible: int       # samples where only the reference cannot
    p5: float                       # the ratio with the model's validated error
    p50: float
    p95: float
    model_p5: float                 # the modelled ratio alone (no model error)
    model_p50: float
    model_p95: float
    by_regime: Mapping[str, tuple[float, float, float]]   # regime -> (p5, p50, p95) of ratio
    claimed_ratio: float
    tolerance: float
    bar: float                      # the largest ratio that reproduces the claim
    share_meeting: float            # fraction of samples with ratio <= bar
    share_meeting_model: float      # the same for the modelled ratio alone
    drivers: pd.DataFrame           # parameter, label, spearman, prcc, abs_prcc (largest first)
    region: pd.DataFrame            # :func:`sensitivity.region` of the samples that meet the claim

    def top(self, n: int = 3) -> list[str]:
        """Labels of the ``n`` strongest drivers."""
        return list(self.drivers["label"].head(n))

    @property
    def interval(self) -> tuple[float, float, float]:
        return (self.p5, self.p50, self.p95)


def quantiles(values) -> tuple[float, float, float]:
    """(p5, p50, p95) as sample values (the inverted empirical CDF, Hyndman and Fan 1996 definition
    1): +inf and 0 samples stay what they are instead of being interpolated into NaN."""
    q = np.quantile(np.asarray(values, float), [0.05, 0.5, 0.95], method="inverted_cdf")
    return float(q[0]), float(q[1]), float(q[2])


def summarise(tab: pd.DataFrame, s: SweepSpec, claimed_ratio: float, tolerance: float) -> RatioUncertainty:
    """:class:`RatioUncertainty` of a sweep table; "meets the claim" is :func:`meets_claim` (``at_most``)."""
    ok = tab[~tab["ratio"].astype(float).isna()]
    if ok.empty:
        raise ValueError(f"sweep {s.name}: no sample has a ratio")
    meets = ok["ratio"].map(lambda v: meets_claim(float(v), claimed_ratio, tolerance, RULE))
    meets_model = ok["ratio_model"].map(lambda v: meets_claim(float(v), claimed_ratio, tolerance, RULE))
    drivers = rank_sensitivity(encode(ok, s), ok["ratio"].astype(float))
    drivers.insert(1, "label", [LABELS.get(p, p) for p in drivers["parameter"]])
    return RatioUncertainty(
        samples=len(ok), candidate_infeasible=int(np.isinf(ok["ratio_model"].astype(float)).sum()),
        reference_infeasible=int((ok["ratio_model"].astype(float) == 0).sum()),
        **dict(zip(("p5", "p50", "p95"), quantiles(ok["ratio"]))),
        **dict(zip(("model_p5", "model_p50", "model_p95"), quantiles(ok["ratio_model"]))),
        by_regime={g: quantiles(ok[ok["regime"] == g]["ratio"]) for g in tr.REGIMES if (ok["regime"] == g).any()},
        claimed_ratio=float(claimed_ratio), tolerance=float(tolerance), bar=claim_bar(claimed_ratio, tolerance, RULE),
        share_meeting=float(meets.mean()), share_meeting_model=float(meets_model.mean()), drivers=drivers,
        region=region(ok, s, meets))


def verdict(u: RatioUncertainty) -> Verdict:
    """The claims ledger's verdict on "approximately one-quarter" from the sweep's interval
    (:func:`decide`, ``at_most``; the ledger states the inverse claim ``at_least`` and gets the
    same verdict, :func:`claim_bar`)."""
    return decide(RULE, u.claimed_ratio, u.p5, u.p50, u.p95, u.tolerance, condition=condition(u))


def _fmt(v) -> str:
    return f"{v / 1e12:.2g}T" if abs(v) >= 1e10 else f"{v:.3g}"


def conditions(u: RatioUncertainty, top: int = 3) -> list[str]:
    """What would have to be true, for the ``top`` drivers: among the samples that meet the claim,
    a choice's most over-represented value (its share there and overall) or a number's median
    (there and overall)."""
    out = []
    for name in u.drivers["parameter"].head(top):
        rows = u.region[u.region["parameter"] == name]
        label = LABELS.get(name, name)
        if rows["value"].notna().any():
            r = rows.loc[(rows["share"] - rows["share_all"]).idxmax()]
            out.append(f"{label} {r['value']} ({r['share']:.0%} of them, {r['share_all']:.0%} of all samples)")
        else:
            r = rows.iloc[0]
            out.append(f"{label} median {_fmt(r['p50'])} (all samples {_fmt(r['p50_all'])})")
    return out


def condition(u: RatioUncertainty) -> str:
    """One sentence for the ledger: how many joint samples meet the claim, and where they sit."""
    if u.share_meeting == 0:
        return f"no joint sample reaches {u.bar:.3g}"
    return (f"the assumptions sit where {u.share_meeting:.0%} of the joint samples do: "
            + "; ".join(conditions(u)))
