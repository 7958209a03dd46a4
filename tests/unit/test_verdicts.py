"""The verdict vocabulary: "not reproduced" (the central estimate misses the claim, the interval
reaches it) versus "contradicted" (the interval excludes it), and the training row judged on the
joint sweep with the same rule and interval as chapter 2 (a synthetic sweep table: no search)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from intelligence_per_dollar.analysis import claims as cl
from intelligence_per_dollar.analysis import sweeps
from intelligence_per_dollar.analysis.claims import rows_training
from intelligence_per_dollar.analysis.sweeps import gpu_ratio
from intelligence_per_dollar.sources import workloads


@pytest.mark.parametrize("rule, claimed, interval, verdict", [
    ("at_least", 4.0, (3.7, 3.8, 4.2), "supported"),                # bar 4 / 1.1 = 3.64
    ("at_least", 4.0, (3.0, 3.7, 4.2), "supported only if"),
    ("at_least", 4.0, (2.5, 3.0, 3.7), "not reproduced"),
    ("at_least", 4.0, (2.5, 3.0, 3.5), "contradicted"),
    ("at_most", 0.25, (0.20, 0.24, 0.27), "supported"),             # bar 0.25 x 1.1 = 0.275
    ("at_most", 0.25, (0.20, 0.27, 0.33), "supported only if"),
    ("at_most", 0.25, (0.26, 0.33, 0.40), "not reproduced"),
    ("at_most", 0.25, (0.28, 0.33, 0.40), "contradicted"),
])
def test_not_reproduced_is_between_supported_only_if_and_contradicted(rule, claimed, interval, verdict):
    assert cl.decide(rule, claimed, *interval, 0.10, condition="c").verdict == verdict


def test_a_claim_and_its_inverse_get_the_same_verdict():
    for p5, p50, p95 in [(0.20, 0.27, 0.33), (0.26, 0.33, 0.40), (0.28, 0.33, 0.40), (0.1, 0.2, 0.25)]:
        a = cl.decide("at_most", 0.25, p5, p50, p95, 0.1).verdict
        b = cl.decide("at_least", 4.0, 1 / p95, 1 / p50, 1 / p5, 0.1).verdict
        assert a == b


def test_verdicts_list_the_new_word():
    assert cl.VERDICTS.index("not reproduced") == cl.VERDICTS.index("contradicted") - 1


def _synthetic_sweep(n=300):
    s = gpu_ratio.spec(samples=n)
    t = sweeps.draw(s)
    ratio = 0.33 * (t["active_params"] / 5e11) ** 0.3 * np.where(t["kept_precision"] == "fp8", 0.85, 1.0)
    return s, t.assign(ratio_model=ratio, ratio=ratio * t["model_error"])


def test_training_row_is_judged_on_the_joint_sweep(monkeypatch):
    s, t = _synthetic_sweep()
    monkeypatch.setattr(gpu_ratio, "table", lambda spec=None, **kw: t)
    monkeypatch.setattr(rows_training, "training_gpu_ratio", lambda *a, **k: (3.0, _Feasible(), _Feasible()))
    led = cl.ledger(only=["train_quarter_gpus"], training_range=True)
    r = led.iloc[0]
    w = workloads.training()
    u = gpu_ratio.summarise(t, s, w.claimed_gpu_ratio, w.claim_tolerance)
    assert (r["p5"], r["p50"], r["p95"]) == pytest.approx((1 / u.p95, 1 / u.p50, 1 / u.p5))
    assert r["verdict"] == gpu_ratio.verdict(u).verdict
    assert "joint sweep" in r["interval"] and r["deciding_assumption"] == ", ".join(u.top(2))
    view = cl.ledger_view(led).iloc[0]["verdict"]
    assert view.startswith(r["verdict"])


def test_unbounded_samples_order_the_ratio():
    s, t = _synthetic_sweep(100)
    t.loc[:9, ["ratio_model", "ratio"]] = np.inf     # Vera Rubin cannot meet the deadline
    t.loc[10:14, ["ratio_model", "ratio"]] = 0.0     # only GB200 cannot
    u = gpu_ratio.summarise(t, s, 0.25, 0.1)
    assert (u.candidate_infeasible, u.reference_infeasible) == (10, 5)
    assert u.p95 == np.inf and u.p5 == 0.0 and np.isfinite(u.p50)
    assert rows_training._inverse(u.p95) == 0.0 and rows_training._inverse(u.p5) == np.inf
    assert cl.decide("at_least", 4.0, 0.0, 1 / u.p50, np.inf, 0.1).verdict in ("supported only if", "not reproduced")


class _Feasible:
    feasible, gpus, racks, days_needed, message = True, 72, 1, 29.0, ""

    class estimate:
        mfu = 0.3


def test_ledger_view_explains_not_reproduced():
    led = pd.DataFrame([{"claim": "c", "source": "https://x.org/a", "estimate": "e", "verdict": "not reproduced",
                         "condition": "fp8 kept layers", "deciding_assumption": "d", "link": "nbs/02_training.ipynb",
                         "section": ""}])
    assert cl.ledger_view(led).iloc[0]["verdict"] == "not reproduced (it would need fp8 kept layers)"
