"""nanotron's eager activation and attention layout copies (session 50): its Llama block fuses the norms and the
rotary embedding but runs the SwiGLU as eager ops on the merged gate/up output (``Stack.fused_activation`` False),
and copies q, k and v between layouts around the rotary and attention kernels (``Stack.qkv_layout_copies``). Both
are HBM traffic on the compute stream, priced at the memory-bound rate."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import compute, context, evaluate

NANO = validation.STACKS["nanotron-2025"]
FUSED = replace(NANO, fused_activation=None, qkv_layout_copies=False)


def _ctx(stack, model="Llama-3.1-8B"):
    return training.make_context(model, "H100-SXM", "bf16", 4096, 4096 * 256, stack, "central", False)


def _cand(**par):
    c = {"tp": 2, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 2, "interleave": 1, "recompute": 0, "zero": 1}
    c.update(par)
    return {k: np.asarray([v]) for k, v in c.items()}


@pytest.mark.parametrize("field,bad", [("fused_activation", "no"), ("fused_activation", 0),
                                       ("qkv_layout_copies", None), ("qkv_layout_copies", "yes")])
def test_fields_take_booleans_only(field, bad):
    with pytest.raises(ValueError, match=field):
        replace(training.MEGATRON_CORE, **{field: bad})


def test_fused_activation_follows_fused_elementwise_unless_set():
    assert compute.activation_fused(training.MEGATRON_CORE)
    assert not compute.activation_fused(training.STACKS["fsdp2-eager"])
    assert not compute.activation_fused(NANO) and NANO.fused_elementwise
    assert compute.activation_fused(replace(training.STACKS["fsdp2-eager"], fused_activation=True))


def test_activation_only_bytes_by_hand_for_llama3_8b():
    """The activation alone over the FFN width 14,336 (4 / 8 bytes per element, :data:`compute.UNFUSED_SWIGLU_BYTES`)
    and, on a merged gate/up output, the backward's concatenation of the two gradient halves (8 more); split over TP;
    the norms and the rotary embedding add nothing when only the activation is unfused."""
    s = _ctx(NANO).s
    f, b = compute.unfused_elementwise_bytes_per_token(s, False, 1, True, norms_and_rope=False)
    assert (f, b) == (14336 * 4, 14336 * 8)
    f2, b2 = compute.unfused_elementwise_bytes_per_token(s, False, 2, True, norms_and_rope=False, merged_gate_up=True)
    assert (f2, b2) == (14336 * 4 / 2, 14336 * 16 / 2)
    full = compute.unfused_elementwise_bytes_per_token(s, False, 1, True)
    norms = compute.unfused_elementwise_bytes_per_token(s, False, 1, True, activation=False)
    assert full[0] == pytest.approx(norms[0] + f) and full[1] == pytest.approx(norms[1] + b)


def test_layout_copy_bytes_by_hand():
    """Llama 3.1 8B over TP 2: q 4096 / 2 wide, k (and v) 1024 / 2 wide; forward 4 per q element and 24 per k element
    (each of k and v copied, concatenated and permuted), backward 4 and 8 (the split's concatenation)."""
    s = _ctx(NANO).s
    f, b = compute.qkv_layout_copy_bytes_per_token(s, 2)
    assert f == 2048 * 4 + 512 * 24 == 20480
    assert b == 2048 * 4 + 512 * 8
    assert compute.qkv_layout_copy_bytes_per_token(s, 1) == pytest.approx((2 * f, 2 * b))
    mla = _ctx(NANO, "DeepSeek-V3").s
    assert compute.qkv_layout_copy_bytes_per_token(mla, 1) == (0.0, 0.0)


def test_memory_bound_time_grows_by_the_bytes_and_the_kernels():
    """The layer's memory-bound time grows by the copies' and the activation's bytes over the effective HBM rate plus
    their kernels' floors; the GEMMs do not move."""
    ctx, base = _ctx(NANO), _ctx(FUSED)
    lay = context.layout(ctx, _cand())
    f, b = compute.memory_bound_s(ctx, lay, 0.0, False)
    f0, b0 = compute.memory_bound_s(base, lay, 0.0, False)
    cf, cb = compute.qkv_layout_copy_bytes_per_token(ctx.s, 2)
    af, ab = compute.unfused_elementwise_bytes_per_token(ctx.s, False, 2, True, norms_and_rope=False,
                                                         merged_gate_up=True)
    kernels = compute.QKV_LAYOUT_COPY_KERNELS + compute.UNFUSED_ACTIVATION_EXTRA_KERNELS
    hbm, tokens = ctx.hbm_effective_bytes_per_s, lay.tokens[0]
    assert f[0] - f0[0] == pytest.approx(tokens * (cf + af) / hbm + kernels * ctx.kernel_floor_s, rel=1e-9)
    assert b[0] - b0[0] == pytest.approx(tokens * (cb + ab) / hbm
                                         + compute.NONGEMM_BWD_OVER_FWD * kernels * ctx.kernel_floor_s, rel=1e-9)
    slow, fast = evaluate(ctx, _cand()), evaluate(base, _cand())
    assert slow["step_time_s"][0] > fast["step_time_s"][0]
    assert slow["microbatch_parts_s"]["gemm"][0] == pytest.approx(fast["microbatch_parts_s"]["gemm"][0])


def test_only_nanotron_runs_them():
    """Megatron-Core fuses the activation and reads the fused projection in place; torchtitan's eager stack runs every
    chain unfused on separate projections (no split to concatenate). XTuner (session 52) states Triton norm and rotary
    kernels without torch.compile: its norms fused, its SwiGLU eager, on separate projections."""
    others = {k: v for k, v in validation.STACKS.items() if k != "nanotron-2025"}
    assert not any(st.qkv_layout_copies for st in others.values())
    xtuner = others.pop("xtuner-2024")
    assert xtuner.fused_elementwise and xtuner.fused_activation is False and not xtuner.fused_projections
    assert all(st.fused_activation is None for st in others.values())
    assert not any(st.qkv_layout_copies for st in training.STACKS.values())
