"""The claims ledger: one row per claim of ``data/claims/claims.csv``, its estimate computed by the
chapters' functions, its interval, and the verdict of :func:`verdicts.decide`.

Change an assumption (``ledger(assumption_overrides={"pue": 1.5})``) and the ledger changes with
it. A claim id without an estimator here is *cannot be checked* ("no estimator for this claim id").
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.claims.definitions import COLUMNS, VERDICTS, Claim, all_assumptions, claims
from intelligence_per_dollar.analysis.claims.row import Context, Row
from intelligence_per_dollar.analysis.claims.rows_economics import inference_row, swe_rate_row, swe_value_row
from intelligence_per_dollar.analysis.claims.rows_hardware import headline_row, rack_row
from intelligence_per_dollar.analysis.claims.rows_post_training import vera_cpu_row, weight_sync_row
from intelligence_per_dollar.analysis.claims.rows_training import break_even_row, training_row
from intelligence_per_dollar.analysis.claims.verdicts import Verdict

#: The estimator of each claim id.
ROWS: Mapping[str, Callable[[Claim, Context], Row]] = {
    "train_quarter_gpus": training_row,
    "rubin_50_vs_20_pf": lambda c, ctx: headline_row(c, ctx, "VR200", "GB200"),
    "rubin_ultra_100_pf": lambda c, ctx: headline_row(c, ctx, "Rubin-Ultra", "VR200"),
    "rack_72_gpus_36_cpus": rack_row,
    "weight_sync_2s": weight_sync_row,
    "vera_cpu_30pct": vera_cpu_row,
    "swe_bench_717": swe_rate_row,
    "swe_fix_value": swe_value_row,
    "inference_10x_cost": inference_row,
    "no_rack_price": break_even_row,
}

_PRECISIONS = ("bf16", "fp8", "fp4")


def _row(c: Claim, ctx: Context) -> Row:
    fn = ROWS.get(c.id)
    if fn is None:
        return Row(c, detail="no estimator for this claim id",
                   verdict=Verdict("cannot be checked", "no estimator for this claim id"))
    return fn(c, ctx)


def ledger(assumption_overrides: Mapping[str, object] | None = None, *, n: int = 20_000, seed: int = 2026,
           training_precision: str = "fp4", training_range: bool = True, only=None) -> pd.DataFrame:
    """The claims ledger: one row per claim of ``data/claims/claims.csv`` (columns :data:`COLUMNS`).

    ``assumption_overrides``: ``{name: value or (low, central, high)}`` replacing assumptions of
    :func:`all_assumptions` (a number fixes that input). ``n``/``seed``: Monte Carlo samples and
    seed (same seed, same ledger). ``training_range``: judge the training claim on the joint
    interval of chapter 2's GPU-ratio sweep (:mod:`intelligence_per_dollar.analysis.sweeps.gpu_ratio`,
    cached; minutes when cold), else on the central case alone. ``only``: ids to compute.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 100:
        raise ValueError(f"parameter n={n!r} is not allowed; expected an integer >= 100")
    if training_precision not in _PRECISIONS:
        raise ValueError(f"parameter training_precision={training_precision!r} is not allowed; "
                         f"allowed: {', '.join(_PRECISIONS)}")
    ctx = Context(all_assumptions(assumption_overrides), int(n), int(seed), training_precision, bool(training_range))
    cl = claims()
    ids = list(cl) if only is None else list(only)
    unknown = [i for i in ids if i not in cl]
    if unknown:
        raise ValueError(f"parameter only has unknown claim id(s) {unknown}; known: {', '.join(cl)}")
    return pd.DataFrame([_row(cl[cid], ctx).as_dict() for cid in ids], columns=list(COLUMNS))


def relative_to_claim(df: pd.DataFrame) -> pd.DataFrame:
    """The book's interval over the claimed value, for rows that have both (1 = exactly as claimed).

    Rows judged ``unverifiable``, without a finite interval, or whose claim is zero are left out.
    Columns: id, label (the claim's first words), p5, p50, p95, verdict.
    """
    ok = (df["rule"] != "unverifiable") & np.isfinite(df["p5"].astype(float)) \
        & np.isfinite(df["p95"].astype(float)) & (df["claimed"].astype(float) != 0)
    d = df[ok]
    out = pd.DataFrame({"id": d["id"], "label": d["id"].str.replace("_", " "),
                        "p5": d["p5"] / d["claimed"], "p50": d["p50"] / d["claimed"], "p95": d["p95"] / d["claimed"],
                        "verdict": d["verdict"]})
    return out.reset_index(drop=True)


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included)."""
    return {v: int((df["verdict"] == v).sum()) for v in VERDICTS}


def ledger_view(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger as the book shows it: source and section as links, conditions in the verdict.

    Links are relative to the chapter pages (``nbs/``), so the opening chapter can link to them.
    """
    return ledger.assign(
        link=[f'<a href="{lnk.removeprefix("nbs/")}">{sec or "chapter"}</a>'
              for lnk, sec in zip(ledger["link"], ledger["section"])],
        source=[f'<a href="{u}">{u.split("/")[2] if u.startswith("http") else u}</a>' for u in ledger["source"]],
        verdict=[v + (f" {c}" if v == "supported only if" else f" (it would need {c})" if v == "not reproduced" and c
                      else "") for v, c in zip(ledger["verdict"], ledger["condition"])],
    )[["claim", "source", "estimate", "verdict", "deciding_assumption", "link"]]
