"""Serving under a latency target (model.serving_slo) and the latency-limited validation rows."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.analysis import validation_inference as vi
from intelligence_per_dollar.model import inference as inf, serving_slo
from intelligence_per_dollar.sources import runs

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
ARGS = (LLAMA70, "H200", 8, "fp8", 1000, 1000)


@pytest.fixture(scope="module")
def front():
    return inf.frontier(*ARGS)


def test_no_target_is_the_frontiers_max_throughput(front):
    row = serving_slo.best_under_slo(*ARGS)
    assert row["output_tokens_per_s_per_gpu"] == pytest.approx(front["output_tokens_per_s_per_gpu"].max())


def test_a_tpot_target_is_met_and_costs_throughput(front):
    tpot = 2.0 / front["tokens_per_s_per_user"].median()          # a target inside the frontier's range
    row = serving_slo.best_under_slo(*ARGS, max_tpot_s=tpot)
    assert 1.0 / row["tokens_per_s_per_user"] <= tpot
    assert row["output_tokens_per_s_per_gpu"] < front["output_tokens_per_s_per_gpu"].max()
    # no frontier point that meets the target serves more
    ok = 1.0 / front["tokens_per_s_per_user"] <= tpot
    assert row["output_tokens_per_s_per_gpu"] == pytest.approx(front.loc[ok, "output_tokens_per_s_per_gpu"].max())


@settings(max_examples=15, deadline=None)
@given(st.floats(0.005, 0.2), st.floats(0.5, 1.0))
def test_a_tighter_target_never_serves_more(tpot_s, tighter):
    try:
        loose = serving_slo.best_under_slo(*ARGS, max_tpot_s=tpot_s)["output_tokens_per_s_per_gpu"]
        tight = serving_slo.best_under_slo(*ARGS, max_tpot_s=tpot_s * tighter)["output_tokens_per_s_per_gpu"]
    except ValueError:
        return                                   # the tighter target is out of reach: refused, never NaN
    assert tight <= loose + 1e-9


def test_targets_out_of_reach_and_bad_values_are_refused():
    with pytest.raises(ValueError, match="max_tpot_s=1e-06"):
        serving_slo.best_under_slo(*ARGS, max_tpot_s=1e-6)
    with pytest.raises(ValueError, match="max_ttft_s"):
        serving_slo.best_under_slo(*ARGS, max_ttft_s=-1.0)
    with pytest.raises(ValueError, match="concurrency"):
        serving_slo.best_under_slo(*ARGS, concurrency=[8.0])


def test_latency_limited_runs_are_read_at_their_limits():
    server = [c for c in runs.inference_runs() if c.get("tpot_limit_s")]
    assert len(server) >= 5 and all(c["ttft_limit_s"] for c in server)
    case = next(c for c in server if "interactive" in c["id"])       # TPOT 40 ms binds for Llama 2 70B
    pred, est = vi.predict(case)
    assert 1.0 / est.tokens_per_s_per_user <= case["tpot_limit_s"] * (1 + 1e-9)
    at_max_load = vi.predict({**case, "tpot_limit_s": None, "ttft_limit_s": None})[0]
    assert pred < at_max_load
    # user-mode tables skip them (they are not max-load runs)
    assert case["id"] not in set(vi.user_table()["case"])


def test_a_ttft_target_looks_beyond_the_envelope():
    # TTFT is not an axis of the throughput-interactivity envelope: a point off it can meet a TTFT target that
    # every envelope point at high load misses (Llama 3.1 405B, 9.4k-token prompts on 8 H200)
    llama405 = dict(layers=126, d_model=16384, heads=128, kv_heads=8, d_ff=53248, vocab=128256)
    args = (llama405, "H200", 8, "fp8", 9429, 685)
    env = inf.frontier(*args)
    every = inf.frontier(*args, envelope=False)
    assert len(every) > len(env)
    row = serving_slo.best_under_slo(*args, max_ttft_s=2.0)
    assert row["ttft_s"] <= 2.0
    on_env = env.loc[env["ttft_s"] <= 2.0, "output_tokens_per_s_per_gpu"].max()
    assert row["output_tokens_per_s_per_gpu"] > on_env         # 30% more than the envelope offers
    assert row["output_tokens_per_s_per_gpu"] == pytest.approx(
        every.loc[every["ttft_s"] <= 2.0, "output_tokens_per_s_per_gpu"].max())
    with pytest.raises(ValueError, match="max_tpot_s=0.1 has no meaning for mode='prefill'"):
        serving_slo.best_under_slo(*args, max_tpot_s=0.1, mode="prefill")
