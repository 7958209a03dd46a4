"""Open-loop serving (model.serving_arrivals): Poisson arrivals into a continuous-batching rank, latencies read at a
percentile, and serving_slo.best_under_slo(arrivals="poisson")."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_arrivals as arr
from intelligence_per_dollar.model import serving_slo as slo

CASE = ("Llama-3.1-8B", "H100-SXM", 1, "bf16", 8000, 300)     # long prompts: prefill iterations stand out


@pytest.fixture(scope="module")
def rank():
    ctx = inf.serving_context(*CASE)
    return ctx, arr.iteration_table(ctx, 1, 1, 1, 512, 8192)


def test_the_iteration_table_is_the_serving_model_itself(rank):
    """The table is the closed model's own iteration (no second model): the steady state's mean iteration, an average
    over how many whole prompts an iteration carries (Poisson, ``b ISL / OSL`` tokens on average), is the same
    average of the table's iterations."""
    ctx, table = rank
    for b in (4.0, 32.0, 128.0):
        r = inf.evaluate(ctx, {"tp": np.array([1.0]), "dp": np.array([1.0]), "ep": np.array([1.0]),
                               "replicas": np.array([1.0]), "concurrency": np.array([b])})
        lam = b / ctx.osl                                  # prompts per iteration
        j = np.arange(40)
        pois = np.exp(-lam + j * np.log(lam) - np.cumsum(np.log(np.maximum(j, 1))))
        mean = sum(p * table(b, k * ctx.isl) for k, p in zip(j, pois))
        assert mean == pytest.approx(r["step_s"][0], rel=0.02)


def test_a_trickle_of_requests_runs_each_alone(rank):
    """Far below capacity every request finds an idle server: TPOT is the one-sequence decode step and TTFT one
    iteration with the whole prompt (plus at most one iteration waiting for the boundary); p99 close to the mean."""
    ctx, table = rank
    sim = arr.simulate(table, 0.002, ctx.isl, np.full(600, ctx.osl), 512, 8192, np.inf)
    mid = arr.window(sim)
    tpot, ttft = sim["tpot_s"][mid], sim["ttft_s"][mid]
    assert np.all(tpot >= table(1, 0) * 0.999) and np.percentile(tpot, 95) == pytest.approx(table(1, 0), rel=0.01)
    assert np.all(ttft >= table(0, ctx.isl) * 0.999) and np.percentile(ttft, 95) == pytest.approx(table(0, ctx.isl),
                                                                                                  rel=0.01)


def test_latencies_grow_with_the_arrival_rate(rank):
    ctx, table = rank
    cap = ctx.osl / (ctx.osl * table(128, 128 * ctx.isl / ctx.osl)) * 128 / ctx.osl   # requests/s near 128 in flight
    p99 = [arr.latency_percentiles(arr.simulate(table, f * cap, ctx.isl, np.full(800, ctx.osl), 512, 8192, np.inf), 0.99)
           for f in (0.1, 0.4, 0.8)]
    assert p99[0][0] <= p99[1][0] <= p99[2][0] and p99[0][1] <= p99[1][1] <= p99[2][1]


@settings(max_examples=25, deadline=None)
@given(st.floats(min_value=0.05, max_value=4.0), st.integers(min_value=1, max_value=400), st.integers(0, 40),
       st.sampled_from([512.0, np.inf]))
def test_every_request_finishes_after_its_first_token(rank, rate, out_mean, warm, piece):
    """Whatever the load: every request finishes, no earlier than its first token, which comes after it arrives;
    TPOT is at least the fastest decode step; the warm requests carry no latencies."""
    ctx, table = rank
    out = np.random.default_rng(out_mean).integers(1, 2 * out_mean + 1, 200)
    sim = arr.simulate(table, rate, ctx.isl, out, 64, 8192, piece, warm=warm)
    assert np.all(np.isfinite(sim["finish_s"]))
    new = slice(sim["warm"], None)
    assert np.all(sim["ttft_s"][new] > 0)
    assert np.all(np.isnan(sim["ttft_s"][:sim["warm"]]))
    tpot = sim["tpot_s"][new][out[new] > 1]
    assert np.all(tpot >= table(1, 0) * 0.999)


def test_steady_in_flight_is_littles_law_and_refuses_an_overload(rank):
    ctx, table = rank
    L = arr.steady_in_flight(table, 0.5, ctx.isl, ctx.osl, 512)
    assert L == pytest.approx(0.5 * ctx.osl * table(L, L * ctx.isl / ctx.osl), rel=1e-5)
    full = 512 / (ctx.osl * table(512, 512 * ctx.isl / ctx.osl))       # the rank's capacity, requests/s
    assert np.isinf(arr.steady_in_flight(table, 1.01 * full, ctx.isl, ctx.osl, 512))


def test_random_arrivals_cost_throughput_under_a_p99_limit():
    """Long prompts arriving at random make the iterations that carry them long: at the closed system's best rate
    under a mean-TPOT limit, the p99 TPOT is over it, so the open system's best rate is lower (here ~20% lower), and
    its percentiles meet the limits while its mean TPOT sits well under them."""
    steady = slo.best_under_slo(*CASE, max_ttft_s=2.0, max_tpot_s=0.05)
    poisson = slo.best_under_slo(*CASE, max_ttft_s=2.0, max_tpot_s=0.05, arrivals="poisson")
    assert poisson["output_tokens_per_s_per_gpu"] < 0.9 * steady["output_tokens_per_s_per_gpu"]
    assert poisson["tpot_percentile_s"] <= 0.05 and poisson["ttft_s"] <= 2.0
    assert 1.0 / poisson["tokens_per_s_per_user"] < 0.8 * poisson["tpot_percentile_s"]
    assert poisson["arrival_rate_per_s"] * CASE[5] == pytest.approx(poisson["output_tokens_per_s_per_gpu"], rel=0.01)


def test_bad_arrival_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="arrivals='uniform'"):
        slo.best_under_slo(*CASE, max_tpot_s=0.05, arrivals="uniform")
    with pytest.raises(ValueError, match="percentile"):
        slo.best_under_slo(*CASE, max_tpot_s=0.05, arrivals="poisson", percentile=0.0)
    with pytest.raises(ValueError, match="max_num_tokens=100.*below input_tokens=8000"):
        ctx = inf.serving_context(*CASE)
        arr.simulate(arr.iteration_table(ctx, 1, 1, 1, 8, 100), 1.0, ctx.isl, np.full(10, 3), 8, 100, np.inf)
