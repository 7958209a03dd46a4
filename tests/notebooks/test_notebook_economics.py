"""Chapter 4 and the claims ledger (chapter 0): assertions on the numbers the session's one
execution recorded; alternative parameters through the lib functions the chapters call (the
ledger's own, e.g. a cheaper GB200 rack, are in tests/unit/test_claims.py); the explore panel. Its
latency is measured in benchmarks/bench_widgets.py."""

from __future__ import annotations

import pytest

from intelligence_per_dollar.analysis import claims
from intelligence_per_dollar.model import economics
from intelligence_per_dollar.sources import assumptions as assumption_files

#: Monte Carlo samples for the lib-level checks (the chapters default to 20,000).
N, SEED = 2000, 2026
REF, CAND = claims.REFERENCE_SYSTEM, claims.CANDIDATE_SYSTEM


def _ordered(d):
    return d["p5"] <= d["p50"] <= d["p95"]


@pytest.mark.slow
def test_economics_chapter_default(report_records):
    rec = report_records["04_intelligence_per_dollar"]["economics"]
    gph = rec["usd_per_gpu_hour"]
    assert set(gph) == {"HGX-H100", "HGX-H200", "GB200-NVL72", "GB300-NVL72", "Vera-Rubin-NVL72"}
    for s, d in gph.items():
        assert _ordered(d), s
    # owning a GB200 GPU-hour costs between the hyperscale TCO (~$1.9) and retail rental (~$4-4.5)
    assert 1.5 < gph["GB200-NVL72"]["p50"] < 5.0
    assert gph["Vera-Rubin-NVL72"]["p50"] > gph["GB200-NVL72"]["p50"]
    assert rec["break_even_usd"], "no break-even price recorded"
    for use, d in rec["break_even_usd"].items():
        assert _ordered(d) and d["p50"] > 0, use
    assert rec["usd_per_success"]
    for s, d in rec["usd_per_success"].items():
        assert _ordered(d), s
    # the seed's five-step workflow: rollback raises success and lowers cost per success
    assert rec["workflow_success_no_retry"] == pytest.approx(0.95 ** 5)
    assert rec["workflow_success_rollback"] > rec["workflow_success_no_retry"]
    assert rec["workflow_usd_per_success_rollback"] < rec["workflow_usd_per_success_no_retry"]
    assert _ordered(rec["serving_cost_ratio"])


def test_half_the_utilisation_doubles_the_cost_of_an_hour():
    """Chapter 4 with ``utilisation=0.5``: every cost term scales with 1/utilisation."""
    base = claims.gpu_hour_intervals(claims.all_assumptions(claims.overrides()), [CAND], N, SEED)
    alt = claims.gpu_hour_intervals(claims.all_assumptions(claims.overrides(utilisation=0.5)), [CAND], N, SEED)
    u_central = claims.all_assumptions()["utilisation"].central
    assert alt.set_index("system").loc[CAND, "central"] == pytest.approx(
        base.set_index("system").loc[CAND, "central"] * u_central / 0.5, rel=1e-6)


@pytest.mark.slow
def test_a_cheaper_gb200_rack_lowers_every_break_even_price():
    """Chapter 4 with a fixed GB200 price: $3M against $4M, everything else equal."""
    def break_even(price):
        recs = claims.all_assumptions(claims.overrides({REF: price}))
        return claims.break_even_table(recs, N, SEED).set_index("use")["p50"].dropna()

    cheap, dear = break_even(3.0e6), break_even(4.0e6)
    assert len(cheap) >= 1 and list(cheap.index) == list(dear.index)
    for use in cheap.index:
        assert cheap[use] < dear[use], use


def test_the_workflow_success_is_p_to_the_k():
    """Chapter 4 with ``step_success_probability=0.8, task_steps=10``."""
    central = assumption_files.centrals(claims.all_assumptions())
    pol = claims.policy_table(central, 1.0, 0.8, 10)
    assert pol["success_probability"].iloc[0] == pytest.approx(0.8 ** 10)
    assert pol["success_probability"].iloc[3] > pol["success_probability"].iloc[0]


@pytest.mark.slow
def test_claims_chapter_default(report_records):
    rec = report_records["00_claims"]["claims"]
    assert sum(rec["counts"].values()) == len(rec["verdicts"]) >= 10
    assert rec["verdicts"]["rubin_50_vs_20_pf"] == "supported only if"
    assert rec["verdicts"]["swe_bench_717"] == "cannot be checked"
    assert rec["verdicts"]["rack_72_gpus_36_cpus"] == "supported"
    assert rec["p50"]["no_rack_price"] > 0


def test_explore_panel_recomputes_on_a_control_change():
    from intelligence_per_dollar.views import widgets_economics as we

    inp = we.inputs()
    r = we.compute(7.8, 0.95, 5, 0.85, inp=inp)
    assert set(r["table"]["system"]) == set(we.SYSTEMS)
    table, chart = we.render(r)
    assert "USD per success" in table and chart is not None
    panel = we.panel(inp)
    panel.controls["step_success_probability"].value = 0.8
    assert panel.result["p"] == 0.8
