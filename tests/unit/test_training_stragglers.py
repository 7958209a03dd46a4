"""Issue 12: a synchronous training step waits for the slowest of its GPUs (chip-to-chip spread of the
sustained clock, ``gpu_speed_cv``): the normal order statistic, the pipeline stage's ``slowest_gpu`` part
and what it does to a stated layout."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import training, uncertainty
from intelligence_per_dollar.model.training import context, pipeline
from intelligence_per_dollar.sources import assumptions

#: A 1.3B GPT (GPT-3 XL shape): its BF16 weights and Adam state fit one H100, so the same layout runs on 1 to 1,024.
GPT_1B = {"layers": 24, "d_model": 2048, "heads": 16, "kv_heads": 16, "d_ff": 8192, "vocab": 50257}


def _exact_expected_max(n: int, bound: float = 9.0) -> float:
    """E[max of n standard normals truncated to [-bound, bound]] by the trapezoid rule on
    x n f(x) F(x)^(n-1), an independent integration (math.erf) rather than the inverse-CDF formula under test."""
    import math
    x = np.linspace(-bound, bound, 36001)
    cdf_all = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    mass = cdf_all[-1] - cdf_all[0]
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi) / mass
    cdf = (cdf_all - cdf_all[0]) / mass
    return float(np.trapezoid(x * n * pdf * cdf ** (n - 1), x))


@pytest.mark.parametrize("n", [1, 2, 8, 64, 1024, 16384])
def test_expected_max_matches_the_integral(n):
    assert uncertainty.expected_max_standard_normal(n) == pytest.approx(_exact_expected_max(n), abs=0.03)
    fence = uncertainty.TUKEY_FENCE_Z
    truncated = uncertainty.expected_max_standard_normal(n, bound=fence)
    assert truncated == pytest.approx(_exact_expected_max(n, fence), abs=0.05)
    assert truncated <= min(fence, uncertainty.expected_max_standard_normal(n)) + 1e-12


def test_tukey_fence_is_q3_plus_one_and_a_half_iqr():
    # the normal's quartiles are +-0.67449 (tables); Q3 + 1.5 (Q3 - Q1) = 0.67449 x 4
    assert uncertainty.TUKEY_FENCE_Z == pytest.approx(2.69796, abs=1e-4)


def test_expected_max_known_values_and_bad_input():
    assert uncertainty.expected_max_standard_normal(1) == 0.0
    # two draws: E[max] = 1 / sqrt(pi) = 0.5642 exactly; Blom is within 0.03
    assert uncertainty.expected_max_standard_normal(2) == pytest.approx(1 / np.sqrt(np.pi), abs=0.03)
    arr = uncertainty.expected_max_standard_normal(np.array([1.0, 8.0]))
    assert isinstance(arr, np.ndarray) and arr.shape == (2,)
    assert uncertainty.expected_max_standard_normal(uncertainty.MAX_DRAWS) < 9.0
    for bad in (0, 0.5, 8.5, -3, float("nan"), float("inf"), np.array([2.0, 0.0]), np.array([]), True, "8",
                np.array([True, True]), uncertainty.MAX_DRAWS * 10):
        with pytest.raises(ValueError, match="n="):
            uncertainty.expected_max_standard_normal(bad)
    for bad in (0, -1.0, float("nan"), float("inf"), True, "2.7"):
        with pytest.raises(ValueError, match="bound="):
            uncertainty.expected_max_standard_normal(8, bound=bad)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**6), st.integers(1, 10**6), st.sampled_from([None, 1.5, uncertainty.TUKEY_FENCE_Z]))
def test_expected_max_never_falls_as_draws_are_added(a, b, bound):
    lo, hi = sorted((a, b))
    high = uncertainty.expected_max_standard_normal(hi, bound)
    assert high >= uncertainty.expected_max_standard_normal(lo, bound) - 1e-12
    assert bound is None or high <= bound


def test_spread_is_a_sourced_range_and_the_slow_scenario_takes_the_wide_end():
    a = assumptions.assumptions("training.csv")["gpu_speed_cv"]
    assert 0 < a.low <= a.central <= a.high < 0.05
    assert "2208.11035" in a.provenance.source_url
    spreads = {sc: context.make_context("Llama-3.1-8B", "H100-SXM", "bf16", 8192, 8192 * 64, None, sc, False).gpu_speed_cv
               for sc in ("low", "central", "high")}
    assert spreads == {"low": a.high, "central": a.central, "high": a.low}


def _stated(gpus: int, **kw):
    return training.estimate(GPT_1B, "H100-SXM", gpus, "bf16", 2048, 2048 * 2 * gpus,
                             {"tp": 1, "pp": 1, "cp": 1, "dp": gpus, "microbatch": 2, "recompute": "none",
                              "zero": 1}, **kw)


def test_one_gpu_waits_for_nobody_and_the_wait_grows_with_the_job():
    """Weak scaling (two sequences per GPU): one GPU has no slowest-GPU time; from 8 to 1,024 GPUs the
    part grows as the expected largest of N normals within Tukey's fence (1.41 -> 2.64 of cv), a few per
    cent of the clock-bound GEMM and attention time, and it shows in the step-time breakdown."""
    one = _stated(1)
    assert one.time_breakdown_s["step_slowest_gpu_s"] == 0.0
    cv = assumptions.assumptions("training.csv")["gpu_speed_cv"].central
    prev = 0.0
    for n in (8, 64, 1024):
        e = _stated(n)
        wait = e.time_breakdown_s["step_slowest_gpu_s"]
        clock_bound = (e.time_breakdown_s["step_gemm_s"] + e.time_breakdown_s["step_attention_core_s"]
                       + e.time_breakdown_s["step_lm_head_s"])
        share = wait / clock_bound
        assert share == pytest.approx(cv * uncertainty.expected_max_standard_normal(n, uncertainty.TUKEY_FENCE_Z),
                                      rel=1e-6)
        assert 0.015 < share < cv * uncertainty.TUKEY_FENCE_Z and wait > prev
        prev = wait
    # the same layout without the spread is faster by that part, less the little more gradient traffic the slowest
    # rank's longer backward hides (pipeline.stage_times stretches forward and backward by the same share)
    e = _stated(64)
    ctx = context.make_context(GPT_1B, "H100-SXM", "bf16", 2048, 2048 * 128, None, "central", False)
    c = {k: np.array([float(v)]) for k, v in {"tp": 1, "pp": 1, "cp": 1, "dp": 64, "ep": 1, "microbatch": 2,
                                              "interleave": 1, "recompute": 0, "zero": 1}.items()}
    from intelligence_per_dollar.model.training import evaluator
    with_spread = evaluator.evaluate(ctx, c)["step_time_s"][0]
    without = evaluator.evaluate(replace(ctx, gpu_speed_cv=0.0), c)["step_time_s"][0]
    assert with_spread == pytest.approx(e.step_time_s, rel=1e-9)
    wait = e.time_breakdown_s["step_slowest_gpu_s"]
    assert 0.9 * wait <= with_spread - without <= wait * (1 + 1e-9)


def test_slowest_gpu_counts_every_parallel_dimension():
    ctx = context.make_context(GPT_1B, "H100-SXM", "bf16", 2048, 2048 * 64, None, "central", False)
    base = {"tp": 1, "pp": 1, "cp": 1, "dp": 1, "ep": 1, "microbatch": 1, "interleave": 1, "recompute": 0, "zero": 1}
    waits = []
    for key in ("tp", "pp", "cp", "dp"):
        c = {k: np.array([float(v)]) for k, v in {**base, key: 4}.items()}
        waits.append(float(pipeline.slowest_gpu_s(ctx, context.layout(ctx, c), 1.0)[0]))
    # four GPUs along any dimension wait the same: 1.04 cv (Blom within the fence; the exact truncated E[max of 4]
    # is 1.00, untruncated 1.03)
    assert max(waits) == pytest.approx(min(waits), rel=1e-12)
    assert 0.99 * ctx.gpu_speed_cv < waits[0] < 1.06 * ctx.gpu_speed_cv


def test_a_caller_states_the_fleet_spread():
    """``estimate(gpu_speed_cv=...)``: 0 (identical GPUs) removes the wait and is faster than the sourced default,
    a wider spread is slower; values outside [0, 0.2] or not numbers are refused by name."""
    base = _stated(64)
    same = _stated(64, gpu_speed_cv=0.0)
    wide = _stated(64, gpu_speed_cv=0.05)
    assert same.time_breakdown_s["step_slowest_gpu_s"] == 0.0
    assert same.step_time_s < base.step_time_s < wide.step_time_s
    assert wide.time_breakdown_s["step_slowest_gpu_s"] == pytest.approx(
        base.time_breakdown_s["step_slowest_gpu_s"] * 0.05 / assumptions.assumptions("training.csv")["gpu_speed_cv"].central,
        rel=1e-3)
    for bad in (-0.01, 0.5, float("nan"), True, "0.01"):
        with pytest.raises(ValueError, match="gpu_speed_cv"):
            _stated(64, gpu_speed_cv=bad)
