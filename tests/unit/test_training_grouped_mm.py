"""PyTorch's BF16 ``torch._grouped_mm`` on Blackwell (session 54): torchtitan's routed experts run on ATen's CUTLASS
grouped kernel (``Stack.grouped_gemm_kernel`` ``"torch"``), whose BF16 rate on B200 the torchao MoE-training README
times at 0.71-0.86 PFLOP/s forward and backward, about half the dense cuBLAS rate the model gives Blackwell; on Hopper
the SM90 kernel keeps the dense rate. The ceiling, the stack field, and what it moves."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import efficiency, peaks, training
from intelligence_per_dollar.model.training import compute, context
from intelligence_per_dollar.sources import hardware

#: The torchao README's B200 microbenchmarks (torchao/prototype/moe_training/README.md @0b1bb11, "Microbenchmarks"):
#: (M, N, K) and the BF16 forward + backward time in us at G = 1, 2, 4, 8 groups.
TORCHAO_B200_BF16 = {(128000, 8192, 5120): (43140.2, 39487.6, 39189.2, 37700.7),
                     (128000, 2048, 7168): (13064.8, 14900.2, 15823.6, 14966.8)}
BLACKWELL = ("B200", "GB200", "B300", "GB300")


def _ctx(stack, accelerator="B200", precision="bf16", model="Qwen3-30B-A3B"):
    return training.make_context(model, accelerator, precision, 4096, 4096 * 64, stack, "central", False)


def _lay(ctx, **par):
    c = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 8, "microbatch": 4, "interleave": 1, "recompute": 0, "zero": 3}
    c.update(par)
    return context.layout(ctx, {k: np.asarray([v]) for k, v in c.items()})


def test_the_b200_fraction_is_what_the_quoted_timings_give_against_the_models_dense_rate():
    """Each quoted timing is 3 GEMMs (forward, data and weight gradients) of 2 M N K FLOPs; their rates over the
    model's own sustained dense BF16 rate on B200 bracket the ceiling's low and high, and their mean is its central."""
    acc = hardware.get("B200")
    dense = peaks.dense_flop_per_s(acc, "bf16") * efficiency.ceilings(acc).gemm_fraction("bf16")
    ratios = [6.0 * m * n * k / (t * 1e-6) / dense for (m, n, k), ts in TORCHAO_B200_BF16.items() for t in ts]
    low, central, high = (efficiency.ceilings("B200", s).torch_grouped_mm_fraction for s in ("low", "central", "high"))
    assert low <= min(ratios) + 0.005 and max(ratios) - 0.005 <= high
    assert central == pytest.approx(np.mean(ratios), abs=0.01)


def test_blackwell_runs_torch_grouped_mm_at_about_half_the_dense_rate_and_hopper_at_it():
    for acc in BLACKWELL:
        assert 0.45 <= efficiency.ceilings(acc).torch_grouped_mm_fraction <= 0.6
    for acc in ("H100-SXM", "H200", "H800"):
        assert efficiency.ceilings(acc).torch_grouped_mm_fraction == 1.0


def test_only_torch_bf16_grouped_experts_take_the_fraction():
    torch_stack, vendor = training.FSDP2, replace(training.FSDP2, grouped_gemm_kernel="vendor")
    assert torch_stack.grouped_gemm_kernel == "torch" and training.MEGATRON_CORE.grouped_gemm_kernel == "vendor"
    f = efficiency.ceilings("B200").torch_grouped_mm_fraction
    assert compute.grouped_rate_scale(_ctx(torch_stack)) == f
    assert compute.grouped_rate_scale(_ctx(vendor)) == 1.0
    assert compute.grouped_rate_scale(_ctx(torch_stack, precision="fp8")) == 1.0       # torchao's scaled kernels
    assert compute.grouped_rate_scale(_ctx(torch_stack, accelerator="H100-SXM")) == 1.0


def test_the_routed_experts_take_longer_by_the_rate_and_nothing_else_moves():
    """Qwen3-30B-A3B at EP 8 on B200: 16 local experts of 8,192 rows each, mostly compute-bound, so the routed GEMMs
    take nearly 1/f as long with the torch kernel (never more: their operand stream and launch do not slow); the
    router and attention projections keep the dense rate, and a dense model is untouched."""
    torch_stack, vendor = training.FSDP2, replace(training.FSDP2, grouped_gemm_kernel="vendor")
    a, b = _ctx(torch_stack), _ctx(vendor)
    f = efficiency.ceilings("B200").torch_grouped_mm_fraction
    t_torch, t_vendor = compute.moe_ffn_gemm_s(a, _lay(a))[0], compute.moe_ffn_gemm_s(b, _lay(b))[0]
    router = compute.gemm_bf16_s(b, _lay(b).tokens[0], b.s.experts, b.s.d_model)
    assert 0.85 / f < (t_torch - router) / (t_vendor - router) <= 1.0 / f
    assert compute.attention_gemm_s(a, _lay(a))[0] == compute.attention_gemm_s(b, _lay(b))[0]
    da, db = _ctx(torch_stack, model="Llama-3.1-8B"), _ctx(vendor, model="Llama-3.1-8B")
    assert compute.moe_ffn_gemm_s(da, _lay(da, ep=1)) == 0.0
    assert compute.dense_ffn_gemm_s(da, _lay(da, ep=1))[0] == compute.dense_ffn_gemm_s(db, _lay(db, ep=1))[0]


def test_stack_refuses_an_unknown_grouped_kernel_by_name():
    with pytest.raises(ValueError, match="grouped_gemm_kernel='cutlass'.*vendor, torch"):
        training.Stack(grouped_gemm_kernel="cutlass")


def test_torchtitan_stacks_run_torch_grouped_mm_and_megatron_stacks_do_not():
    for name, stack in validation.STACKS.items():
        family = validation.STACK_FAMILIES[name]
        if name.startswith("torchtitan"):
            assert stack.grouped_gemm_kernel == "torch", name
        if family.startswith("Megatron"):
            assert stack.grouped_gemm_kernel == "vendor", name
