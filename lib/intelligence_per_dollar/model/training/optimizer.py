"""The optimizer step: mixed-precision Adam over the parameters each GPU updates.

Bytes per parameter per Rajbhandari et al. 2020 ("ZeRO", section 3.1 and 5): fp32 master weights
and two moments are 12 bytes of state; with ZeRO stage >= 1 each data-parallel rank updates only
its shard. The step is memory-bound: its time is the HBM traffic over the effective bandwidth.
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model.training.context import Context, Layout
from intelligence_per_dollar.model.training.memory import WEIGHT_BYTES, ParamsPerGPU

__all__ = ["OPTIMIZER_STEP_BYTES_PER_PARAM", "step_bytes_per_param", "updated_params", "step_s",
           "grad_accumulation_s"]

#: Bytes moved through HBM per local parameter by a fused Adam step of the default stack: read/write master, m, v
#: (3 x 8), read the fp32 gradient (4), write the bf16 weight (2); :func:`step_bytes_per_param` for any stack.
OPTIMIZER_STEP_BYTES_PER_PARAM = 30.0


def step_bytes_per_param(stack) -> float:
    """HBM bytes a fused Adam step moves per local parameter under ``stack``: it reads and writes its states
    (``Stack.optimizer_state_bytes``, twice), reads the gradient (``Stack.grad_bytes``) and writes the BF16 working
    weight, except where the stored parameter is the master it steps (``Stack.sharded_master_params``)."""
    return (2 * stack.optimizer_state_bytes + stack.grad_bytes
            + (0.0 if stack.sharded_master_params else WEIGHT_BYTES))


def updated_params(lay: Layout, params: ParamsPerGPU):
    """Parameters whose optimizer state this GPU updates: its stage's share, divided over the
    data-parallel ranks under ZeRO >= 1 (dense over ``dp x cp``, experts over ``tp cp dp / ep``)."""
    zero = lay.zero
    return (params.dense / np.where(zero >= 1, params.dp_dense, 1)
            + params.expert / np.where(zero >= 1, params.dp_expert, 1))


def step_s(ctx: Context, lay: Layout, params: ParamsPerGPU):
    """Seconds of one optimizer step on one GPU (HBM-bound)."""
    return updated_params(lay, params) * step_bytes_per_param(ctx.stack) / ctx.hbm_effective_bytes_per_s


def grad_accumulation_s(ctx: Context, lay: Layout, params: ParamsPerGPU):
    """Seconds per step of the gradient-accumulation passes outside the GEMMs: every micro-batch moves
    ``Stack.grad_accumulation_bytes`` per local parameter (all of the stage's parameters, dense and expert,
    whatever the ZeRO stage shards later) through HBM on the compute stream, at the memory-bound rate.
    nanotron's ``FP32GradientAccumulator`` (``src/nanotron/optim/gradient_accumulator.py``: ``fp32_grad.add_(
    half_param.grad)`` after each backward) moves 10 bytes; Megatron's fused weight-gradient accumulation none."""
    return lay.microbatches * params.total * ctx.stack.grad_accumulation_bytes / ctx.hbm_effective_bytes_per_s
