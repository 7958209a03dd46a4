"""Gradient accumulation outside the GEMMs (session 49): nanotron's ``FP32GradientAccumulator`` adds every local
parameter's BF16 gradient into its fp32 buffer after each micro-batch's backward, 10 bytes of HBM traffic per
parameter per micro-batch (``Stack.grad_accumulation_bytes``); Megatron's weight-gradient GEMM accumulates into
``main_grad`` itself, so its stacks move nothing extra."""

from dataclasses import replace

import numpy as np
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import context, evaluate, memory, optimizer

NANO = validation.STACKS["nanotron-2025"]
NONE = replace(NANO, grad_accumulation_bytes=0.0)


def _ctx(stack, batch_seqs=256, model="Llama-3.1-8B"):
    return training.make_context(model, "H100-SXM", "bf16", 4096, 4096 * batch_seqs, stack, "central", False)


def _cand(**par):
    c = {"tp": 2, "pp": 1, "dp": 8, "cp": 1, "ep": 1, "microbatch": 2, "interleave": 1, "recompute": 0, "zero": 1}
    c.update(par)
    return {k: np.asarray([v]) for k, v in c.items()}


@pytest.mark.parametrize("bad", [-1.0, 33.0, True, "10", None])
def test_bytes_must_be_a_number_in_range(bad):
    with pytest.raises(ValueError, match=r"grad_accumulation_bytes=.* must be a number in \[0, 32\]"):
        replace(training.MEGATRON_CORE, grad_accumulation_bytes=bad)


def test_pass_is_its_bytes_over_the_memory_bound_rate_every_micro_batch():
    """``microbatches x local parameters x bytes / effective HBM rate``: local parameters are the whole stage's share
    (ZeRO-1 keeps the full fp32 gradient buffer), not the optimizer's shard."""
    ctx = _ctx(NANO)
    lay = context.layout(ctx, _cand())
    params = memory.params_per_gpu(ctx, lay)
    t = optimizer.grad_accumulation_s(ctx, lay, params)[0]
    expect = lay.microbatches[0] * params.total[0] * 10.0 / ctx.hbm_effective_bytes_per_s
    assert t == pytest.approx(expect, rel=1e-12)
    assert params.total[0] > 3.5e9                  # 8B over TP 2: the unsharded local parameters
    assert lay.microbatches[0] == 256 // (8 * 2)
    assert optimizer.grad_accumulation_s(_ctx(NONE), lay, params)[0] == 0.0


def test_step_grows_by_the_pass_and_scales_with_the_micro_batches():
    """The evaluator adds the pass to the optimizer's share of the step and nothing else moves; twice the global
    batch at the same micro-batch doubles it."""
    for batch in (128, 256):
        with_pass, without = evaluate(_ctx(NANO, batch), _cand()), evaluate(_ctx(NONE, batch), _cand())
        extra = with_pass["step_time_s"][0] - without["step_time_s"][0]
        assert extra > 0
        assert with_pass["optimizer_s"][0] - without["optimizer_s"][0] == pytest.approx(extra, rel=1e-9)
        assert with_pass["pipeline_s"][0] == pytest.approx(without["pipeline_s"][0], rel=1e-12)
        if batch == 128:
            first = extra
    assert extra == pytest.approx(2 * first, rel=1e-9)


def test_only_nanotron_carries_the_pass():
    """nanotron's accumulator is a pass of its own (and of the Fast-LLM row's nanotron stand-in); the Megatron, FSDP
    and DeepSpeed presets fuse or skip it."""
    assert NANO.grad_accumulation_bytes == 10.0 == validation.STACKS["fast-llm-2025"].grad_accumulation_bytes
    others = {k: v for k, v in validation.STACKS.items() if k not in ("nanotron-2025", "fast-llm-2025")}
    assert all(st.grad_accumulation_bytes == 0.0 for st in others.values())
    assert all(st.grad_accumulation_bytes == 0.0 for st in training.STACKS.values())
