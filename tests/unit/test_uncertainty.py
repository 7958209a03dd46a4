"""Tests for intelligence_per_dollar.model.uncertainty: determinism, distributions, intervals, tornado."""

from __future__ import annotations

import numpy as np
import pytest

from intelligence_per_dollar.model import economics as e
from intelligence_per_dollar.model import uncertainty as u
from intelligence_per_dollar.sources import assumptions as sa
from intelligence_per_dollar.sources import io

PROV = io.Provenance("https://example.org", "2026-11-29", "assumption")


def rec(name, low, central, high, unit="1"):
    return sa.Assumption(name, unit, low, central, high, PROV)


def gpu_hour(values):
    """Headline: GB200 NVL72 USD per GPU-hour at a 3.5M USD rack, all assumptions sampled."""
    return e.usd_per_gpu_hour(3.5e6 / 72, **e.cost_kwargs(values, "GB200"))


def test_same_seed_identical_numbers_different_seed_different():
    recs = sa.assumptions()
    a = u.sample(recs, 1000, seed=7)
    b = u.sample(recs, 1000, seed=7)
    c = u.sample(recs, 1000, seed=8)
    for k in recs:
        np.testing.assert_array_equal(a[k], b[k])
    assert not np.array_equal(a["pue"], c["pue"])
    r1, r2 = u.run(gpu_hour, recs, 2000, seed=3), u.run(gpu_hour, recs, 2000, seed=3)
    np.testing.assert_array_equal(r1.values, r2.values)
    assert r1.interval == r2.interval


def test_draws_do_not_depend_on_other_assumptions():
    x, y = rec("x", 0, 1, 4), rec("y", 10, 11, 12)
    np.testing.assert_array_equal(u.sample([x], 500, 1)["x"], u.sample([x, y], 500, 1)["x"])


def test_pert_and_triangular_moments_and_bounds():
    a = rec("a", 1.0, 2.0, 6.0)
    pert = u.sample_one(a, 200_000, 0)
    tri = u.sample_one(a, 200_000, 0, "triangular")
    assert pert.min() >= 1.0 and pert.max() <= 6.0
    assert tri.min() >= 1.0 and tri.max() <= 6.0
    assert pert.mean() == pytest.approx((1 + 4 * 2 + 6) / 6, rel=5e-3)   # PERT mean 2.5
    assert tri.mean() == pytest.approx((1 + 2 + 6) / 3, rel=5e-3)        # triangular mean 3


def test_log_uniform_median_is_geometric_mean_and_auto_picks_wide_ranges():
    a = rec("tasks", 1e8, 1e9, 1e10)
    d = u.sample([a], 100_000, 5, log_uniform=["tasks"])["tasks"]
    assert np.median(np.log10(d)) == pytest.approx(9.0, abs=0.02)
    auto = u.sample([a, rec("p", 0.9, 0.95, 0.99)], 10, 5, log_uniform="auto")
    np.testing.assert_array_equal(auto["tasks"], d[:10])


def test_degenerate_range_is_constant():
    assert np.all(u.sample([rec("k", 5, 5, 5)], 10, 0)["k"] == 5)


def test_intervals_known_values():
    assert u.intervals(np.arange(101.0)) == pytest.approx((5.0, 50.0, 95.0))
    p5, p50, p95 = u.intervals(np.arange(101.0)[:, None] * [1.0, 2.0])
    np.testing.assert_allclose(p95, [95.0, 190.0])
    with pytest.raises(ValueError, match="NaN"):
        u.intervals([1.0, float("nan")])


def test_run_headline_interval_is_ordered_and_brackets_central():
    recs = sa.assumptions()
    r = u.run(gpu_hour, recs, 5000, seed=11)
    central = float(gpu_hour(sa.centrals(recs)))
    assert r.p5 < r.p50 < r.p95
    assert r.p5 < central < r.p95
    assert np.all(np.isfinite(r.values)) and np.all(r.values > 0)


def test_fixed_values_override_samples():
    r = u.run(lambda v: v["x"] * 2, [rec("x", 0, 1, 2)], 100, 0, fixed={"x": 3.0})
    assert r.p5 == r.p95 == 6.0


def test_tornado_ranks_by_swing():
    recs = [rec("big", 0, 1, 10), rec("small", 0, 1, 2), rec("fixed", 3, 3, 3)]
    df = u.tornado(lambda v: 10 * v["big"] + v["small"] + v["fixed"], recs)
    assert list(df["name"]) == ["big", "small"]
    assert df.loc[0, "swing"] == pytest.approx(100.0)
    assert df.loc[0, "output_central"] == pytest.approx(14.0)
    assert df.loc[0, "output_at_low"] == pytest.approx(4.0)


def test_tornado_on_gpu_hour_puts_capital_terms_first():
    df = u.tornado(gpu_hour, sa.assumptions())
    assert set(df["name"].head(3)) & {"useful_life_years", "wacc", "utilisation"}
    assert np.all(np.diff(df["swing"]) <= 0)


@pytest.mark.parametrize("call, match", [
    (lambda: u.sample([rec("x", 0, 1, 2)], 0, 1), "n=0"),
    (lambda: u.sample([rec("x", 0, 1, 2)], 10, -1), "seed=-1"),
    (lambda: u.sample([rec("x", 0, 1, 2)], 10, 1, "normal"), "distribution='normal'"),
    (lambda: u.sample([rec("x", 0, 1, 2)], 10, 1, log_uniform=["x"]), "log-uniform needs low > 0"),
    (lambda: u.sample([rec("x", 1, 2, 3)], 10, 1, log_uniform=["y"]), "unknown"),
    (lambda: u.sample_one(rec("x", 3, 1, 2), 10, 1), "low <= central <= high"),
    (lambda: u.tornado(lambda v: v["x"], [rec("x", 0, 1, 2)], names=["z"]), "unknown"),
])
def test_bad_input_raises_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_100k_samples_have_the_right_shape():
    """Wall time of this run is measured in benchmarks/bench_uncertainty.py (target under 2 s)."""
    r = u.run(gpu_hour, sa.assumptions(), 100_000, seed=1)
    assert r.values.shape == (100_000,) and r.n == 100_000 and r.seed == 1
    assert np.all(np.isfinite(r.values))
