"""Issue 12, torchtitan's hardware and async TP: the sustained clock under a board power limit
(DVFS), the power cap and HBM variant carried by a measured run, and PyTorch async TP hiding the
forward's TP collectives only."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import efficiency, peaks, training
from intelligence_per_dollar.model.training import communication, context
from intelligence_per_dollar.sources import assumptions, hardware

LLAMA8B = {"layers": 32, "d_model": 4096, "heads": 32, "kv_heads": 8, "d_ff": 14336, "vocab": 128256}
LLAMA70B = {"layers": 80, "d_model": 8192, "heads": 64, "kv_heads": 8, "d_ff": 28672, "vocab": 128256}


def test_sustained_clock_scale_by_hand():
    """torchtitan's 500 W H100s (700 W rated), static share 0.13, exponent 2.5:
    ((500/700 - 0.13) / 0.87) ** (1/2.5) = 0.671593 ** 0.4 = 0.85279."""
    assert peaks.sustained_clock_scale(500, 700, 0.13, 2.5) == pytest.approx(0.85279, abs=1e-5)
    # V proportional to f (a = 3) and no static power: the clock goes as the cube root of the power
    assert peaks.sustained_clock_scale(350, 700, 0.0 + 1e-12, 3.0) == pytest.approx(0.5 ** (1 / 3), rel=1e-9)
    assert peaks.sustained_clock_scale(700, 700, 0.13, 2.5) == 1.0


def test_sustained_clock_scale_rises_with_the_cap_and_rejects_bad_input():
    caps = [200, 300, 400, 500, 600, 700]
    scales = [peaks.sustained_clock_scale(c, 700, 0.13, 2.5) for c in caps]
    assert all(a < b for a, b in zip(scales, scales[1:]))
    for bad in (800, 0, 91.0, True, "500"):      # 91 W is below the static 0.13 x 700 = 91 W
        with pytest.raises(ValueError, match="power_cap_w"):
            peaks.sustained_clock_scale(bad, 700, 0.13, 2.5)
    with pytest.raises(ValueError, match="exponent"):
        peaks.sustained_clock_scale(500, 700, 0.13, 0.0)


def test_power_cap_scales_only_the_compute_ceilings_by_the_clock():
    acc = hardware.get("H100-SXM")
    a = assumptions.assumptions("training.csv")
    base = efficiency.ceilings(acc, "central")
    capped = context.power_capped_ceilings(base, acc, 500, "central")
    clock = peaks.sustained_clock_scale(500, acc.power_w, a["power_static_fraction"].central,
                                        a["dvfs_power_exponent"].central)
    assert capped.gemm_fraction("bf16") == pytest.approx(base.gemm_fraction("bf16") * clock)
    assert capped.attention_fraction() == pytest.approx(base.attention_fraction() * clock)
    assert capped.hbm_fraction == base.hbm_fraction
    # the low scenario throttles most: high static share with the low exponent
    low = context.power_capped_ceilings(efficiency.ceilings(acc, "low"), acc, 500, "low")
    low_clock = peaks.sustained_clock_scale(500, acc.power_w, a["power_static_fraction"].high,
                                            a["dvfs_power_exponent"].low)
    assert low.power_throttle == pytest.approx(efficiency.ceilings(acc, "low").power_throttle * low_clock)
    assert low_clock < clock
    assert context.power_capped_ceilings(base, acc, None, "central") is base


def test_estimate_under_a_power_cap():
    """A 500 W cap slows a compute-bound FSDP step, by less than the clock (memory-bound kernels and
    communication keep their speed); the rated limit changes nothing; bad caps raise."""
    kw = dict(model=LLAMA8B, accelerator="H100-SXM", gpus=8, precision="bf16", seq_len=8192,
              global_batch_tokens=16 * 8192, stack=training.FSDP2,
              parallelism={"tp": 1, "pp": 1, "dp": 8, "microbatch": 2, "recompute": "selective", "zero": 3})
    free = training.estimate(**kw)
    assert training.estimate(**kw, power_cap_w=700).tokens_per_s_per_gpu == pytest.approx(free.tokens_per_s_per_gpu)
    capped = training.estimate(**kw, power_cap_w=500)
    ratio = capped.tokens_per_s_per_gpu / free.tokens_per_s_per_gpu
    clock = context.power_capped_ceilings(efficiency.ceilings("H100-SXM", "central"), hardware.get("H100-SXM"),
                                          500, "central").power_throttle / efficiency.ceilings(
        "H100-SXM", "central").power_throttle
    assert clock < ratio < 1.0
    for bad in (701, 0, -5, "500", True):
        with pytest.raises(ValueError, match="power_cap_w"):
            training.estimate(**kw, power_cap_w=bad)


def test_torchtitan_rows_carry_their_hardware_variant():
    """torchtitan's benchmark (llama3_h100_202412_torchtitan.md, Hardware): 96 GB HBM2e at 2.4 TB/s,
    default 500 W power limit; the other rows keep the catalogue part."""
    cases = {c["id"]: c for c in validation.runs()}
    tt = cases["tt-llama31-8b-h100-8-fsdp-compile"]
    assert tt["power_cap_w"] == 500.0
    acc = validation.accelerator(tt)
    assert (acc.hbm_bytes, acc.hbm_bytes_per_s, acc.id) == (96e9, 2.4e12, "H100-SXM")
    other = cases["trainy-llama31-8b-h200-32-fsdp-fp8"]
    assert "power_cap_w" not in other
    assert validation.accelerator(other) == hardware.get("H200")


def test_async_tp_hides_the_forward_only():
    """PyTorch async TP (torchtitan): the forward's TP collectives hide behind its GEMMs, the
    backward's stay as without overlap (2 all-reduces' bytes + the SP all-gather redone);
    Transformer Engine's overlap hides both."""
    ctx = training.make_context(LLAMA70B, "H100-SXM", "fp8", 8192, 8192 * 512, training.FSDP2, "central", False)
    c = {"tp": 8, "pp": 1, "dp": 32, "cp": 1, "ep": 1, "microbatch": 16, "interleave": 1, "recompute": 2, "zero": 3}
    lay = context.layout(ctx, {k: np.asarray([v]) for k, v in c.items()})
    t_ar = communication.tp_all_reduce_s(ctx, lay)
    long_gemm = np.asarray([1e3])
    sync_f, sync_b = communication.tp_exposed_s(ctx, lay, t_ar, long_gemm)
    actx = replace(ctx, stack=training.STACKS["fsdp2-asynctp"])
    async_f, async_b = communication.tp_exposed_s(actx, lay, t_ar, long_gemm)
    te_f, te_b = communication.tp_exposed_s(replace(ctx, stack=replace(ctx.stack, tp_overlap=True)), lay, t_ar,
                                            long_gemm)
    assert sync_f[0] == pytest.approx(2 * t_ar[0]) and sync_b[0] == pytest.approx(3 * t_ar[0])
    # hidden: only the compute slowdown it causes (communication.overlap_exposed_s) is left
    hidden = ctx.ceil.overlap_compute_slowdown / (1 + ctx.ceil.overlap_compute_slowdown) * 2 * t_ar[0]
    assert async_f[0] == pytest.approx(hidden) and async_b[0] == pytest.approx(sync_b[0])
    assert te_f[0] == pytest.approx(hidden) and te_b[0] == pytest.approx(hidden)


def test_rows_carry_the_cluster_they_ran_on():
    """Set 18's clusters differ from the catalogue systems: KempnerForge's H200 nodes hold 4 GPUs
    (report header '4x NVIDIA H200 (141 GB) per node'), IBM's FSDP runs had 400 Gb/s per 8-A100 node
    and 800 Gb/s per 8-H100 node (pytorch.org/blog/maximizing-training); the rows say so and
    validation.accelerator puts it into the accelerator."""
    cases = {c["id"]: c for c in validation.runs()}
    kf = validation.accelerator(cases["kforge-h200-llama3-70b-tp4-fsdp8-32"])
    assert (kf.id, kf.scaleup_domain_gpus, kf.scaleout_bytes_per_s) == ("H200", 4, hardware.get("H200").scaleout_bytes_per_s)
    assert validation.accelerator(cases["ibm-fsdp-llama2-70b-a100-128"]).scaleout_bytes_per_s == 400e9 / 8 / 8
    assert validation.accelerator(cases["ibm-fsdp-llama2-70b-h100-96"]).scaleout_bytes_per_s == 800e9 / 8 / 8
    plain = [c for c in cases.values() if not set(validation.ACCELERATOR_OVERRIDES) & set(c)]
    assert len(plain) > 200 and all(validation.accelerator(c) == hardware.get(c["accelerator"]) for c in plain)


def test_a_smaller_node_or_a_slower_network_slows_sharded_training():
    """TP4 x FSDP8 of Llama 3.1 70B on 32 H200: with 4-GPU nodes the FSDP gathers and reduce-scatters
    cross InfiniBand instead of NVLink for half the group, and a NIC a quarter as fast slows them
    again; the compute part is the same."""
    h200 = hardware.get("H200")
    kw = dict(model="Llama-3.1-70B", gpus=32, precision="bf16", seq_len=4096, global_batch_tokens=64 * 4096,
              parallelism={"tp": 4, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 2, "recompute": "full",
                           "zero": 3},
              stack=training.FSDP2)
    t8 = training.estimate(accelerator=h200, **kw).step_time_s
    t4 = training.estimate(accelerator=replace(h200, scaleup_domain_gpus=4), **kw).step_time_s
    slow = training.estimate(accelerator=replace(h200, scaleup_domain_gpus=4,
                                                 scaleout_bytes_per_s=h200.scaleout_bytes_per_s / 4), **kw).step_time_s
    assert t8 < t4 < slow


@pytest.mark.parametrize("cells, msg", [(",,,,4.5,,", "scaleup_domain_gpus.*not a whole number"),
                                        (",,,,0,,", "scaleup_domain_gpus.*positive"),
                                        (",,,,four,,", "scaleup_domain_gpus.*not a number"),
                                        (",,,,4,0,", "scaleout_bytes_per_s.*positive"),
                                        (",,,,4,-1e9,", "scaleout_bytes_per_s.*positive"),
                                        (",0,,,4,,", "power_cap_w.*positive"),
                                        (",,0,,4,,", "hbm_bytes.*positive"),
                                        (",,,0,4,,", "hbm_bytes_per_s.*positive"),
                                        (",,,,4,,0", "document_tokens.*positive"),
                                        (",,,,4,,many", "document_tokens.*not a number")])
def test_cluster_columns_are_validated(tmp_path, cells, msg):
    """The optional hardware columns (power cap, HBM variant, cluster) and the packed documents' length refuse zero,
    negative and non-numeric values, naming the column."""
    from intelligence_per_dollar.sources import io as sio, runs
    text = sio.data_path("runs", "training_runs.csv").read_text()
    bad = tmp_path / "runs.csv"
    line = next(l for l in text.splitlines() if l.startswith("kforge-h200-llama3-70b-tp4-fsdp8-32,"))
    # power_cap_w, hbm_bytes, hbm_bytes_per_s, scaleup_domain_gpus, scaleout_bytes_per_s, document_tokens
    assert line.endswith(",,,,4,,")
    bad.write_text(text.replace(line, line[:-len(",,,,4,,")] + cells))
    with pytest.raises(sio.DataError, match=msg):
        runs.training_runs(tuple(validation.STACKS), bad)


def test_non_gemm_kernels_add_their_floors():
    """compute.kernel_floors_s: make_context fills the floor (inference.csv kernel_floor_s, 2.8 us central) and the
    counts (training.csv: 7 per dense layer's forward, 9 more in a MoE layer, less the FFN activation the experts'
    weighted activation replaces when there is no shared expert); the backward launches twice as many; the
    memory-bound time is the byte-timed traffic plus exactly these."""
    from intelligence_per_dollar.model.training import compute
    kw = ("bf16", 4096, 4096 * 64, training.MEGATRON_CORE, "central", False)
    ctx = training.make_context("Llama-3.1-8B", "H200", *kw)
    assert (ctx.kernel_floor_s, ctx.nongemm_kernels, ctx.moe_nongemm_kernels) == (2.8e-6, 7, 9)
    c = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 1, "interleave": 1, "recompute": 0, "zero": 1}
    lay = context.layout(ctx, {k: np.asarray([v]) for k, v in c.items()})
    with_f, with_b = compute.memory_bound_s(ctx, lay, 100.0, False)
    bare = replace(ctx, kernel_floor_s=0.0)
    no_f, no_b = compute.memory_bound_s(bare, lay, 100.0, False)
    assert np.allclose(with_f - no_f, 7 * 2.8e-6) and np.allclose(with_b - no_b, 14 * 2.8e-6)
    assert compute.kernel_floors_s(ctx, True) == pytest.approx((15 * 2.8e-6, 30 * 2.8e-6))
    shared = training.make_context("DeepSeek-V3", "H200", *kw)
    assert shared.s.shared_experts >= 1
    assert compute.kernel_floors_s(shared, True) == pytest.approx((16 * 2.8e-6, 32 * 2.8e-6))
    low = training.make_context("Llama-3.1-8B", "H200", *kw[:4], "low", False)
    assert compute.kernel_floors_s(low, False)[0] < compute.kernel_floors_s(ctx, False)[0]
