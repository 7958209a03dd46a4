"""Tests for intelligence_per_dollar.analysis.claims: the ledger is computed, rule-based and responsive."""

from __future__ import annotations

import math

import numpy as np
import pytest

from intelligence_per_dollar.analysis import claims as cl
from intelligence_per_dollar.sources import assumptions as assumption_files
from intelligence_per_dollar.sources import io, workloads

N = 2000
FAST_IDS = ["rubin_50_vs_20_pf", "rubin_ultra_100_pf", "rack_72_gpus_36_cpus", "swe_bench_717", "no_rack_price"]


@pytest.fixture(scope="module")
def ledger():
    return cl.ledger(n=N, seed=1, training_range=False)


def test_ledger_has_one_row_per_claim_and_all_columns(ledger):
    assert list(ledger.columns) == list(cl.COLUMNS)
    assert list(ledger["id"]) == list(cl.claims())
    assert set(ledger["verdict"]) <= set(cl.VERDICTS)
    for _, r in ledger.iterrows():
        assert r["claim"] and r["source"]
        assert r["link"].startswith("nbs/") and ".html" in r["link"]
    checked = ledger[ledger["verdict"] != "cannot be checked"]
    assert len(checked) >= 1
    assert ((checked["p5"] <= checked["p50"]) & (checked["p50"] <= checked["p95"])).all()


def test_ledger_covers_every_claim_of_the_seed():
    ids = set(cl.claims())
    for want in ("train_quarter_gpus", "rubin_50_vs_20_pf", "rubin_ultra_100_pf", "rack_72_gpus_36_cpus",
                 "weight_sync_2s", "vera_cpu_30pct", "swe_bench_717", "swe_fix_value", "inference_10x_cost",
                 "no_rack_price"):
        assert want in ids


def test_hardware_rows_are_computed_from_the_catalogue(ledger):
    r = ledger.set_index("id")
    assert r.loc["rubin_50_vs_20_pf", "p50"] == pytest.approx(2.5)
    # headline 50/20 = 2.5x, but dense 35/10 = 3.5x: true only as headlines
    assert r.loc["rubin_50_vs_20_pf", "verdict"] == "supported only if"
    assert "3.50x" in r.loc["rubin_50_vs_20_pf", "condition"]
    assert r.loc["rack_72_gpus_36_cpus", "verdict"] == "supported"
    # no primary source: cannot be checked, whatever the estimate
    assert r.loc["swe_bench_717", "verdict"] == "cannot be checked"
    assert r.loc["vera_cpu_30pct", "verdict"] == "cannot be checked"


def test_changing_one_assumption_changes_the_ledger():
    base = cl.ledger(n=N, seed=1, only=FAST_IDS).set_index("id")
    cheap = cl.ledger({"GB200-NVL72.system_price_usd": 2.0e6}, n=N, seed=1, only=FAST_IDS).set_index("id")
    # a cheaper GB200 rack lowers the price at which Vera Rubin breaks even
    assert cheap.loc["no_rack_price", "p50"] < base.loc["no_rack_price", "p50"]
    steps = cl.ledger({"swe_agent_steps": 5}, n=N, seed=1, only=["swe_bench_717"]).set_index("id")
    assert steps.loc["swe_bench_717", "p50"] == pytest.approx(0.717 ** 0.2, rel=0.01)   # k fixed at 5
    assert steps.loc["swe_bench_717", "p50"] != base.loc["swe_bench_717", "p50"]


def test_break_even_verdict_flips_with_the_reference_price():
    lo = cl.ledger({"GB200-NVL72.system_price_usd": 0.5e6}, n=N, seed=1, only=["no_rack_price"]).iloc[0]
    hi = cl.ledger({"GB200-NVL72.system_price_usd": 8.0e6}, n=N, seed=1, only=["no_rack_price"]).iloc[0]
    assert lo["p50"] < hi["p50"]
    assert (lo["verdict"], hi["verdict"]) == ("contradicted", "supported")


def test_same_seed_same_ledger():
    a = cl.ledger(n=N, seed=3, only=FAST_IDS)
    b = cl.ledger(n=N, seed=3, only=FAST_IDS)
    np.testing.assert_array_equal(a[["p5", "p50", "p95"]].to_numpy(float), b[["p5", "p50", "p95"]].to_numpy(float))
    assert list(a["verdict"]) == list(b["verdict"])


@pytest.mark.parametrize("rule, args, want", [
    ("at_least", (4, 4.2, 5, 6), "supported"),
    ("at_least", (4, 2, 3, 3.5), "contradicted"),
    ("at_least", (4, 3, 4, 5), "supported only if"),
    ("at_most", (2, 1.2, 1.4, 1.6), "supported"),
    ("at_most", (2, 2.5, 3, 4), "contradicted"),
    ("at_most", (2, 1.5, 1.9, 2.4), "supported only if"),
    ("up_to", (10, 9, 11, 12), "supported"),
    ("up_to", (10, 5, 7, 10.5), "supported only if"),
    ("up_to", (10, 3, 4, 5), "contradicted"),
    ("equals", (72, 72, 72, 72), "supported"),
    ("equals", (72, 64, 64, 64), "contradicted"),
    ("unverifiable", (1.3, 1, 1, 1), "cannot be checked"),
])
def test_verdict_rules(rule, args, want):
    assert cl.decide(rule, *args).verdict == want


def test_headline_and_price_rules():
    assert cl.decide("headline", 2.5, 2.5, 2.5, 2.5, 0.02, dense_ratio=3.5).verdict == "supported only if"
    assert cl.decide("headline", 2.0, 2.0, 2.0, 2.0, 0.02, dense_ratio=2.0).verdict == "supported"
    assert cl.decide("headline", 2.5, 2.0, 2.0, 2.0, 0.02).verdict == "contradicted"
    assert cl.decide("price_below", 7.8e6, 10e6, 12e6, 14e6, price_low=7.8e6, price_high=9.1e6).verdict == "supported"
    assert cl.decide("price_below", 7.8e6, 3e6, 4e6, 5e6, price_low=7.8e6, price_high=9.1e6).verdict == "contradicted"
    v = cl.decide("price_below", 7.8e6, 7e6, 8e6, 9e6, price_low=7.8e6, price_high=9.1e6)
    assert v.verdict == "supported only if" and "$8.0M" in v.condition
    assert cl.decide("at_least", 4, math.nan, math.nan, math.nan).verdict == "cannot be checked"


@pytest.mark.parametrize("call, match", [
    (lambda: cl.decide("maybe", 1, 1, 1, 1), "rule='maybe'"),
    (lambda: cl.decide("at_least", 1, 3, 2, 1), "not ordered"),
    (lambda: cl.ledger(n=10), "n=10"),
    (lambda: cl.ledger(only=["nope"]), "nope"),
    (lambda: cl.ledger({"no_such_assumption": 1.0}, only=FAST_IDS), "no_such_assumption"),
    (lambda: cl.ledger({"pue": (2.0, 1.0, 3.0)}, only=FAST_IDS), "low <= central <= high"),
    (lambda: cl.ledger(training_precision="int3", only=FAST_IDS), "training_precision='int3'"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_section_links_match_sphinx_anchors():
    assert cl.section_link("01_hardware", "1.2 “50 PF FP4 vs 20 PF for Blackwell”, reconciled") == \
        "nbs/01_hardware.html#pf-fp4-vs-20-pf-for-blackwell-reconciled"
    assert cl.section_link("02_training") == "nbs/02_training.html"


def test_bad_claims_file_names_row_and_column(tmp_path):
    src = io.data_path("claims", "claims.csv").read_text().splitlines()
    header = [l for l in src if not l.startswith("#")][0]
    f = tmp_path / "claims.csv"
    f.write_text(header + "\nx,quote,https://a.b,2026-11-29,vendor-claimed,1,x,sometimes,0,04,,\n")
    with pytest.raises(io.DataError, match="row 2, column 'rule'"):
        cl.parse_claims(f)


def test_relative_to_claim_and_counts(ledger):
    rel = cl.relative_to_claim(ledger)
    assert set(rel["id"]) <= set(ledger["id"])
    assert "swe_bench_717" not in set(rel["id"])
    counts = cl.verdict_counts(ledger)
    assert sum(counts.values()) == len(ledger) and list(counts) == list(cl.VERDICTS)


def test_overrides_from_parameters():
    o = cl.overrides({"Vera-Rubin-NVL72": 7.8e6}, pue=None, utilisation=0.7)
    assert o == {"Vera-Rubin-NVL72.system_price_usd": 7.8e6, "utilisation": 0.7}
    recs = cl.all_assumptions(o)
    assert recs["utilisation"].low == recs["utilisation"].high == 0.7
    assert assumption_files.centrals(recs)["Vera-Rubin-NVL72.system_price_usd"] == 7.8e6


@pytest.mark.parametrize("rule, value, want", [
    ("at_least", 4 / 1.1, True), ("at_least", 4 / 1.1 - 1e-9, False),
    ("up_to", 10 / 1.1, True), ("up_to", 9.0, False),
    ("at_most", 0.25 * 1.1, True), ("at_most", 0.25 * 1.1 + 1e-9, False),
])
def test_the_tolerance_bar(rule, value, want):
    claimed = 0.25 if rule == "at_most" else (10 if rule == "up_to" else 4)
    assert cl.meets_claim(value, claimed, 0.10, rule) is want


def test_a_claim_and_its_inverse_meet_the_same_bar():
    """"One-quarter the GPUs" (chapter 2: candidate/reference, at most) and "4x fewer" (the ledger:
    reference/candidate, at least) accept exactly the same fleets."""
    for ref_gpus, cand_gpus in ((1000, 270), (1000, 275), (1000, 276), (1000, 300), (1000, 250)):
        quarter = cl.meets_claim(cand_gpus / ref_gpus, 0.25, 0.10, "at_most")
        fourfold = cl.meets_claim(ref_gpus / cand_gpus, 4.0, 0.10, "at_least")
        assert quarter == fourfold, (ref_gpus, cand_gpus)
    assert cl.meets_claim(None, 4.0, 0.1, "at_least") is False
    assert cl.meets_claim(math.nan, 4.0, 0.1, "at_least") is False
    assert cl.decide("at_least", 4.0, 3.64, 3.7, 3.8, 0.10).verdict == "supported"   # 3.64 >= 4 / 1.1 = 3.636
    assert cl.decide("at_least", 4.0, 3.62, 3.7, 3.8, 0.10).verdict == "supported only if"


@pytest.mark.parametrize("call, match", [
    (lambda: cl.claim_bar(1.0, 0.1, "equals"), "rule='equals'"),
    (lambda: cl.claim_bar(1.0, -0.1, "at_least"), "tolerance=-0.1"),
])
def test_bad_tolerance_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_training_claim_is_the_training_workloads():
    """The ledger judges "one-quarter the GPUs" with the 10T workload's ratio and tolerance."""
    w = workloads.training()
    c = cl.claims()["train_quarter_gpus"]
    assert c.claimed_value == pytest.approx(1 / w.claimed_gpu_ratio)
    assert c.tolerance == pytest.approx(w.claim_tolerance)
    assert w.active_params_assumption in cl.all_assumptions()


def test_weight_sync_row_is_chapter_3s_prediction_of_the_published_case(ledger):
    from intelligence_per_dollar.analysis import validation_weight_sync

    pred = validation_weight_sync.weight_sync_table().set_index("case").loc["pplx-kimi-k2", "predicted"]
    row = ledger.set_index("id").loc["weight_sync_2s"]
    assert row["p50"] == pytest.approx(pred, rel=1e-12)
    assert row["p5"] < row["p50"] < row["p95"]


def test_rl_step_is_chapter_3s_workload_step():
    """The ledger's RL step: the RL workload with chapter 3's derate, owner price and Vera CPUs."""
    from intelligence_per_dollar.model import post_training

    for acc in ("GB200", "VR200"):
        mine, ch3 = cl.rl_step(acc), post_training.workload_step(acc)
        assert mine.step_time_s == ch3.step_time_s and mine.cost_usd == ch3.cost_usd
    vr = cl.rl_step("VR200")   # priced at the owner $/GPU-hour, not rl_step's flat default
    owner = post_training.owner_usd_per_gpu_hour("VR200")
    assert owner != 3.0
    assert vr.cost_breakdown_usd["rollout_gpus"] == pytest.approx(vr.rollout_gpus * vr.step_time_s / 3600 * owner)
    assert cl.rl_gpu_hour_ratio("GB200", "VR200") == pytest.approx(
        cl.rl_step("GB200").step_time_s / cl.rl_step("VR200").step_time_s)


def test_serving_uses_the_catalogue_model():
    w = workloads.serving()
    fr = cl.serving_frontier(w.model, cl.REFERENCE_SYSTEM)
    assert len(fr) and (fr["output_tokens_per_s_per_gpu"] > 0).any()
    with pytest.raises(ValueError, match="model='no-such-model'"):
        cl.serving_frontier("no-such-model", cl.REFERENCE_SYSTEM)


def test_a_system_that_cannot_train_the_model_keeps_its_lifecycle_row():
    """HGX-H100 (8 racks = 64 GPUs) cannot hold the serving model's training state: the row stays,
    with NaN numbers and the reason, instead of vanishing."""
    recs = cl.all_assumptions()
    life = cl.lifecycle_table(recs, ["HGX-H100", cl.REFERENCE_SYSTEM], N, 1)
    assert list(life["system"]) == ["HGX-H100", cl.REFERENCE_SYSTEM]
    h100, ref = life.iloc[0], life.iloc[1]
    assert h100["note"].startswith("cannot be checked: ") and math.isnan(h100["p50"])
    assert ref["note"] == "" and ref["p5"] <= ref["p50"] <= ref["p95"]
    assert ref["post_training_gpu_hours"] == pytest.approx(cl.rl_campaign("GB200").gpu_hours)


def test_break_even_uses_are_keyed():
    recs = cl.all_assumptions()
    be = cl.break_even_table(recs, N, 1).set_index("key")
    assert list(be.index) == ["training", "serving", "rl"]
    assert be.loc["rl", "gpu_hour_ratio"] == pytest.approx(cl.rl_gpu_hour_ratio("GB200", "VR200"))
    assert (be["p5"] <= be["p50"]).all() and (be["p50"] <= be["p95"]).all()


def test_the_measured_rack_comparison_prices_measured_tokens():
    """MLPerf v6.1's DeepSeek-R1 cells on whole NVL72 racks: the ratios follow from the measured tokens/s and each
    system's cost per GPU-hour, and a dearer candidate GPU-hour lowers the cost ratio in proportion."""
    from intelligence_per_dollar.model import economics
    from intelligence_per_dollar.sources import runs

    central = assumption_files.centrals(cl.all_assumptions(cl.overrides({})))
    t = cl.mlperf_rack_comparison(central)
    assert list(t["scenario"]) == ["Offline", "Server", "Interactive"]
    ref, cand = cl.REFERENCE_SYSTEM, cl.CANDIDATE_SYSTEM
    measured = {c["id"]: c["measured"] for c in runs.inference_runs()}
    off = t.iloc[0]
    assert off[f"{cand} tokens/s/GPU"] == measured["heldout38-mlperf61-nvidia-deepseek-r1-vr200x72-offline"]
    assert off[f"{ref} tokens/s/GPU"] == measured["heldout38-mlperf61-nvidia-deepseek-r1-gb200x72-offline"]
    gph = {s: float(economics.system_usd_per_gpu_hour(central, s)) for s in (ref, cand)}
    for r in t.to_dict("records"):
        assert r["throughput_ratio"] == pytest.approx(r[f"{cand} tokens/s/GPU"] / r[f"{ref} tokens/s/GPU"])
        assert r["cost_ratio"] == pytest.approx(r["throughput_ratio"] * gph[ref] / gph[cand])
        assert 1.0 < r["throughput_ratio"] < 10.0
    key = economics.price_key(cand)
    dearer_values = {**central, key: 2.0 * float(np.asarray(central[key]).ravel()[0])}
    dearer = cl.mlperf_rack_comparison(dearer_values)
    gph_dearer = float(economics.system_usd_per_gpu_hour(dearer_values, cand))
    assert gph_dearer > gph[cand]
    assert np.allclose(dearer["cost_ratio"], t["cost_ratio"] * gph[cand] / gph_dearer)
    assert cl.mlperf_rack_comparison(central, reference="HGX-H100").empty      # no H100 rack in that round
