"""Serving iterations as engines really run them: CUDA-graph padding of decode-only iterations
(serving_schedulers.graph_padded_tokens), attention ranks left idle when there are fewer sequences than
ranks, and tensor parallelism across NVLink domains when the caller fixes it."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_schedulers as sched

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
SIZES = sched.TRTLLM_BENCH_GRAPH_BATCH_SIZES


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0.01, max_value=20000.0), st.sampled_from(sched.SCHEDULERS))
def test_padding_never_shrinks_a_batch_and_lands_on_a_captured_size(decode, scheduler):
    padded = float(sched.graph_padded_tokens(scheduler, decode, 0.0))
    assert padded >= decode
    if scheduler != "trtllm-bench" or np.ceil(decode - 1e-9) > SIZES[-1]:
        assert padded == decode                      # no graph: eager on the real batch
    else:
        assert padded in SIZES and padded - decode < max(np.diff(SIZES)) + 1
    # an iteration that prefills runs eagerly: no padding whatever the scheduler
    assert float(sched.graph_padded_tokens(scheduler, decode, 512.0)) == decode


def test_graph_replay_marks_the_iterations_that_run_a_captured_batch():
    """serving_schedulers.graph_replay: trtllm-bench, no prompt tokens, at most the largest graph (or the cap);
    exactly where graph_padded_tokens pads (its GEMMs then run a fixed, captured row count)."""
    d = np.array([1.0, 129.0, 8192.0, 8193.0, 1051.0])
    assert list(sched.graph_replay("trtllm-bench", d, 0.0)) == [True, True, True, False, True]
    assert list(sched.graph_replay("trtllm-bench", d, 0.0, cap=1000.0)) == [True, True, False, False, False]
    assert not sched.graph_replay("trtllm-bench", d, 512.0).any()
    assert not sched.graph_replay("trtllm-bench", np.zeros(2), 0.0).any()
    for other in ("physics", "trtllm-bench-engine", "unsynchronised-adp"):
        assert not sched.graph_replay(other, d, 0.0).any()


def test_padding_follows_the_perf_overview_batch_sizes():
    d = np.array([1, 3, 129, 256, 257, 385, 641, 1025, 8192, 8193], float)
    assert list(sched.graph_padded_tokens("trtllm-bench", d, 0.0)) == [1, 4, 256, 256, 384, 512, 1024, 2048, 8192,
                                                                        8193]
    assert list(sched.graph_padded_tokens("trtllm-bench-engine", d, 0.0)) == list(d)


def test_padding_stops_at_the_executor_s_largest_batch():
    # TensorRT-LLM drops the listed sizes above min(max_batch_size, max_num_tokens) and pads to that cap instead
    # (_filter_cuda_graph_batch_sizes): 1,051 sequences with a 1,280-sequence limit replay 1,280, not 2,048
    d = np.array([1051.0, 1280.0, 1300.0, 100.0])
    assert list(sched.graph_padded_tokens("trtllm-bench", d, 0.0, cap=1280.0)) == [1280, 1280, 1300, 128]
    assert list(sched.graph_padded_tokens("trtllm-bench", d, 0.0)) == [2048, 2048, 2048, 128]


def test_a_decode_batch_just_past_a_captured_size_pays_for_the_padding():
    # decode-only instance, TP4 Llama 70B in FP4 on B200: 257 sequences replay the 384-sequence graph under
    # trtllm-bench, so they cannot beat 256; with no padding (physics) one more sequence is never slower
    kw = dict(parallelism={"tp": 4}, mode="decode")
    bench = [inf.estimate(LLAMA70, "B200", 4, "fp4", 1024, 1024, c, scheduler="trtllm-bench", **kw)
             for c in (256, 257, 384)]
    physics = [inf.estimate(LLAMA70, "B200", 4, "fp4", 1024, 1024, c, **kw) for c in (256, 257)]
    assert bench[1].output_tokens_per_s_per_gpu < bench[0].output_tokens_per_s_per_gpu
    assert bench[1].step_time_s > physics[1].step_time_s
    assert bench[2].output_tokens_per_s_per_gpu > bench[1].output_tokens_per_s_per_gpu   # the graph filled
    assert physics[1].output_tokens_per_s_per_gpu >= physics[0].output_tokens_per_s_per_gpu


@pytest.mark.parametrize("requests", [None, 8])
def test_fewer_sequences_than_attention_ranks_leave_ranks_idle(requests):
    # one sequence on 4 attention-DP ranks: the throughput of the whole deployment is that one sequence's
    # speed, never more (a fraction of a sequence per rank would make the iteration look cheaper)
    kw = dict(parallelism={"tp": 2, "dp": 4}, requests=requests)
    one = inf.estimate(LLAMA70, "H100-SXM", 8, "fp8", 1024, 128, 1, **kw)
    four = inf.estimate(LLAMA70, "H100-SXM", 8, "fp8", 1024, 128, 4, **kw)
    assert one.output_tokens_per_s_per_gpu * 8 <= one.tokens_per_s_per_user * 1.0001
    assert one.output_tokens_per_s_per_gpu == pytest.approx(four.output_tokens_per_s_per_gpu / 4, rel=0.02)


def test_idle_attention_ranks_send_nothing_to_the_experts():
    # DeepSeek-R1 on 8 H200, attention DP8 + EP8: one sequence keeps one rank busy and its 8 routed rows are all
    # the experts see, so the iteration is shorter than with a sequence on every rank (64 rows)
    lay = {"tp": 1, "dp": 8, "ep": 8}
    one, eight = (inf.estimate("DeepSeek-R1", "H200", 8, "fp8", 1024, 256, c, lay) for c in (1, 8))
    assert one.step_time_s < eight.step_time_s
    assert one.tokens_per_s_per_user > eight.tokens_per_s_per_user


def test_tensor_parallelism_across_domains_only_when_fixed_and_in_whole_domains():
    ds = "DeepSeek-R1"
    tp16 = inf.estimate(ds, "H100-SXM", 16, "fp8", 128, 128, 1, {"tp": 16})
    tp8 = inf.estimate(ds, "H100-SXM", 16, "fp8", 128, 128, 1, {"tp": 8, "pp": 2})
    assert tp16.parallelism["tp"] == 16
    # the cross-node all-reduce (NICs) costs more per layer than NVLink's; the searched layouts stay in a domain
    assert tp16.time_breakdown_s["comm"] > tp8.time_breakdown_s["comm"]
    assert inf.frontier(ds, "H100-SXM", 16, "fp8", 128, 128)["tp"].max() <= 8
    heads48 = dict(layers=32, d_model=6144, heads=48, kv_heads=8, d_ff=16384, vocab=32000)
    with pytest.raises(ValueError, match="multiple of 8"):
        inf.estimate(heads48, "H100-SXM", 24, "fp8", 128, 128, 1, {"tp": 12})


@pytest.mark.parametrize("model, moe", [("DeepSeek-V3", True), ("Llama-3.1-70B", False)])
def test_unsynchronised_ranks_wait_for_the_busiest_only_where_moe_layers_join_them(model, moe):
    """scheduler='unsynchronised-adp' (each attention-DP rank admits prompts on its own): a MoE model's ranks meet in
    every MoE layer, so the iteration lasts as long as the busiest rank's prompt pieces (TensorRT-LLM tech blog 10)
    and the throughput falls below the synchronised default; a dense model's dp ranks share no layer, so its
    throughput is the default's."""
    kw = dict(concurrency=512, parallelism={"tp": 1, "dp": 8, "ep": 8 if moe else 1}, output_tokens_cv=1.0)
    base = inf.estimate(model, "B200", 8, "fp8", 4000, 1000, **kw).output_tokens_per_s_per_gpu
    alone = inf.estimate(model, "B200", 8, "fp8", 4000, 1000, scheduler="unsynchronised-adp",
                         **kw).output_tokens_per_s_per_gpu
    if moe:
        assert alone < 0.97 * base
    else:
        assert alone == pytest.approx(base, rel=1e-12)
