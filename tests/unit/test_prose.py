"""views/prose: every number in a chapter's sentences comes from the computed value passed in,
and the branches (reproduces / does not, above / within target ...) follow the values."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from intelligence_per_dollar.analysis import economics_findings as ef
from intelligence_per_dollar.analysis import post_training as ap
from intelligence_per_dollar.analysis import training as at
from intelligence_per_dollar.analysis import validation_inference as vi
from intelligence_per_dollar.views.prose import economics as pe
from intelligence_per_dollar.views.prose import post_training as pp
from intelligence_per_dollar.views.prose import training as pt


def _row(regime, acc, gpus, ratio, mfu=0.1, step=4.0, batch=1e9):
    return {"regime": regime, "accelerator": acc, "gpus": gpus, "racks": gpus // 72 if gpus else None, "mfu": mfu,
            "step_time_s": step, "global_batch_tokens": batch, "ratio_to_baseline": ratio}


def _headline(ratio_b=0.333, ratio_t=0.38):
    rows = (_row("batch-limited", "GB200", 144, 1.0), _row("batch-limited", "VR200", int(144 * ratio_b), ratio_b),
            _row("throughput", "GB200", 7200, 1.0, batch=4e9), _row("throughput", "VR200", int(7200 * ratio_t), ratio_t,
                                                                     batch=2e9))
    return at.Headline(rows, ("GB200", "VR200"), "GB200", "VR200", 1.5e8)


def test_peak_gap_quotes_the_ratio_and_what_is_missing():
    gap = at.PeakGap("GB200", "VR200", "fp4", 10e15, 35e15)
    text = pt.peak_gap(gap, 0.25)
    assert "rises 3.50x from GB200 to VR200" in text and "a 4x saving" in text and "a further 14%" in text
    assert "already covered by the peak alone (0.29 of the GPUs)" in pt.peak_gap(gap, 0.5)


def test_regime_sentence_follows_the_claim_and_its_tolerance():
    gap = at.PeakGap("GB200", "VR200", "fp4", 10e15, 35e15)
    assert "does **not** reproduce the claimed 0.25 (tolerance +10%)" in pt.regimes(_headline(), gap, 0.25, 0.10)
    assert "**reproduces** the claimed 0.35" in pt.regimes(_headline(), gap, 0.35, 0.10)


def test_claim_regime_names_the_closer_regime_and_the_batch_multiple():
    text = pt.claim_regime(_headline(), 0.25, 0.10, "central")
    assert "Regime (a), batch-limited, has the ratio closer to 0.25" in text
    assert "1.52x the claimed ratio" in text and "13-27x the central batch" in text


def test_decomposition_takeaway_ranks_by_share():
    f = at.DecompositionFindings(total_ratio=0.38, factors={"peak FLOP/s": 0.7, "HBM bandwidth": 0.9},
                                 shares={"peak FLOP/s": 0.3, "HBM bandwidth": 0.7}, baseline_mfu=0.17,
                                 peak_swap_mfu=0.07, claimed_ratio=0.25)
    acc = SimpleNamespace(hbm_bytes_per_s=8e12, scaleup_bytes_per_s_bidirectional=1.8e12, scaleout_bytes_per_s=50e9,
                          hbm_bytes=186e9)
    text = pt.decomposition_takeaway(f, acc, acc)
    assert text.startswith("**Takeaway.** The largest part is **HBM bandwidth** (70%), then peak FLOP/s (30%)")
    assert "less than half" in text and "memory capacity (186 vs 186 GB) 0%, a minor part" in text
    assert f.claimed_fraction == pytest.approx(0.698, abs=1e-3)


def test_sensitivity_labels_and_findings():
    table = pd.DataFrame([
        {"parameter": "precision", "case": "central", "value": None, "regime": "throughput", "ratio": 0.38,
         "central": 0.38},
        {"parameter": "precision", "case": "changed", "value": "fp8", "regime": "throughput", "ratio": 0.32,
         "central": 0.38},
        {"parameter": "global batch", "case": "changed", "value": 268435456, "regime": "batch-limited",
         "ratio": 0.26, "central": 0.33}])
    f = at.sensitivity_findings(table, 0.25, 0.10)
    assert len(f.holds) == 1 and f.points == 2 and f.ratio_min == 0.26
    text = pt.sensitivity(f, 0.25, 0.10)
    assert "at **1 of 3** points" in text
    assert text.index("global batch at 268 M") < text.index("precision at fp8")     # largest move first
    assert "The claim holds at global batch = 268 M (batch-limited)" in pt.sensitivity_takeaway(f, 0.25)


def test_validation_sentence_uses_the_named_targets():
    f = at.ValidationFindings(korthikanti_mean=0.031, korthikanti_max=0.05, others_median=0.088, others_count=43,
                              dev_median=0.075, held_out_median=0.133, held_out_count=20, others_within_target=0.58,
                              good_groups=("a",), worst=pd.DataFrame({"case": ["c"], "group": ["g"], "error": [1.5],
                                                                      "unit": ["u"]}), group_median={"g": 0.09})
    text = pt.validation(f)
    assert "**3.1%** (target 3%, missed; Calculon 3.65%)" in text and "over 43 cases, 58% of them within 10%" in text
    met = pt.validation(dataclasses.replace(f, korthikanti_mean=0.029))
    assert "**2.9%** (target 3%, met; Calculon 3.65%)" in met
    assert "**7.5%** on the cases the model was built on and **13.3%** on the 20 runs" in text
    assert "c (g, +150% in u)" in pt.validation_takeaway(f) and "g 9%" in pt.validation_takeaway(f)


def test_inference_validation_says_above_or_within_the_target():
    f = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.13, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30, "mlperf-x", 1.5)
    assert "13.0%, within the 15% target" in pp.inference_validation(f)
    assert "~29 us of PyTorch dispatch" in pp.inference_validation(f)
    assert "a median **30.0%** on the 92 max-load cases (above the 15% target), 1 of them by more than 2x" in \
        pp.inference_validation(f)
    # as a user: the same named target, two decimals where one would print the target itself
    user_near = dataclasses.replace(f, user_median_abs=0.1522)
    assert "a median **15.2%** on the 92 max-load cases (above the 15% target)" in pp.inference_validation(user_near)
    user_within = dataclasses.replace(f, user_median_abs=0.1457)
    assert "a median **14.6%** on the 92 max-load cases (within the 15% target)" in pp.inference_validation(user_within)
    assert "30 MLPerf Inference runs" in pp.inference_validation(f)
    assert "Offline (max-load) median is **16%**" in pp.inference_validation(f)
    assert "off by a median 65%" in pp.inference_validation(f) and "the worst mlperf-x at +150%" in pp.inference_validation(f)
    none = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.13, 29.4e-6, 0.30, 1, 92, float("nan"), float("nan"), 0)
    assert "MLPerf" not in pp.inference_validation(none) and "nan" not in pp.inference_validation(none)
    above = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.20, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30)
    assert "20.0%, above the 15% target" in pp.inference_validation(above)
    # a median that one decimal would print as the target itself gets two: "15.05%, above the 15% target"
    near = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.15049, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30)
    assert "15.05%, above the 15% target" in pp.inference_validation(near)
    long = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.13, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30, "mlperf-x", 1.5,
                                11, -0.54, 0.17, "h200-interactive")
    assert "its 11 runs now lie between -54% and +17%, the low end h200-interactive" in pp.inference_validation(long)
    assert "MLPerf v6.0 DeepSeek-R1 Offline" not in pp.inference_validation(long)
    dsr1 = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.13, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30, "mlperf-x", 1.5,
                                dsr1_v60_offline_cases=8, dsr1_v60_offline_min_error=-0.091,
                                dsr1_v60_offline_max_error=0.031)
    text = pp.inference_validation(dsr1)
    assert "'batch_scheduler_policy': 'max_util'" in text
    assert "the 8 MLPerf v6.0 DeepSeek-R1 Offline runs lie between -9% and +3%" in text
    assert "The frontier is a steady state" not in text
    runs_ = ap.InferenceFindings(0.09, 0.17, 0.42, 0.31, 0.13, 29.4e-6, 0.30, 1, 92, 0.16, 0.65, 30,
                                 user_steady_cases=78, user_steady_median_abs=0.128, user_finite_cases=196,
                                 user_finite_median_abs=0.276, user_finite_requests_median_abs=0.243)
    text = pp.inference_validation(runs_)
    assert "the 78 runs long enough to be one" in text and "off by a median **13%**" in text
    assert "the 196 finite runs" in text and "by 28%, and by 24% when the user states the count too" in text


def test_inference_findings_read_the_long_prompt_runs_from_the_table():
    vt = pd.DataFrame({"case": ["a", "b", "c", "d"], "group": ["x", "y", "mlperf-inf-v50", "z"],
                       "model": [ap.LONG_PROMPT_MODEL, ap.LONG_PROMPT_MODEL, ap.LONG_PROMPT_MODEL, "Other"],
                       "measured": [1.0] * 4, "error": [-0.4, 0.1, 0.3, -0.9],
                       "latency_limited": [True, True, False, True]})
    vu = pd.DataFrame({"measured": [1.0], "predicted": [1.1], "error": [0.1]})
    f = ap.inference_findings(vt, vu)
    assert (f.long_prompt_slo_cases, f.long_prompt_slo_min_case) == (2, "a")
    assert (f.long_prompt_slo_min_error, f.long_prompt_slo_max_error) == (-0.4, 0.1)
    assert f.dsr1_v60_offline_cases == 0


def test_inference_findings_split_the_user_cases_by_run_length():
    vt = pd.DataFrame({"case": ["a"], "group": ["x"], "model": ["M"], "measured": [1.0], "error": [0.1],
                       "latency_limited": [False]})
    vu = pd.DataFrame({"measured": [1.0] * 5, "predicted": [1.1, 0.8, 1.5, 2.0, 1.2],
                       "error": [0.1, -0.2, 0.5, 1.0, 0.2], "requests": [np.nan, np.nan, 3000, 1000, 500],
                       "error_with_requests": [np.nan, np.nan, 0.1, -0.3, np.nan]})
    f = ap.inference_findings(vt, vu)
    assert (f.user_steady_cases, f.user_finite_cases) == (2, 3)
    assert f.user_steady_median_abs == pytest.approx(0.15) and f.user_finite_median_abs == pytest.approx(0.5)
    assert f.user_finite_requests_median_abs == pytest.approx(0.2)      # the refused (NaN) call is left out
    table = vi.user_error_by_run_length(vu)
    assert list(table.cases) == [2, 3, 2] and table.signed_median.iloc[2] == pytest.approx(-0.1)


def test_inference_findings_read_the_v60_deepseek_offline_runs():
    cases = ["heldout6-mlperf60-dell-deepseek-r1-b300x8-offline", "heldout6-mlperf60-dell-deepseek-r1-b300x8-server",
             "mlperf51-deepseek-r1-b200x8-offline", "heldout24-mlperf60-coreweave-deepseek-r1-gb300x8-offline"]
    vt = pd.DataFrame({"case": cases, "group": ["x"] * 4, "model": ["DeepSeek-R1"] * 4, "measured": [1.0] * 4,
                       "error": [-0.05, 0.4, 0.9, 0.02], "latency_limited": [False, True, False, False]})
    vu = pd.DataFrame({"measured": [1.0], "predicted": [1.1], "error": [0.1]})
    f = ap.inference_findings(vt, vu)
    assert (f.dsr1_v60_offline_cases, f.dsr1_v60_offline_min_error, f.dsr1_v60_offline_max_error) == (2, -0.05, 0.02)


def test_vera_sentence_quotes_the_parameter():
    w = SimpleNamespace(sandbox_cpu_s=30.0, sandbox_cpus=4096, cpu_speed_factor=1.5)
    text = pp.vera(w, 0.007, 0.09)
    assert "Vera's +50%" in text and "**0.7%**" in text and "**9%**" in text


def test_campaign_sentence_compares_both_accelerators():
    camp = {"A": SimpleNamespace(steps=2000, days=40.0, cost_usd=0.6e6),
            "B": SimpleNamespace(steps=2000, days=20.0, cost_usd=0.9e6)}
    text = pp.campaign(camp, {"A": {"usd_per_gpu_hour": 2.0}, "B": {"usd_per_gpu_hour": 4.0}}, "A", "B")
    assert "**2.0x faster**" in text and "dearer by 33%" in text and "$2.00 vs $4.00" in text


def test_workflow_rows_are_found_by_label_not_position():
    pol = pd.DataFrame({"policy": ["reliable rollback: retry a failed step", "one attempt, failure found at the end"],
                        "success_probability": [0.999, 0.774], "usd_per_success": [0.003, 0.0037]})
    w = ef.workflow(pol)
    assert (w.success_no_retry, w.success_rollback) == (0.774, 0.999)
    assert "one attempt succeeds 77.4%" in pe.workflow(w, 0.95, 5) and "lifts that to 99.9%" in pe.workflow(w, 0.95, 5)


def test_break_even_takeaway_quotes_the_analysts_range():
    assert "analysts' $7.8-9.1M" in pe.break_even_takeaway(7.8e6, 9.1e6)
    assert "analysts' $5.0-6.0M" in pe.break_even_takeaway(5e6, 6e6)


def test_verdict_list_shortens_claims_and_shows_conditions():
    ledger = pd.DataFrame([{"claim": "x" * 100, "estimate": "", "verdict": "supported only if", "condition": "if y",
                            "deciding_assumption": "d"}])
    assert pe.verdicts(ledger) == f"- **{'x' * 90}…** — no estimate: *supported only if* if y (deciding: d)."


def test_operating_points_takeaway_splits_server_and_interactive_and_names_refusals():
    ops = pd.DataFrame({"case": ["a-server", "b-interactive", "c-server", "d-server"],
                        "scenario": ["Server", "Interactive", "Server", "Server"],
                        "model": ["M1", "M1", "M2", "M2"], "accelerator": ["B200", "B200", "H200", "H100-SXM"],
                        "in_flight_per_gpu": [1500.0, 270.0, 600.0, 500.0], "error": [-0.03, -0.23, 0.02, np.nan],
                        "refused": ["", "", "", "the KV cache does not fit"]})
    text = pp.operating_points(ops)
    assert "Over 3 runs" in text and "median **3%**" in text
    assert "Server loads (2 runs, 600 to 1,500 queries" in text and "from -3% to +2%" in text
    assert "Interactive loads (1 run, 270 to 270" in text and "b-interactive (M1 on B200, -23%)" in text
    assert "1 run held more queries than the model's memory model fits (d-server)" in text
    assert "held more" not in pp.operating_points(ops[ops.refused == ""])
    assert pp.operating_points(ops[ops.refused != ""]).endswith("could be predicted.")


def test_bias_takeaway_names_the_extremes_among_large_families():
    """The most optimistic and most pessimistic families of at least BIAS_MIN_CASES cases, the even ones, and a
    refusal when no family is large enough."""
    t = pd.DataFrame({"family": ["A", "B", "C", "D"], "architecture": ["dense", "MoE", "dense", "MoE"],
                      "generation": ["g"] * 4, "cases": [40, 12, 30, 3], "lean": [0.02, 0.31, -0.15, 0.9]})
    s = pt.bias(t)
    assert "most optimistic about B, MoE, g (+31% over 12)" in s
    assert "most pessimistic about C, dense, g (-15% over 30)" in s
    assert "A, dense, g (+2% over 40)" in s and "D, MoE" not in s
    with pytest.raises(ValueError, match="no family"):
        pt.bias(t[t["cases"] < 10])
