"""Host work of a serving iteration (serving_kernels.iteration_s): overlapped with the GPU by current engines
(``physics``, TensorRT-LLM, SGLang, ``vllm-v0.6``, ``vllm-v1-async``), in series with it on vLLM v0.5
(``vllm-v0.5`` / ``vllm-v0.5-offline``) and on vLLM's synchronous V1 engine (``vllm-v1``); and the batch limits
each vLLM generation applies (serving_schedulers.default_limits, vllm_v1_limits)."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import hardware

ONE_GPU = {k: np.array([1.0]) for k in ("tp", "dp", "ep", "replicas")}


def _ctx(scheduler, isl=230, osl=224, model="Llama-3.1-8B", acc="H100-SXM"):
    return sctx.context(model, acc, "bf16", isl, osl, None, "aggregated", "central", scheduler=scheduler)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=1.0))
def test_a_serial_host_adds_its_time_and_an_overlapped_one_hides_the_shorter(gpu_s, host_s):
    serial, overlap = _ctx("vllm-v0.5"), _ctx("physics")
    assert serial.host_serial and not overlap.host_serial
    assert float(kern.iteration_s(serial, gpu_s, host_s)) == pytest.approx(gpu_s + host_s)
    assert float(kern.iteration_s(overlap, gpu_s, host_s)) == max(gpu_s, host_s)
    assert kern.iteration_s(serial, gpu_s, host_s) >= kern.iteration_s(overlap, gpu_s, host_s)


@pytest.mark.parametrize("concurrency", [1.0, 64.0, 256.0])
def test_vllm_v05_iterations_last_the_gpu_step_plus_the_host_time(concurrency):
    """Every iteration of the v0.5 engine waits for the host: step = GPU + host at any batch (no max)."""
    ctx = _ctx("vllm-v0.5")
    r = inf.evaluate(ctx, {**ONE_GPU, "concurrency": np.array([concurrency])})
    assert r["step_s"][0] == pytest.approx(r["gpu_step_s"][0] + r["host_s"][0], rel=1e-9)
    assert r["host_s"][0] == pytest.approx(ctx.host_step_s + ctx.host_per_sequence_s * concurrency, rel=1e-9)


def test_the_api_server_costs_host_time_only_when_serving():
    """vllm-v0.5 (through the API server) charges the engine's and the API server's per-sequence time;
    vllm-v0.5-offline (the in-process LLM class) only the engine's; both more than an overlap engine's."""
    a = sctx.assumed
    served, offline, current = (_ctx(s).host_per_sequence_s for s in ("vllm-v0.5", "vllm-v0.5-offline", "physics"))
    assert offline == a("vllm_v05_engine_per_sequence_s", "central")
    assert served == pytest.approx(offline + a("vllm_v05_api_server_per_sequence_s", "central"))
    assert served > offline > current
    fast = [inf.estimate("Llama-3.1-8B", "H100-SXM", 1, "bf16", 230, 224, scheduler=s).output_tokens_per_s_per_gpu
            for s in ("physics", "vllm-v0.5-offline", "vllm-v0.5")]
    assert fast[0] > fast[1] > fast[2]


def test_vllm_v05_defaults_to_256_running_sequences_unless_told():
    """vLLM v0.5's default max_num_seqs is 256 (VLLM_V05_DEFAULT_LIMITS); a run's stated limit replaces it."""
    assert sched.VLLM_V05_DEFAULT_LIMITS[0] == 256
    default = inf.estimate("Llama-3.1-8B", "H100-SXM", 1, "bf16", 230, 224, scheduler="vllm-v0.5")
    told = inf.estimate("Llama-3.1-8B", "H100-SXM", 1, "bf16", 230, 224, scheduler="vllm-v0.5", max_batch_size=512)
    physics = inf.estimate("Llama-3.1-8B", "H100-SXM", 1, "bf16", 230, 224)
    assert default.max_concurrency == 256 and told.max_concurrency == 512 and physics.max_concurrency > 512


def test_vllm_v05_schedules_prompts_whole():
    """Chunked prefill was off by default in v0.5: a prompt is one piece, and a token budget below the prompt is refused."""
    assert _ctx("vllm-v0.5").prefill_chunk_tokens == np.inf and _ctx("vllm-v0.5-offline").prefill_chunk_tokens == np.inf
    assert np.isfinite(_ctx("physics").prefill_chunk_tokens)
    with pytest.raises(ValueError, match="max_num_tokens=100 is below input_tokens=230"):
        inf.estimate("Llama-3.1-8B", "H100-SXM", 1, "bf16", 230, 224, scheduler="vllm-v0.5", max_num_tokens=100)


def test_the_v05_host_constants_reproduce_the_profile_they_come_from():
    """data/assumptions/inference.csv derives the v0.5 per-sequence host times from vLLM's v0.6.0 blog profile of v0.5.3
    (Llama 3 8B, one H100, ShareGPT at the 256-sequence cap: API server 33%, scheduling 29%, GPU 38% of the time) and
    this model's GPU iteration for that case. Re-deriving them must give the profile's shares back (within 5%): a
    change to the GPU model that breaks this calls for the constants to be derived again."""
    ctx = _ctx("vllm-v0.5")
    r = inf.evaluate(ctx, {**ONE_GPU, "concurrency": np.array([256.0])})
    gpu = r["gpu_step_s"][0]
    engine = ctx.host_step_s + 256 * sctx.assumed("vllm_v05_engine_per_sequence_s", "central")
    api = 256 * sctx.assumed("vllm_v05_api_server_per_sequence_s", "central")
    assert engine / gpu == pytest.approx(29 / 38, rel=0.05)
    assert api / gpu == pytest.approx(33 / 38, rel=0.05)
    assert gpu / r["step_s"][0] == pytest.approx(0.38, rel=0.05)


# --- vLLM's V1 engine: synchronous scheduling (vllm-v1) and --async-scheduling (vllm-v1-async) -----------------


@pytest.mark.parametrize("acc, limits", [("H100-SXM", (1024, 8192)), ("H200", (1024, 8192)), ("B200", (1024, 8192)),
                                         ("A100-80GB", (256, 2048)), ("A100-40GB", (256, 2048))])
def test_vllm_v1_takes_its_api_server_defaults_from_the_device(acc, limits):
    """vLLM V1's API server defaults (vllm/engine/arg_utils.py get_batch_defaults): 1,024 sequences and 8,192
    tokens per iteration on a GPU of >= 70 GiB that is not an A100, 256 and 2,048 on any other; both schedulers
    use them, and so does the model's own limit (the estimate's max_concurrency on one GPU)."""
    assert sched.vllm_v1_limits(hardware.get(acc)) == limits
    for s in ("vllm-v1", "vllm-v1-async"):
        ctx = _ctx(s, acc=acc)
        seqs, tokens = (float(v[0]) for v in sched.limits(ctx, np.array([1.0]), np.array([1.0])))
        assert (seqs, tokens) == limits
        assert ctx.prefill_chunk_tokens == limits[1]      # no per-prompt piece limit: the whole token budget


def test_vllm_v1_limits_follow_the_memory_not_the_name():
    """A device under 70 GiB gets the small defaults whatever its name; a stated limit replaces the default."""
    h100 = hardware.get("H100-SXM")
    small = dataclasses.replace(h100, device_memory_bytes=48e9)
    assert sched.vllm_v1_limits(small) == sched.VLLM_V1_SMALL_LIMITS
    told = inf.estimate("Llama-3.1-8B", "A100-80GB", 1, "bf16", 230, 224, scheduler="vllm-v1", max_batch_size=600)
    default = inf.estimate("Llama-3.1-8B", "A100-80GB", 1, "bf16", 230, 224, scheduler="vllm-v1")
    assert default.max_concurrency == 256 and told.max_concurrency == 600


@pytest.mark.parametrize("concurrency", [1.0, 64.0, 512.0])
def test_vllm_v1_sync_adds_its_host_time_and_async_hides_it(concurrency):
    """Synchronous V1: step = GPU + (vllm_v1_host_step_s + vllm_v1_host_per_sequence_s x batch); with async
    scheduling the same host time runs under the GPU's, so the step is the GPU time wherever the GPU is longer."""
    sync, asyn = _ctx("vllm-v1"), _ctx("vllm-v1-async")
    assert sync.host_serial and not asyn.host_serial
    assert sync.host_step_s == sctx.assumed("vllm_v1_host_step_s", "central")
    assert sync.host_per_sequence_s == asyn.host_per_sequence_s == sctx.assumed("vllm_v1_host_per_sequence_s", "central")
    layout = {**ONE_GPU, "concurrency": np.array([concurrency])}
    rs, ra = inf.evaluate(sync, layout), inf.evaluate(asyn, layout)
    host = sync.host_step_s + sync.host_per_sequence_s * concurrency
    assert rs["host_s"][0] == pytest.approx(host, rel=1e-9)
    assert rs["step_s"][0] == pytest.approx(rs["gpu_step_s"][0] + host, rel=1e-9)
    assert ra["gpu_step_s"][0] > ra["host_s"][0]
    assert ra["step_s"][0] == pytest.approx(ra["gpu_step_s"][0], rel=1e-9)


def test_the_v1_host_constants_match_the_measured_async_gain():
    """Cross-check, not a fit (data/assumptions/inference.csv): GPUStack's A/B of vLLM v0.11.0 on one H100 (gpt-oss-20b,
    ShareGPT, only --async-scheduling changed) measured 91.33 ms mean TPOT synchronous against 86.81 ms asynchronous,
    4.5 ms. The V1 host constants at the 1,024-sequence default must give that gap within 25%; V0.5's per-sequence
    host time, five times larger, would not."""
    ctx = _ctx("vllm-v1")
    gap = ctx.host_step_s + 1024 * ctx.host_per_sequence_s
    assert gap == pytest.approx(91.33e-3 - 86.81e-3, rel=0.25)
    v05 = _ctx("vllm-v0.5-offline")
    assert v05.host_step_s + 1024 * v05.host_per_sequence_s > 2 * (91.33e-3 - 86.81e-3)


def test_vllm_v06_keeps_v0_limits_and_whole_prompts_but_overlaps_its_host():
    """vLLM v0.6's V0 engine: async output processing and multi-step scheduling hide the host work (max, not sum),
    but the batch stays at V0's 256 sequences and prompts run whole (chunked prefill off below 32K of context)."""
    ctx = _ctx("vllm-v0.6")
    assert not ctx.host_serial and ctx.prefill_chunk_tokens == np.inf
    assert ctx.host_per_sequence_s == _ctx("physics").host_per_sequence_s
    assert inf.estimate("Llama-3.1-8B", "A100-80GB", 1, "bf16", 224, 194, scheduler="vllm-v0.6").max_concurrency == 256


def test_the_cpp_runtime_is_not_capped_by_the_python_backends_host_time():
    """TensorRT-LLM's TensorRT-engine flow (``trtllm-bench-engine``) schedules and decodes in C++: its host time per
    sequence (``cpp_runtime_host_per_sequence_s``) is below the PyTorch backend's, and at most the bound its measured
    TP8 Mixtral 8x7B engine sets (70,427 tokens/s from one engine on 8 H200, v0.13: 1 / 70,427 s). With the host
    overlapped, one engine emits at most 1 / (host time per sequence) tokens/s: that caps the Python backend's engine
    at ~33,000 tokens/s whatever its batch, while the C++ runtime's engine passes the measured rate."""
    cpp, py = _ctx("trtllm-bench-engine"), _ctx("trtllm-bench")
    assert cpp.host_per_sequence_s < py.host_per_sequence_s
    assert sctx.assumed("cpp_runtime_host_per_sequence_s", "high") <= 1 / 70_427
    kw = dict(parallelism={"tp": 8}, kv_precision="fp8")
    engine = {s: inf.estimate("Mixtral-8x7B", "H200", 8, "fp8", 128, 2048, scheduler=s, **kw) for s in
              ("trtllm-bench-engine", "trtllm-bench")}
    per_engine = {s: e.output_tokens_per_s_per_gpu * 8 for s, e in engine.items()}
    assert per_engine["trtllm-bench"] <= 1 / py.host_per_sequence_s * 1.0001
    assert per_engine["trtllm-bench-engine"] > 70_427


def test_the_cpp_executor_loop_runs_in_series_with_each_iteration():
    """TensorRT-LLM's C++ executor (``trtllm-engine``, ``trtllm-bench-engine``) leaves its loop between GPU
    iterations (no overlap, no CUDA graphs: every layer's kernels enqueued from the host): every iteration is longer
    by ``cpp_executor_layer_s`` per layer, the same at any batch, while the physics default (an overlap scheduler)
    adds nothing. Its range is the measured operating points' (MLPerf Interactive mean TPOT less the model's GPU
    iteration, over the layers: 40-102 us)."""
    per_layer = sctx.assumed("cpp_executor_layer_s", "central")
    assert 40e-6 <= sctx.assumed("cpp_executor_layer_s", "low") < per_layer < sctx.assumed("cpp_executor_layer_s", "high") <= 102e-6
    case = ("Llama-2-70B", "H200", 8, "fp8", 222, 294)
    kw = dict(parallelism={"tp": 1}, kv_precision="fp8")
    for b in (16.0, 256.0):
        phys = inf.estimate(*case, b * 8, scheduler="physics", **kw)
        eng = inf.estimate(*case, b * 8, scheduler="trtllm-engine", **kw)
        assert eng.step_time_s == pytest.approx(phys.step_time_s + 80 * per_layer, rel=1e-6)
    assert _ctx("trtllm-engine").host_serial_step_s == _ctx("trtllm-bench-engine").host_serial_step_s == 32 * per_layer
    assert _ctx("physics").host_serial_step_s == 0.0 and _ctx("vllm-v1").host_serial_step_s == 0.0
    # the engine flow's chunked context: prompts in pieces, not whole (trtllm-bench's)
    assert _ctx("trtllm-engine").prefill_chunk_tokens < np.inf


def test_a_gemm_allreduce_fusion_hides_each_all_reduce_behind_the_gemm_that_feeds_it():
    """A dense model with ``comm_overlap`` (TensorRT-LLM's gemm_allreduce_plugin, set by NVIDIA's MLPerf H200 405B
    configs): the two tensor-parallel all-reduces of a layer run beside the attention output and down projections.
    The layer is shorter than in series by at most the all-reduces, never shorter than with no communication plus
    their contention share, and a single GPU (no all-reduce) is unchanged."""
    case = ("Llama-3.1-405B", "H200", 8, "fp8", 2048, 128)
    on, off = (inf.serving_context(*case, comm_overlap=c) for c in (True, False))
    for tokens in (8.0, 512.0, 8192.0):
        args = (np.array([8.0]), np.array([1.0]), np.array([1.0]), np.array([tokens]), np.array([0.0]), 2048.0)
        fused, _, parts = inf._layer_times(on, *args)
        serial, _, _ = inf._layer_times(off, *args)
        comm = parts["comm"]
        assert serial - comm - 1e-12 <= fused <= serial + 1e-12
        slow = on.ceil.overlap_compute_slowdown
        assert fused >= serial - comm + comm * slow / (1 + slow) - 1e-12
    # at 8,192 tokens an iteration the projections outlast their all-reduces: most of the communication is hidden
    fused, _, parts = inf._layer_times(on, np.array([8.0]), np.array([1.0]), np.array([1.0]), np.array([8192.0]),
                                        np.array([0.0]), 2048.0)
    serial, _, _ = inf._layer_times(off, np.array([8.0]), np.array([1.0]), np.array([1.0]), np.array([8192.0]),
                                     np.array([0.0]), 2048.0)
    assert serial - fused > 0.5 * parts["comm"]
    one_on, one_off = (inf.serving_context("Llama-3.1-8B", "H200", 1, "fp8", 2048, 128, comm_overlap=c) for c in (True, False))
    a = (np.array([1.0]), np.array([1.0]), np.array([1.0]), np.array([512.0]), np.array([0.0]), 2048.0)
    assert inf._layer_times(one_on, *a)[0] == pytest.approx(inf._layer_times(one_off, *a)[0], rel=1e-12)
