"""KV cache capacity by the engine's block policy (serving_schedulers, "KV cache capacity"; ``kv_allocation``):
TensorRT-LLM's default GUARANTEED_NO_EVICT (trtllm-bench, and the physics default) reserves each request's whole
output at admission; vLLM and TensorRT-LLM's MAX_UTILIZATION (NVIDIA's MLPerf harness) allocate blocks as tokens
arrive, so a full batch holds each sequence's prompt and the tokens generated so far
(serving_kernels.Context.reserved_output_tokens)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_pipeline as pipe
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import io as sio, runs

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)


def _ctx(scheduler="physics", isl=1024, osl=2048, kv_allocation=None, **spread):
    return sctx.context(LLAMA70, "H200", "fp8", isl, osl, None, "aggregated", "central", scheduler=scheduler,
                        output_spread=(spread.get("cv", 0.0), spread.get("cap"), None), kv_allocation=kv_allocation)


@pytest.mark.parametrize("scheduler", sched.SCHEDULERS)
def test_vllm_allocates_on_demand_and_the_others_reserve_unless_told(scheduler):
    vllm = scheduler.startswith("vllm")
    assert _ctx(scheduler).kv_on_demand is vllm
    assert _ctx(scheduler, kv_allocation="on-demand").kv_on_demand is True
    assert _ctx(scheduler, kv_allocation="reserve").kv_on_demand is False


def test_kv_allocation_is_validated():
    with pytest.raises(ValueError, match="kv_allocation"):
        _ctx(kv_allocation="lazy")
    with pytest.raises(ValueError, match="kv_allocation"):
        inf.estimate(LLAMA70, "H200", 1, "fp8", 1024, 1024, kv_allocation="max_util")


def test_the_loader_and_the_model_allow_the_same_values(tmp_path):
    assert runs.KV_ALLOCATIONS == sched.KV_ALLOCATIONS
    text = sio.data_path("runs", "inference_runs.csv").read_text()
    # kv_allocation is followed by the two speculative-decoding columns and the request rate (empty on these rows)
    assert text.count(",on-demand,,,\n") > 100
    bad = tmp_path / "runs.csv"
    bad.write_text(text.replace(",on-demand,,,\n", ",max_util,,,\n", 1))
    with pytest.raises(sio.DataError, match="column 'kv_allocation': 'max_util' is not one of reserve, on-demand"):
        runs.inference_runs(bad)


def test_a_full_batch_holds_the_prompt_and_half_the_output_on_demand():
    # one length, whole 32-token blocks: reserving holds ISL + OSL = 3072 tokens a sequence, allocating on demand
    # ISL + OSL / 2 = 2048 on average, so the KV cache of the same batch is two thirds
    on, res = _ctx(kv_allocation="on-demand"), _ctx()
    assert on.kv_block_tokens == res.kv_block_tokens and 1024 % on.kv_block_tokens == 0
    b = np.array([64.0])
    one = np.array([1.0])
    kv_on = pipe.memory_bytes(on, one, one, b, b, b * 0.5, 1.0)[1]
    kv_res = pipe.memory_bytes(res, one, one, b, b, b * 0.5, 1.0)[1]
    assert kv_on / kv_res == pytest.approx((1024 + 1024) / (1024 + 2048))
    # 80 layers x 8 KV heads x 128 x (K, V) x 1 byte (FP8 KV) per token, 64 sequences of 3,072 tokens
    assert kv_res[0] == pytest.approx(64 * 3072 * 80 * 8 * 128 * 2 * 1.0)


def test_an_on_demand_engine_fits_more_sequences_where_memory_binds():
    # Llama-70B FP8 on one H200 at 1024/4096 with limits that never bind: the batch is the KV cache's, larger by
    # about (ISL + OSL) / (ISL + OSL / 2) = 5120 / 3072 = 1.67 (less where the workspace takes its share; both
    # batches are whole sequences, so up to 1 / 74 more)
    kw = dict(parallelism={"tp": 1}, max_batch_size=100_000, max_num_tokens=100_000)
    on = inf.estimate(LLAMA70, "H200", 1, "fp8", 1024, 4096, kv_allocation="on-demand", **kw)
    res = inf.estimate(LLAMA70, "H200", 1, "fp8", 1024, 4096, **kw)
    assert 1.5 < on.max_concurrency / res.max_concurrency <= 5120 / 3072 * (1 + 1 / res.max_concurrency)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 1.5), st.integers(50, 4000))
def test_on_demand_never_holds_more_than_a_reservation(cv, osl):
    on, res = _ctx(osl=osl, kv_allocation="on-demand", cv=cv, cap=20 * osl), _ctx(osl=osl, cv=cv, cap=20 * osl)
    assert 0.0 < on.reserved_output_tokens <= res.reserved_output_tokens
    assert on.reserved_output_tokens == pytest.approx(res.reserved_output_tokens / 2.0)   # E[L^2]/(2E[L]) vs E[L^2]/E[L]


def test_a_spread_of_lengths_raises_what_a_running_sequence_holds():
    # a full batch holds long outputs in proportion to their length (serving_lengths): DeepSeek-R1's reasoning
    # outputs (cv 1.1) hold about (1 + cv^2) / 2 of the mean output each, not OSL / 2
    one = _ctx(osl=3886, kv_allocation="on-demand")
    spread = _ctx(osl=3886, kv_allocation="on-demand", cv=1.1, cap=20000)
    assert one.reserved_output_tokens == 3886 / 2
    assert spread.reserved_output_tokens == pytest.approx(3886 * (1 + 1.1 ** 2) / 2, rel=0.1)


def test_runs_of_nvidias_mlperf_harness_allocate_on_demand():
    """Every MLPerf Inference row ran NVIDIA's harness (or a partner's copy of it), whose configs set
    ``'batch_scheduler_policy': 'max_util'`` (TensorRT-LLM's MAX_UTILIZATION), or vLLM: each allocates on demand."""
    rows = [c for c in runs.inference_runs() if "mlperf" in c["group"]]
    assert len(rows) > 100
    assert not [c["id"] for c in rows if not sched.kv_on_demand(c["scheduler"], c["kv_allocation"])]
    # elsewhere a row states the policy only where its source prints it: TensorRT-LLM's tuning guide's trtllm-bench
    # logs print 'Scheduling Policy: Guaranteed No Evict', the reserving default of its C++ executor
    stated = [c for c in runs.inference_runs() if "mlperf" not in c["group"] and c["kv_allocation"] is not None]
    assert {c["group"] for c in stated} == {"heldout53-trtllm-tuning-guide"}
    assert all(c["kv_allocation"] == "reserve" and not sched.kv_on_demand(c["scheduler"]) for c in stated)


def test_the_policy_is_a_field_the_caller_can_see():
    ctx = _ctx()
    assert ctx.reserved_output_tokens == 2048.0
    assert dataclasses.replace(ctx, kv_on_demand=True).reserved_output_tokens == 1024.0
