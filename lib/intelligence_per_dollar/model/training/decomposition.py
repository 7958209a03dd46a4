"""Where a GPU-count ratio between two accelerators comes from: swap the new accelerator's
attributes into the old one a group at a time and re-run the deadline search after each."""

from __future__ import annotations

import math
from dataclasses import replace

from intelligence_per_dollar.model.training.regimes import deadline
from intelligence_per_dollar.sources import hardware

__all__ = ["DECOMPOSITION_STEPS", "decompose_ratio_regime"]

#: Accelerator attributes swapped one group at a time by :func:`decompose_ratio_regime`, in order.
DECOMPOSITION_STEPS = (
    ("peak FLOP/s", ("fp4_dense_flop_per_s", "fp8_dense_flop_per_s", "bf16_dense_flop_per_s")),
    ("HBM bandwidth", ("hbm_bytes_per_s",)),
    ("memory capacity", ("hbm_bytes", "device_memory_bytes")),
    ("scale-up and scale-out links", ("scaleup_bytes_per_s_bidirectional", "scaleout_bytes_per_s",
                                      "scaleup_domain_gpus")),
)


def _swapped(base: hardware.Accelerator, donor: hardware.Accelerator, fields) -> hardware.Accelerator:
    return replace(base, **{f: getattr(donor, f) for f in fields})


def _decomposition_rows(run, a_old, a_new, old: str) -> list[dict]:
    """Swap ``a_new``'s attribute groups (:data:`DECOMPOSITION_STEPS`) into ``a_old`` one at a
    time, re-running ``run(accelerator) -> Deadline`` after each; each step's factor and its share
    of log(total ratio). The remainder (everything not swapped) is the last row."""
    base = run(a_old)
    rows = [{"step": f"{old} (baseline)", "gpus": base.gpus, "mfu": base.estimate.mfu,
             "ratio_to_old": 1.0, "factor": 1.0}]
    acc = a_old
    prev = base.gpus
    for name, fields in DECOMPOSITION_STEPS:
        acc = _swapped(acc, a_new, fields)
        d = run(acc)
        rows.append({"step": name, "gpus": d.gpus, "mfu": d.estimate.mfu, "ratio_to_old": d.gpus / base.gpus,
                     "factor": d.gpus / prev})
        prev = d.gpus
    d = run(a_new)
    rows.append({"step": "efficiency ceilings and the rest", "gpus": d.gpus, "mfu": d.estimate.mfu,
                 "ratio_to_old": d.gpus / base.gpus, "factor": d.gpus / prev})
    total = math.log(d.gpus / base.gpus) if d.gpus != base.gpus else float("nan")
    for r in rows:
        r["share_of_log"] = (math.log(r["factor"]) / total) if (r["factor"] != 1.0 and total == total) else 0.0
    return rows


def decompose_ratio_regime(model, new: str, old: str, precision: str = "fp4", *,
                           regime: str = "batch-limited", **kw) -> list[dict]:
    """Decompose the GPU-count ratio new/old in ``regime`` into the accelerator attributes that cause it.

    Starting from ``old``, the attribute groups of :data:`DECOMPOSITION_STEPS` are replaced by
    ``new``'s values one group at a time (cumulatively; the efficiency ceilings stay ``old``'s),
    and the memoised deadline search (:func:`~.regimes.deadline`, ``kw`` passed on) is re-run
    after each swap. Each row: ``step``, ``gpus`` after the swap, ``mfu``, ``ratio_to_old``
    (cumulative), ``factor`` (this step's multiplicative effect) and ``share_of_log`` (its share
    of log(final ratio), so the shares of all steps add to 1). The last row swaps in everything
    else (the accelerator itself, with its own efficiency ceilings), so its cumulative ratio is
    exactly the accelerator ratio.
    """
    a_old, a_new = hardware.get(old), hardware.get(new)

    def run(acc):
        d = deadline(model, acc, precision, regime=regime, **kw)
        if not d.feasible:
            raise ValueError(f"decompose_ratio_regime: {acc.id} (with swapped attributes) cannot meet the "
                             f"deadline ({regime}): {d.message}")
        return d

    rows = _decomposition_rows(run, a_old, a_new, old)
    for r in rows:
        r["regime"] = regime
    return rows
