"""The cross entropy's traffic over the logits and nanotron's compute-cost pipeline split (session 47): the loss
kinds against Liger-Kernel's measured kernels on an H100 NVL, the size of the term for a narrow model with a wide
vocabulary, the split against the Ultra-Scale Playbook's printed nanotron layout, and the stacks whose sources state
their loss."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import compute, context, pipeline
from intelligence_per_dollar.sources import ceilings

#: Llama 3.2 1B's shape (16 layers, d 2048, 32 heads of 64, 8 KV heads, SwiGLU 8192, Llama 3's 128,256 entries).
LLAMA1B = {"layers": 16, "d_model": 2048, "heads": 32, "kv_heads": 8, "d_ff": 8192, "vocab": 128256}
#: Llama 3 8B (the Ultra-Scale Playbook's nanotron walkthrough): 32 layers, d 4096, 32 heads, SwiGLU 14336.
LLAMA8B = {"layers": 32, "d_model": 4096, "heads": 32, "kv_heads": 8, "d_ff": 14336, "vocab": 128256}
#: The casts around torchtitan's fp32 loss (R2 W4 in, R4 W2 out), which Liger's fp32 benchmark does not run.
CAST_BYTES = 12.0


def _ctx(model, stack, accelerator="H100-SXM", seq_len=4096, batch_seqs=16):
    return training.make_context(model, accelerator, "bf16", seq_len, seq_len * batch_seqs, stack, "central", False)


def _lay(ctx, **par):
    c = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 2, "interleave": 1, "recompute": 0, "zero": 1}
    c.update(par)
    return context.layout(ctx, {k: np.asarray([v]) for k, v in c.items()})


def _nvl_bytes_per_s():
    return _ctx(LLAMA8B, training.FSDP2, accelerator="H100-NVL").hbm_effective_bytes_per_s


def _measured(provider, mode):
    return [r for r in ceilings.cross_entropy_h100nvl() if r["provider"] == provider and r["mode"] == mode]


def test_torch_cross_entropy_traffic_reproduces_liger_measurement():
    """PyTorch's log-softmax + NLL loss on fp32 logits (Liger-Kernel's H100 NVL benchmark, 16,384 tokens, 32k-131k
    entries), timed as the torch-fp32 loss's bytes less its two casts at the H100 NVL's effective HBM rate: within
    10% of every measured forward-and-backward time; the forward alone matches the count of ``cunn_SoftMaxForward``
    (a max pass, a sum pass, a read-and-write: 16 bytes) within 10%."""
    rate = _nvl_bytes_per_s()
    full = _measured("torch", "full")
    assert len(full) == 3
    for r in full:
        model_ms = 1e3 * r["tokens"] * r["vocab"] * (compute.LOSS_TRAFFIC_BYTES["torch-fp32"] - CAST_BYTES) / rate
        assert model_ms == pytest.approx(r["time_ms"], rel=0.10)
    for r in _measured("torch", "forward"):
        assert 1e3 * r["tokens"] * r["vocab"] * 16.0 / rate == pytest.approx(r["time_ms"], rel=0.10)


def test_fused_cross_entropy_traffic_reproduces_liger_kernel():
    """A single-pass fused kernel (Liger's, the design Transformer Engine's copies) on fp32 logits: the fused bytes
    per BF16 entry, doubled for fp32, within 10% of each measured time; the kinds keep their order of cost."""
    rate = _nvl_bytes_per_s()
    for r in _measured("liger", "full"):
        model_ms = 1e3 * r["tokens"] * r["vocab"] * compute.FUSED_LOSS_TRAFFIC_BYTES * (r["logit_bytes"] / 2) / rate
        assert model_ms == pytest.approx(r["time_ms"], rel=0.10)
    b = compute.LOSS_TRAFFIC_BYTES
    assert compute.FUSED_LOSS_TRAFFIC_BYTES < b["torch-bf16"] < b["megatron-fused"] < b["megatron"] < b["torch-fp32"]


def test_loss_time_is_the_logits_traffic_and_splits_over_tp():
    """The LM head is its three BF16 GEMMs plus the loss; the loss time is tokens x vocab / tp x bytes per entry over
    the effective HBM rate, halved by TP 2 (vocab-parallel), and follows the stack's kind."""
    ctx = _ctx(LLAMA8B, training.MEGATRON_2021)
    lay1, lay2 = _lay(ctx), _lay(ctx, tp=2, dp=4)
    expected = float(np.ravel(lay1.tokens)[0]) * LLAMA8B["vocab"] * 52.0 / ctx.hbm_effective_bytes_per_s
    assert float(np.ravel(compute.loss_s(ctx, lay1))[0]) == pytest.approx(expected)
    assert float(np.ravel(compute.loss_s(ctx, lay2))[0]) == pytest.approx(expected / 2)
    gemm = 3 * compute.gemm_bf16_s(ctx, lay1.tokens, LLAMA8B["vocab"], LLAMA8B["d_model"])
    assert np.ravel(compute.lm_head_s(ctx, lay1))[0] == pytest.approx(np.ravel(gemm + expected)[0])
    fused = replace(ctx, stack=replace(ctx.stack, fused_cross_entropy=True))
    assert compute.loss_s(fused, lay1) == pytest.approx(expected * compute.FUSED_LOSS_TRAFFIC_BYTES / 52.0)


def test_a_narrow_model_with_a_wide_vocabulary_spends_as_long_in_the_unfused_loss_as_in_its_head():
    """Llama 3.2 1B's shape on H100: Megatron's unfused loss takes over 60% of the head GEMMs' time (52 bytes per
    entry at ~3 TB/s against 6 d FLOPs per entry at ~0.67 PFLOP/s), the single-pass fused one under 25%."""
    for fused, lo, hi in ((False, 0.6, 1.5), (True, 0.0, 0.25)):
        ctx = _ctx(LLAMA1B, replace(training.MEGATRON_2021, fused_cross_entropy=fused))
        lay = _lay(ctx)
        gemm = 3 * compute.gemm_bf16_s(ctx, lay.tokens, LLAMA1B["vocab"], LLAMA1B["d_model"])
        ratio = float(np.ravel(compute.loss_s(ctx, lay) / gemm)[0])
        assert lo < ratio < hi


def test_stacks_state_the_loss_their_framework_runs():
    """Megatron-Bridge's recipes run Transformer Engine's fused cross entropy (the Megatron-Core preset), NeMo 2024
    Megatron-Core's compiled fusion, Megatron-LM launched without the flag (FlagPerf, FlagScale, the Zero Bubble fork)
    and nanotron the unfused chain; flash-attn's, LLM Foundry's and llm.c's training code a fused kernel. Rows whose
    notes state a non-fused loss or a fused kernel run on a stack that agrees."""
    s = validation.STACKS
    assert training.MEGATRON_CORE.fused_cross_entropy and s["mbridge-2026"].fused_cross_entropy
    assert not s["nemo-2024"].fused_cross_entropy and s["nemo-2024"].loss == "megatron-fused"
    for name in ("megatron-lm-2024", "megatron-lm-2024-fa2", "zero-bubble-2024", "nanotron-2025", "megatron-2021"):
        assert not s[name].fused_cross_entropy and s[name].loss == "megatron", name
    for name in ("flash-attn-2022", "flash-attn-2023", "llm-foundry-2023", "llm-c-2024", "fsdp1-fused-ce"):
        assert s[name].fused_cross_entropy, name
    unfused = ("non-fused cross entropy", "cross_entropy_loss_fusion=false")
    fused = ("apex fused cross", "fused classifier", "CrossEntropyLossApex", "cross-entropy kernels")
    n_unfused = n_fused = 0
    for case in validation.runs():
        note = str(case.get("note", ""))
        if any(k in note for k in unfused):
            assert not s[case["stack"]].fused_cross_entropy, case["id"]
            n_unfused += 1
        elif any(k in note for k in fused):
            assert s[case["stack"]].fused_cross_entropy, case["id"]
            n_fused += 1
    assert n_unfused >= 3 and n_fused >= 15


def test_cost_balanced_split_reproduces_the_playbook_layout():
    """The Ultra-Scale Playbook's nanotron walkthrough prints Llama 3 8B on 8 pipeline stages as 5, 4, 4, 5, 4, 4, 4
    and 2 layers with the head on the last rank (``get_block_compute_costs``: 4 heads d_qkv h + 3 d_ff h per layer,
    vocab x h for the head)."""
    layer = 4 * 32 * 128 * 4096 + 3 * 14336 * 4096
    assert pipeline.cost_balanced_split(32, 8, layer, 128256 * 4096) == ((5, 4, 4, 5, 4, 4, 4, 2), 7)
    assert pipeline.cost_balanced_split(16, 4, 1.0, 0.0) == ((5, 4, 4, 3), 3)
    for bad in ((0, 4, 1.0, 1.0), (16, 0, 1.0, 1.0), (16, 4, 0.0, 1.0), (16, 4, 1.0, -1.0)):
        with pytest.raises(ValueError, match="cost_balanced_split"):
            pipeline.cost_balanced_split(*bad)


@settings(max_examples=60, deadline=None)
@example(layers=3, pp=3, head=8.0)
@given(layers=st.integers(1, 128), pp=st.integers(1, 32), head=st.floats(0.0, 8.0))
def test_cost_balanced_split_places_every_layer_once(layers, pp, head):
    """Every layer lands on exactly one rank, ranks fill in order, and no rank carries more layers than an even share
    of the total cost (layers and head, in layers) plus one. (A head heavier than the rest can leave all the layers on
    the first rank with it: 3 layers, 3 ranks, a head of 8 layers' cost.)"""
    counts, head_rank = pipeline.cost_balanced_split(layers, pp, 1.0, head)
    assert sum(counts) == layers and len(counts) == pp and 0 <= head_rank < pp
    assert all(c == 0 for c in counts[head_rank + 1:]) and all(c > 0 for c in counts[:head_rank])
    assert max(counts) <= math.ceil((layers + head) / pp) + 1


def test_nanotron_split_moves_a_heavy_head_off_the_critical_path():
    """Llama 3.2 1B's shape on PP 4 (the head costs about 4 layers): the compute-cost split gives the ranks 5, 5, 5
    and 1 layers plus the head, where the plain split puts the head on top of a full last stage of 4, so the step is
    more than 10% shorter."""
    base = validation.STACKS["nanotron-2025"]
    times = {}
    for split in (False, True):
        ctx = _ctx(LLAMA1B, replace(base, cost_balanced_split=split), batch_seqs=64)
        c = {"tp": 1, "pp": 4, "dp": 2, "cp": 1, "ep": 1, "microbatch": 1, "interleave": 1, "recompute": 0, "zero": 1}
        r = training.evaluate(ctx, {k: np.asarray([v]) for k, v in c.items()})
        times[split] = float(r["step_time_s"][0])
    assert times[True] < 0.9 * times[False]
    layer = 4 * 32 * 64 * 2048 + 3 * 8192 * 2048
    assert pipeline.cost_balanced_split(16, 4, layer, 128256 * 2048) == ((5, 5, 5, 1), 3)
