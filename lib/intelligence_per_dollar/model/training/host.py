"""Host (CPU) launch time of a MoE layer where the dispatcher synchronises host and device.

Megatron-Core's dropless all-to-all token dispatcher copies the split sizes
(``num_tokens_per_expert``) to the CPU and waits for them once per MoE layer and forward pass
(``megatron/core/transformer/moe/token_dispatcher.py``, ``MoEAlltoAllTokenDispatcher.preprocess``:
``_maybe_update_cuda_sync_point("before_ep_alltoall")``; ``dispatch_all_to_all`` calls
``_maybe_dtoh_and_synchronize``). After the sync the GPU queue is empty: the expert block's
kernels (dispatch all-to-all, grouped expert GEMMs, combine) run only as fast as the CPU
launches them. Nor can the CPU get ahead again before the next layer's sync: between two syncs
it launches the expert block of one layer and the attention block, router and dispatcher
preprocessing of the next, so each layer's forward takes ``max(GPU time, host time)`` over the
whole layer instead of hiding the host behind queued work. The backward pass reuses the CPU
split sizes (no sync): the CPU runs ahead and the layer's backward takes ``max(GPU time, host
time)`` over the whole layer too. A recomputed forward syncs again (it repeats the forward).
DeepEP's normal (high-throughput) dispatch syncs the same way: its ``notify_dispatch`` kernel writes the
received-token counts to host-mapped memory and the CPU polls them before it allocates the receive
buffer (DeepEP README: "the CPU will wait for GPU's signal to arrive, so this is not compatible with
CUDA graph"; ``moe_recv_counter`` in ``csrc/deep_ep.cpp``). Dispatchers with a static receive budget
(HybridEP's token budget, DeepEP's ``num_worst_tokens``) and CUDA-graphed MoE layers launch without it
(``Stack.moe_host_sync`` False).

Host operators per MoE layer and micro-batch, counted from the sources (one operator = one
host-side call that launches work: a cuBLASLt GEMM, a quantize kernel, an allocation, an
autograd hook, a collective):

* per local expert, each of the two ``GroupedLinear`` calls (FC1, FC2; Transformer Engine
  ``transformer_engine/pytorch/module/grouped_linear.py``), forward: one GEMM
  (``general_grouped_gemm`` -> ``nvte_multi_stream_cublas_gemm``, a C++ loop ``for i <
  num_gemms`` of ``cublas_gemm``, each building its descriptors and calling
  ``cublasLtMatmulAlgoGetHeuristic`` then ``cublasLtMatmul``: ``common/gemm/cublaslt_gemm.cu``),
  plus one input quantize per expert in FP8/FP4 (``tex.split_quantize``, one per split);
  backward: dgrad and wgrad GEMMs, the wgrad placeholder ``torch.empty`` of
  ``handle_custom_ddp_from_mcore`` and Megatron-Core DDP's per-parameter gradient hook (each
  expert weight is its own parameter ``weight{i}``), plus one grad-output quantize in FP8/FP4.
  So :data:`OPS_PER_EXPERT_FWD` = 2 (+2) and :data:`OPS_PER_EXPERT_BWD` = 8 (+2).
* per layer, independent of the experts (:data:`OPS_FIXED_FWD` / :data:`OPS_FIXED_BWD`): the
  dispatch all-to-alls of tokens and probabilities, the chunk sort by local expert
  (``sort_chunks_by_idxs``), the GroupedLinear output allocations, the weighted activation,
  the un-sort, the combine all-to-all and the un-permute (``token_dispatcher.py``
  ``dispatch_*`` / ``combine_*``; ``moe/experts.py`` ``TEGroupedMLP.forward``), and their
  backward counterparts.
* the rest of the layer (:data:`OPS_LAYER_FWD` / :data:`OPS_LAYER_BWD`, an estimate from the
  Megatron-Core call path with Transformer Engine modules: ``transformer_layer.py``,
  ``attention.py``, ``moe/router.py``, ``token_dispatcher.py`` ``preprocess``): forward, the
  fused norm + QKV ``LayerNormLinear`` (norm/cast and GEMM: 2), RoPE on q and k (2), the fused
  attention call (1), the output projection (cast and GEMM: 2), bias-dropout-add (1), the
  pre-MLP norm (1), the router's FP32 cast and gating GEMM (2), score function and top-k (2),
  routing map and probabilities (2), the balancing loss or forced-balance logits (2) and the
  token counts before the sync (1): 18; backward about twice as many (dgrad and wgrad GEMMs,
  norm, RoPE, attention and router backward): 36.

Per-operator host time: ``Stack.host_op_s``, low/central/high in :data:`~.stack.HOST_OP_S`
(``data/assumptions/training.csv`` ``host_op_s``), based on the eager dispatch measured on the project's H200
(``data/assumptions/inference.csv`` ``eager_dispatch_s``: 20-30 us per eager GEMM call).
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.model.training.context import Context, Layout
from intelligence_per_dollar.model.training.stack import HOST_OP_S

__all__ = ["HOST_OP_S", "OPS_PER_EXPERT_FWD", "OPS_PER_EXPERT_BWD", "OPS_FIXED_FWD", "OPS_FIXED_BWD",
           "OPS_LAYER_FWD", "OPS_LAYER_BWD", "moe_host_ops", "moe_host_s", "host_bound_s"]

#: Host operators per local expert and MoE layer, forward, in BF16 and with FP8/FP4 quantize.
OPS_PER_EXPERT_FWD = {"bf16": 2, "low_precision": 4}
#: The same in backward: dgrad + wgrad GEMMs, wgrad placeholder, DDP hook per FC (+ quantize).
OPS_PER_EXPERT_BWD = {"bf16": 8, "low_precision": 10}
#: Host operators of the expert block that do not depend on the expert count, forward
#: (2 dispatch all-to-alls, sort, 2 output allocations, activation, un-sort, combine all-to-all,
#: un-permute) and backward (their gradients: 3 all-to-alls, sort and un-sort, activation,
#: permute/un-permute, 2 dgrad allocations, 2 grad-output reshapes).
OPS_FIXED_FWD = 9
OPS_FIXED_BWD = 12
#: Host operators of the rest of a MoE layer (attention block, router, dispatcher preprocessing),
#: forward and backward: they fall between two syncs, so they count against the layer's GPU time too.
OPS_LAYER_FWD = 18
OPS_LAYER_BWD = 36


def moe_host_ops(local_experts, low_precision: bool):
    """(forward, backward) host operators of one MoE layer per micro-batch with ``local_experts``
    experts on the rank: the expert block and the rest of the layer (see the module docstring)."""
    key = "low_precision" if low_precision else "bf16"
    n = np.asarray(local_experts, dtype=float)
    if np.any(n < 1):
        raise ValueError(f"local_experts={local_experts!r} must be >= 1")
    return (OPS_LAYER_FWD + OPS_FIXED_FWD + OPS_PER_EXPERT_FWD[key] * n,
            OPS_LAYER_BWD + OPS_FIXED_BWD + OPS_PER_EXPERT_BWD[key] * n)


def moe_host_s(ctx: Context, lay: Layout):
    """(forward, backward) host launch time of one MoE layer per micro-batch:
    :func:`moe_host_ops` times ``Stack.host_op_s``; 0 for a dense model."""
    if not architecture.moe_layers(ctx.s):
        return 0.0, 0.0
    ops_f, ops_b = moe_host_ops(ctx.s.experts / lay.ep, ctx.low_precision)
    return ops_f * ctx.stack.host_op_s, ops_b * ctx.stack.host_op_s


def host_bound_s(ctx: Context, lay: Layout, gpu_f, gpu_b):
    """Extra forward and backward time of a MoE layer whose dispatcher syncs host and device
    (``Stack.moe_host_sync``): ``max(0, host - GPU)`` over the whole layer, forward (``gpu_f``:
    between two syncs the CPU launches one layer's worth of work at launch speed) and backward
    (``gpu_b``: no sync, the host hides behind the layer's backward where it can). 0 without the
    sync."""
    if not ctx.stack.moe_host_sync:
        return 0.0, 0.0
    h_f, h_b = moe_host_s(ctx, lay)
    return np.maximum(0.0, h_f - gpu_f), np.maximum(0.0, h_b - gpu_b)
