"""Finite offline benchmarks (model/serving_benchmarks.py): N uniform requests queued at once, admitted
within max_batch_size / max_num_tokens (TensorRT-LLM MicroBatchScheduler), ramp + batch + drain."""

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_arrivals as arr
from intelligence_per_dollar.model import serving_benchmarks as sb
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import runs

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
QWEN30 = dict(layers=48, d_model=2048, heads=32, kv_heads=4, d_ff=6144, vocab=151936, experts=128, top_k=8,
              expert_d_ff=768, head_dim=128)


def test_phases_of_one_batch_by_hand():
    # ISL 4, OSL 3, 4 requests, batch 4, 8 tokens per iteration:
    # it0: 2 prompts (8 tokens); it1: 2 decode + 1 prompt (6 <= 8); it2: 3 decode + 1 prompt;
    # it3: the first cohort finished at it2 -> 2 decode; it4: 1 decode; 2 + 3 + 4 + 2 + 1 = 12 tokens
    m, d, p, x = sb.phases(4, 3, 4, 4, 8)
    assert list(m) == [1, 1, 1, 1, 1]
    assert list(d) == [0, 2, 3, 2, 1]
    assert list(p) == [8, 4, 4, 0, 0]
    # context of a request admitted at a, at iteration i: ISL + i - a
    assert x[1:] == pytest.approx([5.0, 6 - 1 / 3, 5.5, 6.0])
    step = lambda d, p, x: 1e-3 * (1 + 0.1 * d + 0.01 * p)       # noqa: E731
    # wall = (1.08 + 1.24 + 1.34 + 1.2 + 1.1) ms = 5.96 ms for 12 tokens
    assert sb.output_tokens_per_s(step, 4, 3, 4, 4, 8) == pytest.approx(12 / 5.96e-3)


def test_decode_stretches_are_timed_at_their_mean_context():
    # one request: a prefill iteration, then OSL-1 decode iterations at contexts ISL+1 .. ISL+OSL-1
    m, d, p, x = sb.phases(10, 5, 1, 1, 10)
    assert list(m) == [1, 4] and list(d) == [0, 1] and list(p) == [10, 0]
    assert x[1] == pytest.approx(np.mean([11, 12, 13, 14]))


def test_many_requests_converge_to_a_full_batch():
    # a constant step c with B slots always full gives B / c tokens/s; the ramp and drain fade as N grows
    c, B = 0.01, 64
    tput = [sb.output_tokens_per_s(lambda d, p, x: c + 0 * d, 128, 256, n, B, 4096) for n in (64, 640, 64000)]
    assert tput[0] < tput[1] < tput[2] <= B / c
    assert tput[2] == pytest.approx(B / c, rel=0.01)


def test_many_requests_reach_the_models_steady_state():
    kw = dict(parallelism={"tp": 1}, scheduler="trtllm-bench")
    steady = inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, **kw)
    finite = inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, requests=100_000, **kw)
    assert finite.output_tokens_per_s_per_gpu == pytest.approx(steady.output_tokens_per_s_per_gpu, rel=0.03)


def test_whole_waves_never_lower_throughput_but_a_lone_last_request_does():
    kw = dict(parallelism={"tp": 1, "dp": 1, "ep": 1}, scheduler="trtllm-bench")
    B = int(inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, **kw).max_concurrency)
    waves = [inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, requests=j * B, **kw).output_tokens_per_s_per_gpu
             for j in (1, 2, 4, 8)]
    assert all(a <= b for a, b in zip(waves, waves[1:]))
    # one request more than a batch runs a whole second wave of one sequence (OSL iterations at batch 1)
    extra = inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, requests=B + 1, **kw).output_tokens_per_s_per_gpu
    assert extra < waves[0]


@pytest.mark.parametrize("bad", [0, -3, 1.5, "3000", True])
def test_requests_is_validated(bad):
    with pytest.raises(ValueError, match="requests"):
        inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, scheduler="trtllm-bench", requests=bad)


def test_requests_need_an_aggregated_run_with_room_for_a_whole_prompt():
    with pytest.raises(ValueError, match="requests=3000.*mode='aggregated'"):
        inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, mode="decode", requests=3000)
    with pytest.raises(ValueError, match="max_num_tokens=1000 is below input_tokens=1024"):
        inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, max_num_tokens=1000, requests=3000,
                     scheduler="vllm-v0.5")
    # the physics scheduler (chunked prefill) runs finite benchmarks with prompts longer than its budget
    assert inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 1024, max_num_tokens=1000,
                        requests=3000).output_tokens_per_s_per_gpu > 0
    with pytest.raises(ValueError, match="tokens"):
        sb.phases(1024, 16, 10, 8, 1000)          # a whole prompt must fit in one iteration
    with pytest.raises(ValueError, match="piece"):
        sb.phases(1024, 16, 10, 8, 1000, piece=0)


def test_chunked_phases_by_hand():
    # as test_phases_of_one_batch_by_hand, but prompts are cut: it1 has 2 decodes and 6 prompt tokens (the third
    # prompt whole, 2 of the fourth), it2 the fourth prompt's last 2 next to 3 decodes
    m, d, p, x = sb.phases(4, 3, 4, 4, 8, piece=8)
    assert list(m) == [1, 1, 1, 1, 1]
    assert list(d) == [0, 2, 3, 2, 1]
    assert list(p) == [8, 6, 2, 0, 0]
    # a piece of at most 3 tokens per prompt: it0 3+3+2 (budget 8); it1 1+1+2 finish prompts 1-3, 3 of prompt 4;
    # it2 3 decodes next to prompt 4's last token
    m, d, p, _ = sb.phases(4, 3, 4, 4, 8, piece=3)
    assert list(p[:3]) == [8, 7, 1] and list(d[:3]) == [0, 0, 3]


def test_a_prompt_longer_than_the_budget_does_not_stall_the_decodes():
    # 30k-token prompts, 8,192-token budget, 64 slots: under the whole-prompt rule one decoding sequence blocks every
    # admission (8,192 - 1 < 30,000), so the run went one request at a time (vLLM PR 43232's Qwen3-235B on 4 B200
    # was predicted 25 tok/s/GPU against 212 measured). Pieces keep decodes running next to prefills.
    m, d, p, _ = sb.phases(30000, 1000, 128, 64, 8192, piece=8192)
    assert d[p > 0].max() > 32 and np.sum(m * d) / np.sum(m) > 32
    kw = dict(parallelism={"tp": 1})
    steady = inf.estimate(LLAMA70, "B200", 1, "fp4", 30000, 1000, concurrency=16, **kw)
    finite = inf.estimate(LLAMA70, "B200", 1, "fp4", 30000, 1000, concurrency=16, requests=64, **kw)
    assert 0.6 * steady.output_tokens_per_s_per_gpu < finite.output_tokens_per_s_per_gpu
    assert finite.output_tokens_per_s_per_gpu <= 1.01 * steady.output_tokens_per_s_per_gpu


@settings(max_examples=200, deadline=None)
@given(isl=st.integers(1, 300), osl=st.integers(1, 40), requests=st.integers(1, 60), batch=st.integers(1, 16),
       tokens=st.integers(1, 400), piece=st.integers(1, 400), seed=st.integers(0, 2**16))
def test_chunked_phases_conserve_tokens_and_respect_the_limits(isl, osl, requests, batch, tokens, piece, seed):
    lengths = np.random.default_rng(seed).integers(1, osl + 1, requests)
    m, d, p, x = sb.phases(isl, osl, requests, batch, tokens, lengths, piece=piece)
    assert np.sum(p) == requests * isl                     # every prompt token prefilled once
    assert np.sum(m * d) == np.sum(lengths - 1)            # every later output token decoded once
    assert np.all(d <= batch) and np.all(m >= 1)
    assert np.all(p[p > 0] <= np.minimum(tokens - d[p > 0], piece * batch))


def test_every_trtllm_bench_run_names_its_dataset():
    cases = [c for c in runs.inference_runs() if c["scheduler"] and sched.is_trtllm_bench(c["scheduler"])]
    assert cases and all(c["requests"] for c in cases)
    perf_overview = {(c["input_tokens"], c["output_tokens"]): c["requests"] for c in cases if "blog" not in c["id"]}
    assert perf_overview[(1024, 1024)] == 3000 and perf_overview[(32768, 1024)] == 1000


def test_explicit_limits_replace_trtllm_bench_heuristic():
    # the DeepSeek-R1 blog's H200 run: --max_batch_size 128 --max_num_tokens 1151 (= one 1024-token prompt next to
    # 127 decodes): both given, trtllm-bench uses them as they are (bench/benchmark/utils/general.py get_settings)
    kw = dict(scheduler="trtllm-bench", parallelism={"tp": 1})
    e = inf.estimate(LLAMA70, "B200", 1, "fp4", 1024, 2048, max_batch_size=128, max_num_tokens=1151, **kw)
    assert e.max_concurrency == 128
    ctx = inf._setup(LLAMA70, "B200", 1, "fp4", 1024, 2048, {"tp": 1}, None, "aggregated", "central",
                     scheduler="trtllm-bench", limits=(128, 1151))[1]
    seqs, tokens = inf.sched.limits(ctx, [1], [1])
    assert seqs[0] == 128 and tokens[0] == 1151            # no ISL + batch raise when the caller sets both
    # one prompt per iteration: 127 running + 1024 = 1151 fits, 128 running + 1024 does not
    m, d, p, _ = sb.phases(1024, 2048, 256, 128, 1151)
    assert p.max() == 1024 and np.sum(m[p > 0]) == 256


def test_a_smaller_batch_limit_lowers_max_load_throughput():
    kw = dict(parallelism={"tp": 1})
    free = inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, **kw)
    capped = inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, max_batch_size=64, **kw)
    assert capped.max_concurrency == 64 < free.max_concurrency
    assert capped.output_tokens_per_s_per_gpu < free.output_tokens_per_s_per_gpu
    # physics scheduler: max_num_tokens caps a steady state at tokens / (1 + ISL/OSL) sequences
    few = inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, max_num_tokens=512, **kw)
    assert few.max_concurrency == 256
    front = inf.frontier(QWEN30, "B200", 1, "fp4", 1024, 1024, max_batch_size=64, **kw)
    assert front["concurrency"].max() <= 64


@pytest.mark.parametrize("key,bad", [("max_batch_size", 0), ("max_batch_size", 2.5), ("max_num_tokens", -1),
                                     ("max_num_tokens", "2048"), ("max_batch_size", True)])
def test_limits_are_validated(key, bad):
    with pytest.raises(ValueError, match=key):
        inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, **{key: bad})


def test_whole_prompt_scheduler_needs_room_for_a_prompt():
    with pytest.raises(ValueError, match="max_num_tokens=1000 is below input_tokens=1024"):
        inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, scheduler="trtllm-bench", max_num_tokens=1000)
    # chunked prefill (physics) takes a prompt in pieces: a budget below the prompt is allowed
    assert inf.estimate(QWEN30, "B200", 1, "fp4", 1024, 1024, max_num_tokens=1000).max_concurrency == 500


def test_blog_runs_carry_their_stated_limits():
    blog = {c["id"]: c for c in runs.inference_runs() if c["group"] == "trtllm-dsr1-blog"}
    assert {(c["max_batch_size"], c["max_num_tokens"]) for c in blog.values()} == {(896, 2048), (384, 1536), (128, 1151)}
    for c in blog.values():                   # the stated concurrency fills max_batch_size on each of 8 ranks
        assert c["concurrency"] == 8 * c["max_batch_size"]


def test_arriving_requests_by_hand():
    """Two one-token-prompt requests at a constant 10 ms iteration: a request whose prompt and output fit before the
    next arrives runs alone, so the run lasts from time 0 to the last arrival plus its own iterations."""
    step = lambda d, p, x: 0.01 + 0 * d          # noqa: E731
    rate = 0.5                                   # 2 s mean gap: far longer than a request's 5 x 10 ms
    out = sb.arriving_output_tokens_per_s(step, 1, 5, 2, 4, 64, rate, 3.0)
    last = arr.arrival_times(rate, 2)[-1]
    # each request: one prefill iteration (its first token) and four decodes; the last starts at the first
    # iteration boundary after it arrives (within 10 ms), so the run ends 50-60 ms after the last arrival
    assert 10 / (last + 0.060) <= out <= 10 / (last + 0.050)


def test_a_run_cannot_outpace_its_arrivals_and_a_burst_matches_the_queued_run():
    """At a finite rate a run ends after its last request arrives (tokens/s at most N x OSL over that time); at a
    rate far above what the engine serves, the arrival simulation and the cohort phases of a queued run (two
    implementations of the same engine) agree within 2%."""
    step = lambda d, p, x: 2e-3 + 2e-5 * d + 1e-6 * p + 1e-8 * d * x      # noqa: E731
    isl, osl, n, batch, tokens, piece = 512, 256, 400, 64, 2048, 512.0
    queued = sb.output_tokens_per_s(step, isl, osl, n, batch, tokens, piece=piece)
    burst = sb.arriving_output_tokens_per_s(step, isl, osl, n, batch, tokens, 1e6, isl + osl / 2, piece=piece)
    assert burst == pytest.approx(queued, rel=0.02)
    for rate in (1.0, 5.0, 20.0, 100.0):
        paced = sb.arriving_output_tokens_per_s(step, isl, osl, n, batch, tokens, rate, isl + osl / 2, piece=piece)
        assert paced <= n * osl / arr.arrival_times(rate, n)[-1] and paced <= burst * 1.001
    rates = [sb.arriving_output_tokens_per_s(step, isl, osl, n, batch, tokens, r, isl + osl / 2, piece=piece)
             for r in (1.0, 5.0, 20.0, 100.0)]
    assert rates == sorted(rates)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), "10"])
def test_request_rate_is_validated(bad):
    with pytest.raises(ValueError, match="request_rate_per_s"):
        inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, requests=100, request_rate_per_s=bad)


def test_a_request_rate_needs_a_finite_run_and_inf_means_at_once():
    with pytest.raises(ValueError, match="request_rate_per_s=10.*needs requests"):
        inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, request_rate_per_s=10)
    at_once = inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, requests=200)
    assert inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, requests=200,
                        request_rate_per_s=float("inf")) == at_once
    paced = inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, requests=200, request_rate_per_s=2.0)
    # 200 requests at 2 per second arrive over ~100 s: at most 200 x 1000 tokens in that time, over 8 GPUs
    assert paced.output_tokens_per_s_per_gpu < min(at_once.output_tokens_per_s_per_gpu, 200 * 1000 / 90 / 8)


def test_rows_that_state_a_request_rate_are_finite_max_load_runs_with_their_rate_in_the_note():
    """Every row with ``request_rate_per_s`` is a finite run (``requests``) whose note quotes the rate its client
    used, and the loader refuses a rate without a request count or beside latency limits."""
    rows = [c for c in runs.inference_runs() if c["request_rate_per_s"]]
    assert len(rows) >= 45
    for c in rows:
        r = c["request_rate_per_s"]
        assert c["requests"] and not runs.is_latency_limited(c)
        assert (f"{r:g}" in c["note"] and "rate" in c["note"].lower()) or f"qps{r:g}" in c["id"], c["id"]


def test_the_loader_refuses_a_rate_without_requests(tmp_path):
    """A rate is the pace of a finite run's requests: a row with a rate and no request count is refused, naming the
    file, row and column (a latency-limited row cannot state requests, so it cannot state a rate either)."""
    src = runs.io.data_path("runs", "inference_runs.csv").read_text().splitlines()
    hi = next(i for i, line in enumerate(src) if not line.startswith("#"))
    hdr = next(csv.reader([src[hi]]))
    rec = next(r for r in csv.reader(src[hi + 1:]) if r[hdr.index("request_rate_per_s")])
    rec[hdr.index("requests")] = ""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([hdr, rec])
    bad = tmp_path / "bad.csv"
    bad.write_text(buf.getvalue())
    with pytest.raises(runs.io.DataError, match="row 2, column 'request_rate_per_s'.*needs the finite run's request"):
        runs.inference_runs(str(bad))


def test_a_run_held_to_its_clients_pace_is_not_max_load():
    """A user's call answers for a server running flat out. A finite run whose requests arrived over more than 5% of
    its measured length was held to its client's pace (the rate, not the hardware, set it) and leaves the user table,
    as a run with a stated concurrency does; a burst (dstack's 1,000 requests at 1,000/s in a ~100 s run) stays."""
    from intelligence_per_dollar.analysis import validation_inference as vi
    cases = {c["id"]: c for c in runs.inference_runs()}
    paced = cases["heldout53-r1bench-dsr1-h200x8-vllm-ep8-sharegpt500"]        # 500 at 10/s in a 78 s run: 64%
    burst = next(c for i, c in cases.items() if i.startswith("heldout65-dstack") and c["request_rate_per_s"] == 1000)
    assert vi.is_paced(paced) and not vi.is_max_load(paced)
    assert not vi.is_paced(burst) and vi.is_max_load(burst)
    # the share is measured: the same run sent at 1,000 requests per second (0.5 s of arrivals) is a burst
    assert not vi.is_paced({**paced, "request_rate_per_s": 1000.0})
    assert not vi.is_paced({**paced, "request_rate_per_s": None})
    # every paced row is finite and every user-table row is max load
    assert all(c["requests"] for c in cases.values() if vi.is_paced(c))
