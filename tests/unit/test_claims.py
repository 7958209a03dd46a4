"""Tests for intelligence_per_dollar.analysis.claims: the ledger is computed, rule-based and responsive."""

from __future__ import annotations

import math

import numpy as np
import pytest

from intelligence_per_dollar.analysis import claims as cl
from intelligence_per_dollar.model import economics as e
from intelligence_per_dollar.sources import io

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
        if r["verdict"] != "cannot be checked":
            assert r["p5"] <= r["p50"] <= r["p95"]


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
    if lo["verdict"] != "cannot be checked":
        assert lo["p50"] < hi["p50"]
        assert hi["verdict"] == "supported"


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
    assert e.centrals(recs)["Vera-Rubin-NVL72.system_price_usd"] == 7.8e6
