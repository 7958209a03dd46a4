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


def test_a_multi_gpu_layout_converts_per_rank_rates_to_per_gpu_and_stays_in_memory():
    """Eight GPUs: the rate of all ranks times the mean output over the GPUs is the row's tokens/s per GPU, the
    sequences the engine holds fit its memory, the memory reported is the layout's own at that concurrency, and the
    open system never beats the steady state under the same limits."""
    case = ("Llama-3.1-70B", "H100-SXM", 8, "fp8", 4000, 400)
    steady = slo.best_under_slo(*case, max_ttft_s=3.0, max_tpot_s=0.06)
    row = slo.best_under_slo(*case, max_ttft_s=3.0, max_tpot_s=0.06, arrivals="poisson")
    assert row["arrival_rate_per_s"] * case[5] / case[2] == pytest.approx(row["output_tokens_per_s_per_gpu"], rel=1e-6)
    layout = {k: np.array([float(row[k])]) for k in ("tp", "dp", "ep", "pp", "replicas", "offload")}
    ctx = inf.serving_context(*case)
    assert row["concurrency"] <= inf.max_concurrency(ctx, layout, steady=False)[0]
    assert row["memory_per_gpu_bytes"] <= inf.evaluate(ctx, {**layout, "concurrency": np.array([1.0])})["usable_bytes"]
    assert row["output_tokens_per_s_per_gpu"] <= steady["output_tokens_per_s_per_gpu"] * (1 + 1e-9)
    assert row["ttft_s"] <= 3.0 and row["tpot_percentile_s"] <= 0.06


def test_max_rate_is_the_edge_of_the_limits(rank):
    """The rate max_rate returns meets the p99 limit and 5% more does not (the bisection's bracket is 0.2%)."""
    ctx, _ = rank
    r = arr.max_rate(ctx, 1, 1, 1, 20.0, max_ttft_s=None, max_tpot_s=0.05)
    assert 0 < r["rate_per_s"] < 20.0 and r["tpot_s"] <= 0.05
    more = arr.max_rate(ctx, 1, 1, 1, 1.05 * r["rate_per_s"], max_ttft_s=None, max_tpot_s=0.05, steps=1)
    assert more["rate_per_s"] < 1.05 * r["rate_per_s"]          # the upper bracket itself missed the limit


def test_the_warm_start_begins_at_the_steady_occupancy(rank):
    """Warm requests are decoding at time 0 (no latencies of their own) and the window skips them: the first window
    request arrives after every warm one, and the run's early occupancy is already near Little's law."""
    ctx, table = rank
    L = arr.steady_in_flight(table, 2.9, ctx.isl, ctx.osl, 512)
    warm = int(round(L))
    assert warm > 20

    def early(w):
        sim = arr.simulate(table, 2.9, ctx.isl, np.full(w + 1000, ctx.osl), 512, 8192, 8192.0, warm=w)
        return sim, np.mean([((sim["admit_s"] <= t) & (sim["finish_s"] > t)).sum() for t in np.linspace(0.5, 10, 20)])

    sim, held = early(warm)
    mid = arr.window(sim)
    assert sim["warm"] == warm and mid.start >= warm and np.all(np.isnan(sim["tpot_s"][:warm]))
    assert held == pytest.approx(L, rel=0.3)
    assert abs(held - L) < 0.5 * abs(early(0)[1] - L)              # a cold start is still ramping up


def test_dataset_prompts_vary_and_keep_their_mean():
    """A case that names a dataset takes its prompt lengths from it (rescaled to ISL), not one length."""
    ctx = inf.serving_context("Llama-3.1-405B", "B200", 8, "fp4", 9429, 685, output_dataset="mlperf-llama3.1-405b")
    ins, out = arr.request_lengths(ctx)
    assert ins.mean() == pytest.approx(9429, rel=0.02) and ins.max() > 1.8 * ins.mean() and ins.min() < 0.2 * 9429
    assert out.mean() == pytest.approx(685, rel=0.02)


@pytest.mark.parametrize("kw,msg", [(dict(prefill_piece=0.0), "prefill_piece=0"),
                                    (dict(prefill_piece=float("nan")), "prefill_piece=nan"),
                                    (dict(max_sequences=0), "max_sequences=0"),
                                    (dict(output_tokens=np.array([3.0, np.nan])), "output_tokens must be"),
                                    (dict(output_tokens=np.array([3.0, 0.0])), "output_tokens must be"),
                                    (dict(input_tokens=np.array([0.0, 5.0])), "input_tokens must be")])
def test_simulate_refuses_what_would_hang_or_give_nan(rank, kw, msg):
    _, table = rank
    args = dict(input_tokens=100, output_tokens=np.array([3.0, 4.0]), max_sequences=8, max_num_tokens=512.0,
                prefill_piece=256.0)
    with pytest.raises(ValueError, match=msg):
        arr.simulate(table, 1.0, **{**args, **kw})


def test_bad_arrival_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="arrivals='uniform'"):
        slo.best_under_slo(*CASE, max_tpot_s=0.05, arrivals="uniform")
    with pytest.raises(ValueError, match="percentile"):
        slo.best_under_slo(*CASE, max_tpot_s=0.05, arrivals="poisson", percentile=0.0)
    with pytest.raises(ValueError, match="mode='decode'"):
        slo.best_under_slo(*CASE, max_tpot_s=0.05, arrivals="poisson", mode="decode")
    with pytest.raises(ValueError, match="output_tokens=1"):
        slo.best_under_slo(*CASE[:5], 1, max_ttft_s=2.0, arrivals="poisson")
    with pytest.raises(ValueError, match="max_num_tokens=100.*below the longest prompt"):
        ctx = inf.serving_context(*CASE)
        arr.simulate(arr.iteration_table(ctx, 1, 1, 1, 8, 100), 1.0, ctx.isl, np.full(10, 3), 8, 100, np.inf)


def _reference_engine(step, rate, ins, out, cap, budget, piece, seed, warm):
    """The engine :func:`serving_arrivals.simulate` runs, written the slow, literal way: every iteration walks every
    running sequence (decoding ones advance one token, prompts take FIFO pieces of the budget left), one iteration at
    a time. Returns (first token s, finish s) per request."""
    n = len(out)
    gaps = np.random.default_rng(seed).exponential(1.0, n - warm)
    arrive = [0.0] * warm + (np.cumsum(gaps) / rate).tolist()        # the same seeded draws as the engine's
    pre = [float(x) for x in ins]
    left = [float(x) for x in out]
    for i, x in enumerate(np.ceil(np.random.default_rng(seed + 1).uniform(0.0, 1.0, warm) * np.asarray(out[:warm]))):
        pre[i], left[i] = 0.0, max(float(x), 1.0)
    first, finish = [np.nan] * n, [np.nan] * n
    running, nxt, t = list(range(warm)), warm, 0.0
    while nxt < n or running:
        while nxt < n and len(running) < cap and arrive[nxt] <= t:
            running.append(nxt)
            nxt += 1
        if not running:
            t = max(t, arrive[nxt])
            continue
        dec = [i for i in running if pre[i] <= 0]
        room, takes = budget - len(dec), {}
        for i in (i for i in running if pre[i] > 0):
            want = min(pre[i], piece, budget)
            take = (want if want <= room else 0.0) if np.isinf(piece) else max(min(room, want), 0.0)
            if take <= 0:
                break
            takes[i], room = take, room - take
        t += step(len(dec), float(sum(takes.values())))
        for i in dec:
            left[i] -= 1
        for i, a in takes.items():
            pre[i] -= a
            if pre[i] <= 0:
                first[i], left[i] = t, left[i] - 1
        for i in [i for i in running if left[i] <= 0]:
            finish[i] = t
            running.remove(i)
    return np.array(first), np.array(finish)


@settings(max_examples=30, deadline=None)
@given(st.floats(min_value=0.05, max_value=60.0), st.integers(min_value=1, max_value=120), st.integers(0, 30),
       st.sampled_from([300.0, 2048.0, np.inf]), st.integers(4, 96), st.integers(0, 3))
def test_the_event_driven_engine_matches_a_literal_one(rank, rate, out_mean, warm, piece, cap, seed):
    """simulate's queues and decode-run jumps change nothing: its first-token and finish times equal those of the
    literal per-iteration, per-sequence engine for any load, prompt piece, sequence limit and warm start."""
    ctx, table = rank
    rng = np.random.default_rng(out_mean + 7 * seed)
    out = rng.integers(1, 2 * out_mean + 1, 150)
    ins = rng.integers(1, 4000, 150)
    warm = min(warm, cap)
    sim = arr.simulate(table, rate, ins, out, cap, 8192, piece, seed=seed, warm=warm)
    first, finish = _reference_engine(table, rate, ins, out, cap, 8192.0, piece, seed, warm)
    new = slice(warm, None)
    np.testing.assert_allclose(sim["ttft_s"][new] + sim["arrival_s"][new], first[new], rtol=1e-12)
    np.testing.assert_allclose(sim["finish_s"], finish, rtol=1e-12)


def test_one_dispatch_rank_keeps_the_poisson_stream_and_more_deal_it_out_evenly():
    """``dispatch_ranks`` 1 is the seeded Poisson stream the simulation always drew (exponential gaps); k ranks fed in
    turn from one stream see Erlang-k gaps: the same mean rate, a coefficient of variation of 1 / sqrt(k)."""
    rate, n = 3.0, 40_000
    poisson = arr.arrival_times(rate, n, 1, seed=5)
    assert np.array_equal(poisson, np.cumsum(np.random.default_rng(5).exponential(1.0, n)) / rate)
    for k in (1, 4, 16):
        gaps = np.diff(arr.arrival_times(rate, n, k, seed=5))
        assert gaps.mean() == pytest.approx(1.0 / rate, rel=0.02)
        assert gaps.std() / gaps.mean() == pytest.approx(1.0 / np.sqrt(k), rel=0.03)
    with pytest.raises(ValueError, match="dispatch_ranks"):
        arr.arrival_times(rate, 10, 0)


def test_balanced_dispatch_shortens_the_queue_for_the_token_budget(rank):
    """At the same rate per rank, a rank fed in turn (one of 8) queues its prompts less than one fed at random: its
    p99 TTFT is lower, and its p99 TPOT no higher (fewer bursts of prompt iterations)."""
    ctx, table = rank
    out = np.full(3000, ctx.osl, float)
    rate = 1.3
    random_ = arr.simulate(table, rate, ctx.isl, out, 512, 8192, 8192.0, seed=3)
    balanced = arr.simulate(table, rate, ctx.isl, out, 512, 8192, 8192.0, seed=3, dispatch_ranks=8)
    (ttft_r, tpot_r), (ttft_b, tpot_b) = (arr.latency_percentiles(s, 0.99) for s in (random_, balanced))
    assert ttft_b < 0.8 * ttft_r and tpot_b <= tpot_r * 1.001


def test_best_under_slo_deals_queries_to_ranks_in_turn_unless_told_otherwise():
    """Eight single-GPU ranks: the balanced dispatcher (NVIDIA's MLPerf harness) sustains at least the rate of a
    random one under the same p99 limits; a dispatch the model does not know is refused by name."""
    case = ("Llama-3.1-8B", "H100-SXM", 8, "bf16", 8000, 300)
    kw = dict(max_ttft_s=2.0, max_tpot_s=0.05, arrivals="poisson", parallelism={"tp": 1})
    balanced = slo.best_under_slo(*case, **kw)
    random_ = slo.best_under_slo(*case, dispatch="random", **kw)
    assert balanced["output_tokens_per_s_per_gpu"] >= random_["output_tokens_per_s_per_gpu"]
    assert balanced["ttft_s"] <= 2.0 and balanced["tpot_percentile_s"] <= 0.05
    with pytest.raises(ValueError, match="dispatch"):
        slo.best_under_slo(*case, dispatch="round-robin", **kw)
