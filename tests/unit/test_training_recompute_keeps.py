"""A full recompute that keeps some GEMM outputs (session 55, ``Stack.full_recompute_keeps``): MaxText's
``remat_policy=save_qkv_proj`` (``jax.checkpoint_policies.save_only_these_names("query_proj", "value_proj", "key_proj",
"qkv_proj")``), which NVIDIA's MaxText Llama 3 70B recipe runs, recomputes the whole forward but the Q / K / V GEMMs and
holds their outputs; Paxml's ``SAVE_QKV_OUT_PROJ`` (its GPT-3 175B recipe) keeps the output projection's too. The time
it saves, the memory it costs, where it has no effect, the rows that state it."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import architecture, training
from intelligence_per_dollar.model.training import compute, context
from intelligence_per_dollar.sources import models

SAVES_QKV = replace(training.FSDP2, full_recompute_keeps="qkv")
SAVES_ATTN = replace(training.FSDP2, full_recompute_keeps="attention-projections")
PAR = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 1, "interleave": 1, "zero": 3}


def _est(stack, recompute, model="Llama-3.1-8B"):
    return training.estimate(model, "H100-SXM", 8, "bf16", 8192, 8 * 2 * 8192, dict(PAR, recompute=recompute),
                             stack=stack, all_gpus=True)


def test_the_qkv_projections_are_their_share_of_the_attention_gemms():
    """Llama 3's grouped-query block: Q is d wide and K, V 1/8 of it each, the output projection d, so the Q / K / V
    GEMMs are 1.25 / 2.25 of the attention projections' FLOPs; the timed share sits near it."""
    ctx = training.make_context("Llama-3.1-70B", "H100-SXM", "bf16", 8192, 8 * 8192, SAVES_QKV, "central", False)
    lay = context.layout(ctx, {k: np.asarray([v]) for k, v in dict(PAR, recompute=2).items()})
    share = compute.qkv_projection_gemm_s(ctx, lay) / compute.attention_gemm_s(ctx, lay)
    s = models.get("Llama-3.1-70B")
    q, kv = s.heads * architecture.head_dim(s), s.kv_heads * architecture.head_dim(s)
    assert float(share[0]) == pytest.approx((q + 2 * kv) / (2 * q + 2 * kv), rel=0.08)


def test_keeping_qkv_saves_their_recompute_and_holds_their_outputs():
    """Against the whole forward recomputed, the step is shorter by about the Q / K / V GEMMs once per layer and
    micro-batch (2 micro-batches of 8,192 tokens, 32 layers); memory grows by their outputs for every layer held;
    no recompute stays the fastest and the largest."""
    full, kept, none = _est(training.FSDP2, "full"), _est(SAVES_QKV, "full"), _est(training.FSDP2, "none")
    ctx = training.make_context("Llama-3.1-8B", "H100-SXM", "bf16", 8192, 8 * 2 * 8192, SAVES_QKV, "central", False)
    lay = context.layout(ctx, {k: np.asarray([v]) for k, v in dict(PAR, recompute=2).items()})
    qkv_s = float(compute.qkv_projection_gemm_s(ctx, lay)[0]) * 32 * 2
    assert full.step_time_s - kept.step_time_s == pytest.approx(qkv_s, rel=0.15)
    assert none.step_time_s < kept.step_time_s < full.step_time_s
    s = models.get("Llama-3.1-8B")
    qkv_bytes = 8192 * 2 * (s.heads + 2 * s.kv_heads) * architecture.head_dim(s) * 32      # one micro-batch held
    grown = kept.memory_per_gpu_bytes - full.memory_per_gpu_bytes
    assert grown == pytest.approx(qkv_bytes, rel=0.01)
    assert kept.memory_per_gpu_bytes < none.memory_per_gpu_bytes


@pytest.mark.parametrize("recompute", ["none", "selective"])
@pytest.mark.parametrize("stack", [SAVES_QKV, SAVES_ATTN])
def test_the_kept_set_changes_nothing_without_a_full_recompute(recompute, stack):
    a, b = _est(training.FSDP2, recompute), _est(stack, recompute)
    assert a.step_time_s == b.step_time_s and a.memory_per_gpu_bytes == b.memory_per_gpu_bytes


def test_an_unknown_kept_set_is_refused_by_name():
    with pytest.raises(ValueError, match="full_recompute_keeps='mlp'.*allowed: none, qkv, attention-projections"):
        replace(training.FSDP2, full_recompute_keeps="mlp")


def test_keeping_all_attention_projections_saves_more_time_and_holds_more():
    """Paxml's SAVE_QKV_OUT_PROJ skips the output projection's recompute too: faster than keeping Q / K / V alone by
    about that GEMM once per layer and micro-batch, and larger by its d_model-wide output per token and layer."""
    qkv, attn = _est(SAVES_QKV, "full"), _est(SAVES_ATTN, "full")
    ctx = training.make_context("Llama-3.1-8B", "H100-SXM", "bf16", 8192, 8 * 2 * 8192, SAVES_ATTN, "central", False)
    lay = context.layout(ctx, {k: np.asarray([v]) for k, v in dict(PAR, recompute=2).items()})
    out_s = float((compute.attention_gemm_s(ctx, lay) - compute.qkv_projection_gemm_s(ctx, lay))[0]) * 32 * 2
    assert qkv.step_time_s - attn.step_time_s == pytest.approx(out_s, rel=0.15)
    s = models.get("Llama-3.1-8B")
    assert attn.memory_per_gpu_bytes - qkv.memory_per_gpu_bytes == pytest.approx(8192 * 2 * s.d_model * 32, rel=0.01)


@pytest.mark.parametrize("stack,count,policy", [("xla-fsdp-te-save-qkv", 10, "remat_policy=save_qkv_proj"),
                                                ("xla-fsdp-te-save-qkv-out", 3, "SAVE_QKV_OUT_PROJ")])
def test_the_rows_on_the_stacks_state_their_policy_and_come_closer(stack, count, policy):
    """The ten MaxText Llama 3 70B rows (dgxc-benchmarking, 128-2,048 H100) state ``remat_policy=save_qkv_proj``, the
    three Paxml GPT-3 175B rows (128-2,048 H100) ``SAVE_QKV_OUT_PROJ``; on the stack that keeps the projections each
    is predicted faster than on the whole-forward recompute, and their median error shrinks."""
    rows = [c for c in validation.runs() if c["stack"] == stack]
    assert len(rows) == count and all(policy in c["note"] for c in rows)
    assert all(c["unit"] == "iteration_s" for c in rows)
    meas = np.array([c["measured"] for c in rows])
    kept, full = (np.array([validation.predict(dict(c, stack=st))[0] for c in rows])
                  for st in (stack, "xla-fsdp-te"))
    assert np.all(kept < full)
    assert np.median(np.abs(kept / meas - 1)) < np.median(np.abs(full / meas - 1))
