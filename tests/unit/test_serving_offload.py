"""Serving with weights offloaded to host memory (model.serving_offload, ``weight_offload``)."""

import numpy as np
from hypothesis import given, settings, strategies as st
import pytest

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_offload as offl
from intelligence_per_dollar.sources import hardware

DSV3_PREFILL = ("DeepSeek-V3", "GB200", 2, "fp4", 2000, 1)


def test_grace_prefill_that_does_not_fit_is_served_with_offload():
    """SGLang's 2-GPU GB200 prefill instance of DeepSeek-V3 (NVFP4 MoE) only fits with weights in Grace memory:
    without offload the model refuses it, by default (NVLink-C2C host link) it offloads and the HBM holds less
    than the weights."""
    with pytest.raises(ValueError, match="the weights do not fit"):
        inf.estimate(*DSV3_PREFILL, mode="prefill", weight_offload=False)
    e = inf.estimate(*DSV3_PREFILL, mode="prefill")
    assert 0 < e.weight_offload_fraction <= 1 and e.input_tokens_per_s_per_gpu > 0
    assert e.memory_per_gpu_bytes <= 0.95 * hardware.get("GB200").memory_capacity_bytes
    assert e.memory_breakdown_bytes["weights"] < 190e9   # DeepSeek-V3 in NVFP4 needs ~196 GB per GPU of 2


def test_offload_is_bit_identical_when_the_weights_fit():
    """The default offloads nothing when a layout fits: same numbers as weight_offload=False."""
    for args in (("Llama-3.1-70B", "H200", 8, "fp8", 1000, 1000), ("DeepSeek-V3", "GB200", 8, "fp4", 1000, 1000)):
        a, b = inf.estimate(*args), inf.estimate(*args, weight_offload=False)
        assert a == b and a.weight_offload_fraction == 0.0


def test_decode_with_offload_is_paced_by_the_host_link():
    """Decode re-reads every weight per token: with offload on a PCIe host the iteration is at least the offloaded
    bytes over the link (PCIe, 10-100x slower than HBM), and asking for it is explicit there."""
    args = ("Llama-3.1-405B", "H200", 2, "fp8", 1000, 1000)
    with pytest.raises(ValueError, match=r"weight_offload=True streams part of the weights"):
        inf.estimate(*args)
    e = inf.estimate(*args, weight_offload=True)
    acc = hardware.get("H200")
    assert 0 < e.weight_offload_fraction
    weights_per_gpu = 0.97 * 405e9 * 1.0 / 2       # FP8 layer weights of one TP rank (embedding aside)
    link = acc.host_link_bytes_per_s
    assert e.step_time_s >= 0.9 * e.weight_offload_fraction * weights_per_gpu / link
    assert e.tokens_per_s_per_user < 10            # slow, as offloaded decode is


def test_more_offload_never_shortens_an_iteration():
    """At a fixed layout and concurrency a larger offloaded share only adds host-link stream time (the iteration
    and the TTFT never get shorter) and frees HBM."""
    ctx = sctx.context("Llama-3.1-70B", "H200", "fp8", 1000, 1000, None, "aggregated", "central",
                       weight_offload=True)
    c = {k: np.full(3, v) for k, v in {"tp": 8.0, "dp": 1.0, "ep": 1.0, "pp": 1.0, "replicas": 1.0,
                                       "concurrency": 64.0}.items()}
    r = inf.evaluate(ctx, {**c, "offload": np.array([0.0, 0.5, 1.0])})
    assert np.all(np.diff(r["step_s"]) > 0) and np.all(np.diff(r["ttft_s"]) >= 0)
    assert np.all(np.diff(r["memory_per_gpu_bytes"]) < 0)
    # the iteration is at least the offloaded bytes over the host link at its efficiency
    assert r["step_s"][2] >= r["stream_s"][2] > 0


def test_a_finite_benchmark_pays_the_stream_too():
    """trtllm-bench's finite run (``requests``) with offload allowed on PCIe never beats the same run without it."""
    kw = dict(scheduler="trtllm-bench", requests=500)
    args = ("Llama-3.1-70B", "H100-SXM", 1, "fp8", 1000, 1000)
    on, off = inf.estimate(*args, weight_offload=True, **kw), inf.estimate(*args, weight_offload=False, **kw)
    assert on.output_tokens_per_s_per_gpu <= off.output_tokens_per_s_per_gpu * (1 + 1e-9)


def test_a_share_can_be_held_fixed():
    e = inf.estimate(*DSV3_PREFILL, mode="prefill", weight_offload=0.5)
    assert e.weight_offload_fraction == 0.5 and e.time_breakdown_s["stream"] > 0


def test_no_fit_messages_without_an_offload_column():
    """Callers that build candidates themselves (post-training rollouts) get the ValueError, not a KeyError."""
    from intelligence_per_dollar.model import post_training
    with pytest.raises(ValueError, match="the weights do not fit"):
        post_training._decode_coefficients("DeepSeek-V3", "H100-SXM", 1, "fp8", 1000, 1000, 1.0)


def test_offloaded_bytes_must_fit_in_host_memory(data_copy):
    """The share kept in host memory must fit in the GPU's share of it: with 1 GB of host memory per GB200 the
    2-GPU DeepSeek-V3 prefill is refused again, naming the host memory."""
    path = data_copy / "hardware" / "accelerators.csv"
    lines = path.read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith("GB200,host_memory_bytes,"))
    parts = lines[i].split(",")
    parts[2] = "1e9"
    lines[i] = ",".join(parts)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"needs 19\d\.\d GB of weights .* \(host memory per GPU too small\)"):
        inf.estimate(*DSV3_PREFILL, mode="prefill")


@pytest.mark.parametrize("bad", ["yes", 1.5, 0, -0.25, float("nan")])
def test_bad_weight_offload_is_refused(bad):
    with pytest.raises(ValueError, match=r"weight_offload=.* is not allowed; allowed: None"):
        inf.estimate("Llama-3.1-8B", "H200", 1, weight_offload=bad)


def test_can_offload_rules():
    gb200, h200 = hardware.get("GB200"), hardware.get("H200")
    assert offl.can_offload(gb200, None) and offl.can_offload(gb200, True) and not offl.can_offload(gb200, False)
    assert not offl.can_offload(h200, None) and offl.can_offload(h200, True)
    assert np.all(np.diff(offl.FRACTIONS) > 0) and offl.FRACTIONS[-1] == 1.0


@settings(max_examples=40, deadline=None)
@given(f1=st.floats(0.0, 1.0), f2=st.floats(0.0, 1.0), conc=st.floats(1.0, 512.0),
       acc=st.sampled_from(["H100-SXM", "H200", "B200", "GB200", "GB300"]),
       mode=st.sampled_from(["aggregated", "decode", "prefill"]))
def test_property_offload_never_speeds_up_an_iteration(f1, f2, conc, acc, mode):
    """Whatever the share, accelerator, mode and concurrency, keeping more of the weights in host memory never
    makes an iteration (or the TTFT) shorter, and the stream is never negative."""
    lo, hi = sorted((f1, f2))
    ctx = sctx.context("Llama-3.1-70B", acc, "fp8", 1000, 1000, None, mode, "central", weight_offload=True)
    c = {k: np.full(2, v) for k, v in {"tp": 4.0, "dp": 1.0, "ep": 1.0, "pp": 1.0, "replicas": 2.0,
                                       "concurrency": conc}.items()}
    r = inf.evaluate(ctx, {**c, "offload": np.array([lo, hi])})
    assert r["step_s"][1] >= r["step_s"][0] * (1 - 1e-12) and r["ttft_s"][1] >= r["ttft_s"][0] * (1 - 1e-12)
    assert (r["stream_s"] >= 0).all()
