"""Tests for intelligence_per_dollar.model.economics: textbook worked examples, properties, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intelligence_per_dollar.model import economics as e
from intelligence_per_dollar.sources import assumptions as sa

FAST = settings(max_examples=60, deadline=None)

# A deliberately simple cost case that is easy to do by hand.
SIMPLE = dict(networking_capex_fraction=0.0, storage_capex_fraction=0.0, facility_capex_usd_per_w=0.0,
              facility_life_years=20.0, useful_life_years=5.0, wacc=0.0, pue=1.5,
              electricity_usd_per_kwh=0.10, operations_fraction_of_capex_per_year=0.0, utilisation=1.0)

TASK = dict(prefix_tokens=1000.0, output_tokens_per_step=100.0, tool_result_tokens_per_step=0.0,
            input_usd_per_mtok=1.0, output_usd_per_mtok=2.0)


# ---------------------------------------------------------------- cost of capital, depreciation

def test_capital_recovery_factor_textbook_5y_10pct():
    # CRF = 0.1 * 1.1**5 / (1.1**5 - 1) = 0.161051 / 0.61051 = 0.2637975
    assert e.capital_recovery_factor(0.10, 5) == pytest.approx(0.26379748, rel=1e-8)
    assert e.annuity_factor(0.10, 5) == pytest.approx(3.79078677, rel=1e-8)


def test_capital_recovery_factor_zero_rate_is_straight_line_and_continuous():
    assert e.capital_recovery_factor(0.0, 4) == pytest.approx(0.25)
    assert e.capital_recovery_factor(1e-12, 4) == pytest.approx(0.25, rel=1e-9)


def test_capital_recovery_factor_broadcasts():
    crf = e.capital_recovery_factor(np.array([0.0, 0.1])[:, None], np.array([5.0, 10.0]))
    assert crf.shape == (2, 2)
    assert crf[1, 1] == pytest.approx(0.16274539, rel=1e-7)   # 10 y at 10%


def test_straight_line_capital_charge_textbook():
    # 1000 over 4 years at 10%: 250 depreciation + 0.1 * 1000 * 5/8 = 62.5 interest on average book
    assert e.capital_charge_usd_per_year(1000, 0.10, 4, "straight_line") == pytest.approx(312.5)
    assert e.capital_charge_usd_per_year(1000, 0.10, 4) == pytest.approx(1000 * 0.31547080, rel=1e-7)


def test_depreciation_schedules_textbook():
    np.testing.assert_allclose(e.depreciation_schedule_usd(10_000, 5), [2000] * 5)
    ddb = e.depreciation_schedule_usd(10_000, 5, "declining_balance")
    np.testing.assert_allclose(ddb, [4000, 2400, 1440, 1080, 1080])
    with_salvage = e.depreciation_schedule_usd([10_000, 20_000], 5, "declining_balance", salvage_usd=1000)
    np.testing.assert_allclose(with_salvage.sum(axis=-1), [9000, 19000])
    assert with_salvage.shape == (2, 5)


# ---------------------------------------------------------------- $/GPU-hour

def test_usd_per_gpu_hour_worked_example():
    # capital 10,000 / 5 y = 2000 USD/y; power 1 kW * 1.5 * 8766 h * 0.10 = 1314.9 USD/y
    got = e.usd_per_gpu_hour(10_000, 1000, **SIMPLE)
    assert got == pytest.approx((2000 + 1314.9) / 8766, rel=1e-12)


def test_breakdown_parts_sum_to_total_and_each_part_is_right():
    cost = dict(SIMPLE, networking_capex_fraction=0.1, storage_capex_fraction=0.1, facility_capex_usd_per_w=10.0,
                operations_fraction_of_capex_per_year=0.05, utilisation=0.5, wacc=0.1)
    b = e.usd_per_gpu_hour_breakdown(10_000, 1000, **cost)
    hours = 8766 * 0.5
    assert b["it_capital"] == pytest.approx(12_000 * 0.26379748 / hours, rel=1e-7)
    assert b["facility_capital"] == pytest.approx(10_000 * e.capital_recovery_factor(0.1, 20) / hours)
    assert b["operations"] == pytest.approx(600 / hours)
    assert b["power"] == pytest.approx(1314.9 / hours)
    assert b["colocation"] == 0
    assert b["total"] == pytest.approx(sum(v for k, v in b.items() if k != "total"))


def test_colocation_rent_adds_per_kw():
    b = e.usd_per_gpu_hour_breakdown(0, 2000, **SIMPLE, colocation_usd_per_kw_month=100.0)
    assert b["colocation"] == pytest.approx(100 * 2 * 12 / 8766)


def test_utilisation_scales_cost_inversely():
    full = e.usd_per_gpu_hour(30_000, 1400, **SIMPLE)
    half = e.usd_per_gpu_hour(30_000, 1400, **dict(SIMPLE, utilisation=0.5))
    assert half == pytest.approx(2 * full)


def test_central_assumptions_give_plausible_rates():
    c = sa.centrals(sa.assumptions())
    h100 = e.usd_per_gpu_hour(250_000 / 8, **e.cost_kwargs(c, "H100-SXM"))
    assert 1.0 < h100 < 3.5          # market: owner ~1.2, rental ~2-3 USD/h (shared/facts)
    with pytest.raises(ValueError, match="accelerator='TPU'"):
        e.cost_kwargs(c, "TPU")


@FAST
@given(price=st.floats(0, 1e6), power=st.floats(0, 5000), wacc=st.floats(0, 1), life=st.floats(0.1, 30),
       pue=st.floats(1, 3), kwh=st.floats(0, 1), util=st.floats(0.01, 1), net=st.floats(0, 1))
def test_gpu_hour_cost_never_negative_or_nan(price, power, wacc, life, pue, kwh, util, net):
    b = e.usd_per_gpu_hour_breakdown(price, power, networking_capex_fraction=net, storage_capex_fraction=0.02,
                                     facility_capex_usd_per_w=12.0, facility_life_years=20, useful_life_years=life,
                                     wacc=wacc, pue=pue, electricity_usd_per_kwh=kwh,
                                     operations_fraction_of_capex_per_year=0.04, utilisation=util)
    for v in b.values():
        assert np.all(np.isfinite(v)) and np.all(v >= 0)


# ---------------------------------------------------------------- cost per successful task

def test_task_cost_worked_example_no_retry():
    # step 1: 1000 in + 100 out = 0.0010 + 0.0002; step 2: 1100 in + 100 out = 0.0011 + 0.0002
    tc = e.agentic_task_cost(0.5, 2, **TASK)
    assert tc.usd_per_task == pytest.approx(0.0025)
    assert tc.success_probability == pytest.approx(0.25)
    assert tc.usd_per_success == pytest.approx(0.01)
    assert tc.input_tokens_per_task == pytest.approx(2100)


def test_task_cost_worked_example_step_rollback():
    # s = 1 - 0.5**2 = 0.75, tries = s/p = 1.5; cost = 1.5*0.0012 + 0.75*1.5*0.0013 = 0.0032625
    tc = e.agentic_task_cost(0.5, 2, **TASK, retry_policy="step", max_retries=1)
    assert tc.usd_per_task == pytest.approx(0.0032625)
    assert tc.success_probability == pytest.approx(0.5625)
    assert tc.usd_per_success == pytest.approx(0.0058)


def test_task_retry_raises_success_but_not_cost_per_success():
    one = e.agentic_task_cost(0.9, 5, **TASK)
    three = e.agentic_task_cost(0.9, 5, **TASK, retry_policy="task", max_retries=2)
    q = 0.9 ** 5
    assert three.success_probability == pytest.approx(1 - (1 - q) ** 3)
    assert three.usd_per_success == pytest.approx(one.usd_per_success)
    assert three.usd_per_task == pytest.approx(one.usd_per_task * (1 - (1 - q) ** 3) / q)


def test_failure_detection_stops_early_and_saves():
    late = e.cost_per_successful_task(0.8, 5, **TASK)
    early = e.cost_per_successful_task(0.8, 5, **TASK, detect_failures=True)
    assert early < late


def test_context_growth_and_retention():
    full = e.agentic_task_cost(1.0, 3, **dict(TASK, tool_result_tokens_per_step=400.0))
    # inputs: 1000, 1500, 2000
    assert full.input_tokens_per_task == pytest.approx(4500)
    none_kept = e.agentic_task_cost(1.0, 3, **dict(TASK, tool_result_tokens_per_step=400.0),
                                    context_retention_fraction=0.0)
    assert none_kept.input_tokens_per_task == pytest.approx(3000)


def test_zero_reliability_is_infinite_not_nan():
    for policy in e.RETRY_POLICIES:
        c = e.cost_per_successful_task(0.0, 5, **TASK, retry_policy=policy, max_retries=2)
        assert c == np.inf
    assert e.successful_tasks_per_usd(np.inf) == 0.0


def test_implied_step_probability_for_seed_claim():
    assert e.implied_step_success_probability(0.717, 5) == pytest.approx(0.717 ** 0.2)
    assert e.implied_step_success_probability(0.717, 5) ** 5 == pytest.approx(0.717)


def test_vectorised_over_steps_and_p():
    c = e.cost_per_successful_task(np.array([0.9, 0.95])[:, None], np.array([1, 5, 30]), **TASK)
    assert c.shape == (2, 3)
    assert np.all(np.diff(c, axis=1) > 0)


@FAST
@given(p=st.floats(0, 1), dp=st.floats(0, 1), k=st.integers(1, 60), r=st.integers(0, 4),
       policy=st.sampled_from(e.RETRY_POLICIES), detect=st.booleans(),
       prefix=st.floats(0, 1e5), out=st.floats(0, 5e3), tool=st.floats(0, 5e3), keep=st.floats(0, 1))
def test_cost_per_success_never_falls_as_p_falls(p, dp, k, r, policy, detect, prefix, out, tool, keep):
    lower = p * (1 - dp)
    kw = dict(prefix_tokens=prefix, output_tokens_per_step=out, tool_result_tokens_per_step=tool,
              input_usd_per_mtok=0.5, output_usd_per_mtok=2.0, context_retention_fraction=keep,
              retry_policy=policy, max_retries=r, detect_failures=detect, tool_usd_per_step=1e-4)
    hi = e.agentic_task_cost(p, k, **kw)
    lo = e.agentic_task_cost(lower, k, **kw)
    for tc in (hi, lo):
        assert not np.isnan(tc.usd_per_success) and tc.usd_per_success >= 0 and tc.usd_per_task >= 0
    assert lo.usd_per_success >= hi.usd_per_success * (1 - 1e-12)


# ---------------------------------------------------------------- break-even, lifecycle

def test_break_even_price_worked_example():
    # candidate: c(P) = P/(5*8766) + 1314.9/8766 per GPU-hour; reference 2 USD/h; ratio 4
    ref, ratio = 2.0, 4.0
    expected_per_gpu = (ratio * ref - 1314.9 / 8766) * 5 * 8766
    got = e.break_even_price_usd(ref, ratio, 72, 1000, **SIMPLE)
    assert got == pytest.approx(72 * expected_per_gpu, rel=1e-9)
    # at that price, the candidate's workload cost equals the reference's
    cand = e.usd_per_gpu_hour(got / 72, 1000, **SIMPLE)
    assert e.workload_cost_usd(1000 / ratio, cand) == pytest.approx(e.workload_cost_usd(1000, ref))


@FAST
@given(r1=st.floats(0.1, 10), r2=st.floats(0.1, 10), ref=st.floats(0.1, 20), power=st.floats(500, 4000))
def test_break_even_rises_with_candidate_efficiency(r1, r2, ref, power):
    lo, hi = sorted((r1, r2))
    c = sa.centrals(sa.assumptions())
    kw = e.cost_kwargs(c)
    a = e.break_even_price_usd(ref, lo, 72, power, **kw)
    b = e.break_even_price_usd(ref, hi, 72, power, **kw)
    assert np.isfinite(a) and np.isfinite(b)
    assert b >= a


def test_campaign_and_lifecycle():
    camp = e.campaign_cost_usd(1000, 30 * 86400, 2.0)
    assert camp == pytest.approx(1000 * 720 * 2.0)
    # 1.44M USD over 1e6 tasks at 50% success = 2.88 USD per success, plus serving
    assert e.lifecycle_usd_per_success(0.5, camp, 1e6, 0.5) == pytest.approx(0.5 + 2.88)
    assert e.lifecycle_usd_per_success(0.5, camp, 1e6, 0.0) == np.inf
    assert e.lifecycle_usd_per_success(0.5, 0.0, 1e6, 0.0) == 0.5


# ---------------------------------------------------------------- bad input

@pytest.mark.parametrize("call, match", [
    (lambda: e.cost_per_successful_task(1.2, 5, **TASK), r"step_success_probability=1\.2"),
    (lambda: e.cost_per_successful_task(-0.1, 5, **TASK), "step_success_probability"),
    (lambda: e.cost_per_successful_task(0.9, 0, **TASK), "steps=0"),
    (lambda: e.cost_per_successful_task(0.9, 2.5, **TASK), "steps=2.5"),
    (lambda: e.cost_per_successful_task(0.9, 5, **TASK, retry_policy="pray"), "retry_policy='pray'"),
    (lambda: e.cost_per_successful_task(0.9, 5, **dict(TASK, input_usd_per_mtok=-1)), "input_usd_per_mtok=-1"),
    (lambda: e.usd_per_gpu_hour(-5, 1000, **SIMPLE), "system_price_usd_per_gpu=-5"),
    (lambda: e.usd_per_gpu_hour(5, 1000, **dict(SIMPLE, useful_life_years=0)), "useful_life_years=0"),
    (lambda: e.usd_per_gpu_hour(5, 1000, **dict(SIMPLE, utilisation=0)), "utilisation=0"),
    (lambda: e.usd_per_gpu_hour(5, 1000, **dict(SIMPLE, pue=0.9)), "pue=0.9"),
    (lambda: e.usd_per_gpu_hour(5, 1000, **dict(SIMPLE, wacc=float("nan"))), "wacc=nan"),
    (lambda: e.capital_recovery_factor(0.1, -1), "life_years=-1"),
    (lambda: e.usd_per_gpu_hour([5, -7], 1000, **SIMPLE), r"system_price_usd_per_gpu=-7\.0 is not allowed"),
    (lambda: e.successful_tasks_per_usd(-1.0), "usd_per_success=-1"),
    (lambda: e.depreciation_schedule_usd(100, 5, "sum_of_years"), "method='sum_of_years'"),
    (lambda: e.break_even_price_usd(2.0, 0.0, 72, 1000, **SIMPLE), "gpu_hour_ratio=0"),
    (lambda: e.lifecycle_usd_per_success(1.0, 10.0, 0, 0.5), "lifetime_tasks_served=0"),
])
def test_bad_input_raises_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---------------------------------------------------------------- systems, determinism

def test_system_cost_uses_catalogue_and_prices():
    assert e.accelerator_and_gpus("GB200-NVL72") == ("GB200", 72)
    c = sa.centrals(sa.book_assumptions())
    got = e.system_usd_per_gpu_hour(c, "GB200-NVL72")
    want = e.usd_per_gpu_hour(c["GB200-NVL72.system_price_usd"] / 72, **e.cost_kwargs(c, "GB200"))
    assert got == pytest.approx(want)
    b = e.system_usd_per_gpu_hour(c, "Vera-Rubin-NVL72", breakdown=True)
    assert b["total"] == pytest.approx(sum(b[k] for k in e.BUILDUP_COMPONENTS))
    df = e.buildup_table(c, ["GB200-NVL72", "Vera-Rubin-NVL72"])
    assert set(df["component"]) == set(e.BUILDUP_COMPONENTS) and len(df) == 10
    with pytest.raises(ValueError, match="system='TPU-pod'"):
        e.system_usd_per_gpu_hour(c, "TPU-pod")


def test_system_break_even_equalises_workload_cost():
    c = sa.centrals(sa.book_assumptions())
    price = e.system_break_even_price_usd(c, "Vera-Rubin-NVL72", "GB200-NVL72", 4.0)
    ref = e.system_usd_per_gpu_hour(c, "GB200-NVL72")
    cand = e.system_usd_per_gpu_hour(c, "Vera-Rubin-NVL72", system_price_usd=price)
    assert 4.0 * ref == pytest.approx(cand, rel=1e-9)   # H_ref c_ref = (H_ref / 4) c_cand


def test_market_table_has_rental_and_tco():
    m = e.market_table(sa.book_assumptions(), ["HGX-H100", "GB200-NVL72"])
    assert set(m["kind"]) == {"rental (on-demand)", "owner TCO (SemiAnalysis)"}
    assert (m["low"] <= m["central"]).all() and (m["central"] <= m["high"]).all()


def test_same_seed_gives_identical_headlines():
    from intelligence_per_dollar.model import uncertainty as u

    recs = sa.book_assumptions()

    def be(v):
        return e.system_break_even_price_usd(v, "Vera-Rubin-NVL72", "GB200-NVL72", 4.0)
    a, b = u.run(be, recs, 5000, seed=42), u.run(be, recs, 5000, seed=42)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.interval == b.interval
    assert u.run(be, recs, 5000, seed=43).interval != a.interval


def test_reliability_curves_long_table():
    df = e.reliability_curves([0.9, 0.95, 1.0], [1, 5], **TASK)
    assert len(df) == 6 and set(df["steps"]) == {1, 5}
    five = df[df["steps"] == 5].sort_values("p")
    assert np.all(np.diff(five["usd_per_success"]) <= 0)


# ---------------------------------------------------------------- properties (hypothesis)

@FAST
@given(p=st.floats(0, 1), dp=st.floats(0, 1), k=st.integers(1, 80), price=st.floats(0, 100))
def test_cost_per_success_never_falls_as_p_falls_across_ks(p, dp, k, price):
    kw = dict(prefix_tokens=2000.0, output_tokens_per_step=300.0, tool_result_tokens_per_step=500.0,
              input_usd_per_mtok=price / 4, output_usd_per_mtok=price)
    ps = np.array([p, p * (1 - dp)])
    c = e.cost_per_successful_task(ps, k, **kw)
    assert c[1] >= c[0] * (1 - 1e-12)


@FAST
@given(r1=st.floats(0.2, 20), r2=st.floats(0.2, 20), gb_price=st.floats(5e5, 2e7), util=st.floats(0.05, 1),
       life=st.floats(0.5, 10), pue=st.floats(1, 2.5))
def test_break_even_rises_with_vera_rubin_efficiency_on_systems(r1, r2, gb_price, util, life, pue):
    c = dict(sa.centrals(sa.book_assumptions()), **{"GB200-NVL72.system_price_usd": gb_price, "utilisation": util,
                                                  "useful_life_years": life, "pue": pue})
    lo, hi = sorted((r1, r2))
    a = e.system_break_even_price_usd(c, "Vera-Rubin-NVL72", "GB200-NVL72", lo)
    b = e.system_break_even_price_usd(c, "Vera-Rubin-NVL72", "GB200-NVL72", hi)
    assert np.isfinite(a) and np.isfinite(b) and b >= a


@FAST
@given(price=st.floats(0, 1e8), power=st.floats(0, 1e4), wacc=st.floats(0, 1), life=st.floats(1e-3, 50),
       util=st.floats(1e-3, 1), p=st.floats(0, 1), k=st.integers(1, 200), tasks=st.floats(1, 1e12),
       camp=st.floats(0, 1e10), policy=st.sampled_from(e.RETRY_POLICIES), r=st.integers(0, 5))
def test_no_nan_for_any_valid_input(price, power, wacc, life, util, p, k, tasks, camp, policy, r):
    c = e.usd_per_gpu_hour(price, power, networking_capex_fraction=0.1, storage_capex_fraction=0.02,
                           facility_capex_usd_per_w=12.0, facility_life_years=20, useful_life_years=life, wacc=wacc,
                           pue=1.3, electricity_usd_per_kwh=0.1, operations_fraction_of_capex_per_year=0.04,
                           utilisation=util)
    assert np.isfinite(c)
    tc = e.agentic_task_cost(p, k, prefix_tokens=3000.0, output_tokens_per_step=200.0, tool_result_tokens_per_step=400.0,
                             input_usd_per_mtok=float(c), output_usd_per_mtok=float(c) * 4, retry_policy=policy,
                             max_retries=r)
    for v in (tc.usd_per_success, tc.usd_per_task, tc.success_probability):
        assert not np.isnan(v)
    life_cost = e.lifecycle_usd_per_success(tc.usd_per_success, camp, tasks, tc.success_probability)
    assert not np.isnan(life_cost)
    assert not np.isnan(e.successful_tasks_per_usd(tc.usd_per_success))


@pytest.mark.parametrize("call, match", [
    (lambda: e.agentic_task_cost(1.0001, 5, **TASK), "step_success_probability=1.0001"),
    (lambda: e.agentic_task_cost(0.9, 5, **TASK, context_retention_fraction=1.5), "context_retention_fraction=1.5"),
    (lambda: e.implied_step_success_probability(-0.2, 5), "task_success_probability=-0.2"),
    (lambda: e.lifecycle_usd_per_success(1.0, 1.0, 10, 2.0), "success_probability=2"),
    (lambda: e.cost_per_successful_task(0.9, 5, **dict(TASK, output_usd_per_mtok=-0.5)), "output_usd_per_mtok=-0.5"),
    (lambda: e.campaign_cost_usd(10, 3600, -1.0), "usd_per_gpu_hour=-1"),
    (lambda: e.break_even_price_usd(-2.0, 4, 72, 1000, **SIMPLE), "reference_usd_per_gpu_hour=-2"),
    (lambda: e.capital_recovery_factor(0.1, 0), "life_years=0"),
    (lambda: e.usd_per_gpu_hour(5, 1000, **dict(SIMPLE, facility_life_years=0)), "facility_life_years=0"),
    (lambda: e.system_usd_per_gpu_hour(dict(sa.centrals(sa.book_assumptions()),
                                              **{"GB200-NVL72.system_price_usd": -1.0}), "GB200-NVL72"),
     "system_price_usd=-1"),
])
def test_more_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("policy,detect", [("none", False), ("none", True), ("task", True), ("step", False)])
def test_task_cost_closed_form_matches_the_step_by_step_sum(policy, detect):
    """The sums over steps are closed forms (a billion steps costs what five do); they match the
    step-by-step sum of the docstring, including p next to 1 where the series branch takes over."""
    p = np.array([0.0, 0.3, 0.9, 0.999, 1 - 1e-9, 1.0])
    task = dict(TASK, tool_result_tokens_per_step=50.0, context_retention_fraction=0.7, retry_policy=policy,
                max_retries=2, detect_failures=detect, tool_usd_per_step=0.001)
    for k in (1, 7, 300):
        got = e.agentic_task_cost(p, k, **task)
        s = 1 - (1 - p) ** 3 if policy == "step" else p
        x = s if policy == "step" or detect else np.ones_like(p)
        scale = np.where(p > 0, s / np.where(p > 0, p, 1), 3.0) if policy == "step" else 1.0
        w = np.reshape(scale, (-1, 1)) * x[:, None] ** np.arange(k)
        tokens = 1000.0 + 0.7 * np.arange(k) * 150.0
        in_tok = (w * tokens).sum(axis=1)
        attempts = 1.0
        if policy == "task":
            q = p ** k
            attempts = np.where(q > 0, (1 - (1 - q) ** 3) / np.where(q > 0, q, 1), 3.0)
        assert got.input_tokens_per_task == pytest.approx(in_tok * attempts, rel=1e-12)
        assert got.output_tokens_per_task == pytest.approx(100.0 * w.sum(axis=1) * attempts, rel=1e-12)


def test_a_billion_steps_answers_and_more_is_refused():
    big = e.agentic_task_cost(1.0, 10**9, **TASK)
    k = 10**9        # each step reads the prefix and every earlier step's 100 output tokens
    assert big.input_tokens_per_task == pytest.approx(1000.0 * k + 100.0 * k * (k - 1) / 2, rel=1e-12)
    assert float(e.cost_per_successful_task(0.999999, 10**9, **TASK)) == np.inf     # success underflows to 0
    with pytest.raises(ValueError, match=r"steps=1000000000000.0 is not allowed; allowed: a finite integer >= 1 "
                                         r"and <= 1,000,000,000"):
        e.cost_per_successful_task(0.9, 10**12, **TASK)
    with pytest.raises(ValueError, match="detect_failures='yes' is not allowed; allowed: True or False"):
        e.agentic_task_cost(0.9, 5, **TASK, detect_failures="yes")
