"""Global sensitivity of a sweep's output to its jointly sampled inputs, and the region of the
inputs where a condition on the output holds.

* :func:`rank_sensitivity` -- Spearman rank correlation and partial rank correlation (PRCC) of
  each input with the output (Marino, Hogue, Ray and Kirschner 2008, "A methodology for
  performing global uncertainty and sensitivity analysis in systems biology", J. Theor. Biol.
  254, section 2.4: rank-transform inputs and output, regress out the other inputs, correlate the
  residuals). PRCC measures how strongly the output moves, monotonically, with one input when
  the others are held fixed; with independent samples it ranks the drivers of the spread.
* :func:`region` -- what would have to be true: each input's distribution among the samples whose
  output meets a condition (e.g. the GPU ratio at or below the claim's bar) next to its
  distribution over all samples.

Categorical inputs (a ``choice`` parameter) enter as the index of their value in the spec's
``values`` list, so their correlation says whether later values raise or lower the output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.sweeps.spec import SweepSpec


def encode(table: pd.DataFrame, spec: SweepSpec) -> pd.DataFrame:
    """The sweep's inputs as numbers: numeric parameters as they are, choices as value indices."""
    out = {}
    for name, p in spec.parameters.items():
        if p.distribution == "choice" or p.distribution == "grid" and not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in p.values):
            index = {repr(v): i for i, v in enumerate(p.values)}
            out[name] = [float(index[repr(v)]) for v in table[name]]
        else:
            out[name] = table[name].astype(float).to_numpy()
    return pd.DataFrame(out, index=table.index)


def _ranks(x: pd.DataFrame | pd.Series):
    return x.rank(method="average").to_numpy(float)


def _residual(target: np.ndarray, others: np.ndarray) -> np.ndarray:
    design = np.column_stack([np.ones(len(target)), others])
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    return target - design @ coef


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    sa, sb = a.std(), b.std()
    if sa == 0 or sb == 0:
        return float("nan")
    return float(np.mean((a - a.mean()) * (b - b.mean())) / (sa * sb))


def rank_sensitivity(inputs: pd.DataFrame, output: pd.Series) -> pd.DataFrame:
    """One row per input: ``spearman`` and ``prcc`` with ``output``, and ``abs_prcc``; sorted
    by ``abs_prcc``, largest first. Rows whose output is NaN are left out (+-inf rank last or
    first, as the ordering they stand for); an input that does not vary gets NaN."""
    ok = ~np.isnan(output.to_numpy(float))
    if ok.sum() < inputs.shape[1] + 3:
        raise ValueError(f"parameter output has {int(ok.sum())} values that are not NaN; rank sensitivity of "
                         f"{inputs.shape[1]} inputs needs at least {inputs.shape[1] + 3}")
    x, y = inputs[ok], output[ok]
    rx, ry = _ranks(x), _ranks(y)
    varies = rx.std(axis=0) > 0
    rows = []
    for j, name in enumerate(x.columns):
        if not varies[j]:
            rows.append({"parameter": name, "spearman": float("nan"), "prcc": float("nan")})
            continue
        others = rx[:, [k for k in range(rx.shape[1]) if k != j and varies[k]]]
        rows.append({"parameter": name, "spearman": _corr(rx[:, j], ry),
                     "prcc": _corr(_residual(rx[:, j], others), _residual(ry, others))})
    df = pd.DataFrame(rows)
    df["abs_prcc"] = df["prcc"].abs()
    return df.sort_values("abs_prcc", ascending=False, kind="stable", na_position="last").reset_index(drop=True)


def region(table: pd.DataFrame, spec: SweepSpec, mask: pd.Series) -> pd.DataFrame:
    """Each input among the samples where ``mask`` holds versus all samples.

    Numeric inputs: one row with ``p5``, ``p50``, ``p95`` over the holding samples and
    ``p50_all`` over all. Choice inputs: one row per value with its ``share`` among the holding
    samples and ``share_all`` over all. Columns: parameter, value, share, share_all, p5, p50, p95,
    p50_all; ``holding`` (how many samples hold) is the same on every row.
    """
    mask = mask.astype(bool)
    held = table[mask]
    rows = []
    for name, p in spec.parameters.items():
        if p.distribution in ("choice", "grid"):
            for v in p.values:
                rows.append({"parameter": name, "value": v,
                             "share": float((held[name] == v).mean()) if len(held) else float("nan"),
                             "share_all": float((table[name] == v).mean())})
        else:
            q = np.percentile(held[name].astype(float), [5, 50, 95]) if len(held) else [float("nan")] * 3
            rows.append({"parameter": name, "p5": float(q[0]), "p50": float(q[1]), "p95": float(q[2]),
                         "p50_all": float(table[name].astype(float).median())})
    cols = ["parameter", "value", "share", "share_all", "p5", "p50", "p95", "p50_all"]
    return pd.DataFrame(rows, columns=cols).assign(holding=int(mask.sum()))
