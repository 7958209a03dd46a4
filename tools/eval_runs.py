"""Print the model's error on a file of measured runs, per case and per group.

    .venv/bin/python tools/eval_runs.py training data/runs/training_runs.csv
    .venv/bin/python tools/eval_runs.py serving  data/runs/inference_runs.csv [--user]

or any file with the same columns (e.g. runs held out from the model while it is developed: judge
a change on them first, then merge them into data/runs/; see data/runs/HELD_OUT.md).

``--user`` predicts serving cases as a user would call the model: ``inference.frontier`` with no
layout and the default KV precision, taking the maximum output tokens/s per GPU (aggregated
max-load cases only). A case the model refuses (ValueError) is listed as refused.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import validation, validation_inference
from intelligence_per_dollar.sources import runs


def table(kind: str, path: str, user: bool = False) -> pd.DataFrame:
    recs = []
    cases = runs.training_runs(tuple(validation.STACKS), path) if kind == "training" else runs.inference_runs(path)
    for case in cases:
        rec = {"case": case["id"], "group": case["group"], "measured": case["measured"]}
        try:
            if kind == "training":
                pred, est = validation.predict(case)
                rec["layout"] = str(dict(est.parallelism))
            elif user:
                if not validation_inference.is_max_load(case):
                    continue
                pred = validation_inference.predict_as_user(case)
            else:
                pred, est = validation_inference.predict(case)
                rec["layout"] = str(dict(est.parallelism)) if est else ""
            rec["predicted"], rec["error"] = pred, pred / case["measured"] - 1.0
        except ValueError as exc:
            rec["predicted"], rec["error"], rec["refused"] = np.nan, np.nan, str(exc)[:120]
        recs.append(rec)
    return pd.DataFrame.from_records(recs)


def summary(t: pd.DataFrame) -> pd.DataFrame:
    a = t.assign(abs_error=t["error"].abs())
    g = a.groupby("group").agg(cases=("abs_error", "count"), refused=("abs_error", lambda x: int(x.isna().sum())),
                               median=("abs_error", "median"), max=("abs_error", "max"))
    g.loc["all"] = [a["abs_error"].count(), int(a["abs_error"].isna().sum()), a["abs_error"].median(),
                    a["abs_error"].max()]
    return g


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=("training", "serving"))
    p.add_argument("path")
    p.add_argument("--user", action="store_true")
    a = p.parse_args(argv)
    t = table(a.kind, a.path, a.user)
    if t.empty:
        print("no cases to judge" + (" (--user judges aggregated max-load serving rows only)" if a.user else ""))
        return 0
    with pd.option_context("display.width", 250, "display.max_colwidth", 120, "display.max_rows", 500):
        print(t.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print()
        print(summary(t).to_string(float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
