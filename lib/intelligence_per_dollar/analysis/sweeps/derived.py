"""Distributions a sweep spec takes from the book's own data rather than from a typed range
(``derived: <provider>`` in a spec, :mod:`.spec`).

* ``cross_generation_error`` -- the model's validated error on a GPU ratio between two
  accelerator generations: every pair of measured runs in ``data/runs/training_runs.csv`` that
  differ only in the accelerator (same model, precision, GPUs, batch, stack and unit; each keeps
  the parallel layout its source tuned for that chip) gives ``e = (predicted new / predicted old) / (measured new / measured old)``. A GPU count is
  the token rate over a per-GPU throughput, so the true GPU ratio is the predicted one times
  ``e``. The sweep draws ``e`` log-normally with median 1 and ``sigma`` the root mean square of
  ``ln e`` over the pairs (bias and spread together; with a handful of pairs no bias correction
  is attempted).
* ``ceiling_scale:<accelerator>`` -- the accelerator's efficiency-ceiling scale, low/central/high
  (:func:`intelligence_per_dollar.model.training.ceiling_scale_range`, from
  ``data/efficiency/ceilings.csv``).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training as tr

PROVIDERS = ("cross_generation_error", "ceiling_scale")
#: Fields of a validation case that must agree for two cases to form a cross-generation pair.
PAIR_FIELDS = ("model", "precision", "gpus", "seq_len", "global_batch_seqs", "stack", "unit", "flop_convention")


def cross_generation_pairs(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per pair of validation cases that differ only in the accelerator: ``old``, ``new``
    (case ids, ``old`` first in catalogue order of the runs file), ``accelerator_old``,
    ``accelerator_new``, ``precision``, ``predicted_ratio`` and ``measured_ratio`` (new over old
    throughput), and ``error_factor`` ``e`` (module docstring). ``table`` defaults to
    :func:`validation.training_table`."""
    t = (validation.training_table() if table is None else table).set_index("case")
    groups: dict[str, list[dict]] = {}
    for case in validation.runs():
        key = json.dumps({k: case[k] for k in PAIR_FIELDS}, sort_keys=True, default=repr)
        groups.setdefault(key, []).append(case)
    rows = []
    for cases in groups.values():
        for i, old in enumerate(cases):
            for new in cases[i + 1:]:
                if old["accelerator"] == new["accelerator"] or old["unit"] == "iteration_s":
                    continue
                pred = t.loc[new["id"], "predicted"] / t.loc[old["id"], "predicted"]
                if not np.isfinite(pred):          # a case the model refuses (validation.training_table)
                    continue
                meas = new["measured"] / old["measured"]
                rows.append({"old": old["id"], "new": new["id"], "accelerator_old": old["accelerator"],
                             "accelerator_new": new["accelerator"], "precision": old["precision"],
                             "predicted_ratio": float(pred), "measured_ratio": float(meas),
                             "error_factor": float(pred / meas)})
    return pd.DataFrame(rows, columns=["old", "new", "accelerator_old", "accelerator_new", "precision",
                                       "predicted_ratio", "measured_ratio", "error_factor"])


def cross_generation_sigma(pairs: pd.DataFrame) -> float:
    """Root mean square of ``ln(error_factor)`` over :func:`cross_generation_pairs`."""
    if pairs.empty:
        raise ValueError("parameter pairs is empty: the runs file has no cross-generation pair to derive "
                         "the model's error from")
    return float(math.sqrt(np.mean(np.log(pairs["error_factor"].to_numpy(float)) ** 2)))


def distribution(ref: str, where: str) -> dict:
    """The spec fields (distribution and its numbers) of provider ``ref`` (``name`` or ``name:arg``)."""
    name, _, arg = str(ref).partition(":")
    if name == "cross_generation_error" and not arg:
        return {"distribution": "lognormal", "median": 1.0, "sigma": cross_generation_sigma(cross_generation_pairs()),
                "unit": "factor"}
    if name == "ceiling_scale" and arg:
        r = tr.ceiling_scale_range(arg)
        return {"distribution": "pert", "low": r["low"], "central": r["central"], "high": r["high"], "unit": "factor"}
    raise ValueError(f"{where}={ref!r} is not allowed; allowed: cross_generation_error, ceiling_scale:<accelerator>")
