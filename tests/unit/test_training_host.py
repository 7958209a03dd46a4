"""Host launch time of MoE layers whose dispatcher syncs host and device (issue 12): operator
counts by hand from Transformer Engine's GroupedLinear, the max(GPU, host) behaviour, the
presets that sync, and dense models untouched."""

from dataclasses import replace
from types import SimpleNamespace

import pytest

from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import host
from intelligence_per_dollar.sources import assumptions as assumption_files

LLAMA_SMALL = {"layers": 4, "d_model": 1024, "heads": 8, "kv_heads": 8, "d_ff": 4096, "vocab": 32000}
MOE = {"layers": 4, "d_model": 256, "heads": 4, "kv_heads": 4, "d_ff": 512, "vocab": 1000, "experts": 32,
       "top_k": 2, "expert_d_ff": 64}
PAR = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 8, "microbatch": 1, "recompute": "none", "zero": 1}


def test_op_counts_by_hand():
    # FP8, 16 local experts (Qwen3-30B-A3B at EP8): forward per expert FC1 + FC2 GEMMs and their
    # input quantizes (4), backward dgrad + wgrad GEMMs, wgrad placeholder, DDP hook and the
    # grad-output quantize per FC (10); plus the 9 / 12 fixed expert-block operators and the 18 / 36
    # of the rest of the layer (attention block, router, dispatcher preprocessing)
    assert host.moe_host_ops(16, True) == (18 + 9 + 4 * 16, 36 + 12 + 10 * 16) == (91, 208)
    # BF16 has no quantizes: 2 and 8 per expert; 4 local experts (DeepSeek-V3 at EP64)
    assert host.moe_host_ops(4, False) == (35, 80)
    with pytest.raises(ValueError, match="local_experts"):
        host.moe_host_ops(0.5, False)


def _fake(sync: bool, experts=128, ep=8, op_s=2.5e-5):
    s = SimpleNamespace(experts=experts, layers=4, moe_layer_freq=1, first_dense_layers=0)
    ctx = SimpleNamespace(s=s, low_precision=True, stack=training.Stack(moe_host_sync=sync, host_op_s=op_s))
    return ctx, SimpleNamespace(ep=ep)


def test_host_bound_is_max_of_gpu_and_host(monkeypatch):
    monkeypatch.setattr(host.architecture, "moe_layers", lambda s: s.layers)
    ctx, lay = _fake(True)
    h_f, h_b = 91 * 2.5e-5, 208 * 2.5e-5                      # 2.275 ms, 5.2 ms
    f, b = host.host_bound_s(ctx, lay, 1.0e-3, 6.0e-3)
    assert f == pytest.approx(h_f - 1.0e-3) and b == 0.0        # forward host-bound, backward hidden
    f, b = host.host_bound_s(ctx, lay, 3.0e-3, 2.0e-3)
    assert f == 0.0 and b == pytest.approx(h_b - 2.0e-3)
    assert host.host_bound_s(_fake(False)[0], lay, 0.0, 0.0) == (0.0, 0.0)   # no sync, no term


def test_presets_that_sync():
    assert training.MEGATRON_CORE.moe_host_sync and training.STACKS["megatron-core-moe"].moe_host_sync
    for st in (training.MODERN, training.DEEPSEEK_V3, training.FSDP2, training.DEEPSPEED, training.MEGATRON_2021):
        assert not st.moe_host_sync
    with pytest.raises(ValueError, match="host_op_s"):
        training.Stack(host_op_s=-1e-6)


def test_dense_model_unchanged_and_moe_slower_with_more_host_time():
    on = training.MEGATRON_CORE
    off = replace(on, moe_host_sync=False)
    par = {**PAR, "ep": 1}
    a = training.estimate(LLAMA_SMALL, "H100-SXM", 8, "fp8", 1024, 1024 * 64, par, stack=on)
    b = training.estimate(LLAMA_SMALL, "H100-SXM", 8, "fp8", 1024, 1024 * 64, par, stack=off)
    assert a.step_time_s == b.step_time_s
    t = [training.estimate(MOE, "H100-SXM", 8, "fp8", 1024, 1024 * 64, PAR, stack=st).step_time_s
         for st in (off, replace(on, host_op_s=1e-5), on, replace(on, host_op_s=4e-5))]
    assert t[0] <= t[1] <= t[2] <= t[3] and t[3] > t[0]       # tiny experts: host-bound


def test_assumption_file_agrees_with_the_constant():
    a = assumption_files.assumptions("training.csv")["host_op_s"]
    assert (a.low, a.central, a.high) == pytest.approx((training.HOST_OP_S["low"], training.HOST_OP_S["central"],
                                                        training.HOST_OP_S["high"]))
    assert training.Stack().host_op_s == training.HOST_OP_S["central"]
