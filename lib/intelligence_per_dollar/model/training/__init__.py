"""Training performance from first principles: memory per GPU, step time, parallelism search.

One call evaluates whole arrays of candidate configurations (one element per candidate), so the
search over TP x PP x interleave x DP x EP x CP x micro-batch x recompute x ZeRO is a few numpy
passes. :func:`estimate` and :func:`gpus_for_deadline` are the API contract of issue 3. MFU is
never an input: it comes out of the shapes, the calibrated efficiency curves and the collective
costs.

The evaluator is a chain of named stages, each a module testable alone:

* :mod:`.stack`, :mod:`.context` -- the software stack; the per-run context and the per-candidate layout;
* :mod:`.memory` -- weights, gradients, optimizer states (ZeRO) and activations (recompute);
* :mod:`.compute` -- GEMM and attention time on the efficiency curves, memory-bound kernels;
* :mod:`.communication` -- TP, CP, EP, PP and DP collectives and what the stack overlaps;
* :mod:`.pipeline` -- 1F1B / interleaved / DualPipe bubble and the bottleneck stage;
* :mod:`.optimizer` -- the Adam step;
* :mod:`.evaluator` -- composes the stages into step time and memory;
* :mod:`.search`, :mod:`.estimator` -- candidate layouts, the fastest that fits, :class:`Estimate`;
* :mod:`.exact` -- exact searches over the GPUs in use (idle GPUs allowed; fewest racks for a step limit);
* :mod:`.sizing`, :mod:`.regimes` -- GPUs for a deadline in both sizing regimes (memoised);
* :mod:`.decomposition` -- which accelerator attribute a GPU ratio comes from.

Import the package (``from intelligence_per_dollar.model import training``); the names below are
its public API.
"""

from intelligence_per_dollar.model.training.context import (PARALLELISM_KEYS, PRECISIONS, RECOMPUTE, Context,
                                                            ceiling_scale_range, format_layout, make_context)
from intelligence_per_dollar.model.training.sizing import (GLOBAL_BATCH_TOKENS, THROUGHPUT_SEQS_PER_GPU, Deadline,
                                                             batch_tokens, gpus_for_deadline,
                                                             gpus_for_deadline_throughput, throughput_curve)
from intelligence_per_dollar.model.training.decomposition import DECOMPOSITION_STEPS, decompose_ratio_regime
from intelligence_per_dollar.model.training.estimator import Estimate, estimate
from intelligence_per_dollar.model.training.evaluator import evaluate
from intelligence_per_dollar.model.training.regimes import (REGIMES, deadline, deadline_if_cached,
                                                            deadline_table, ratio_regime)
from intelligence_per_dollar.model.training.search import JOB_BLOCK_GPUS, candidates
from intelligence_per_dollar.model.training.stack import (DEEPSEEK_V3, DEEPSPEED, FP4_KEPT_LAYER_FRACTION,
                                                          FP4_KEPT_PRECISIONS, FSDP2, HOST_OP_S, MEGATRON_2021, MEGATRON_CORE,
                                                          MODERN, MOE_LOAD_FACTOR, STACKS, Stack, default_stack)

__all__ = ["Stack", "MODERN", "MEGATRON_CORE", "MEGATRON_2021", "DEEPSEEK_V3", "FSDP2", "DEEPSPEED", "STACKS",
           "default_stack", "MOE_LOAD_FACTOR", "HOST_OP_S", "FP4_KEPT_LAYER_FRACTION",
           "FP4_KEPT_PRECISIONS", "ceiling_scale_range", "Context", "make_context", "PRECISIONS",
           "RECOMPUTE", "PARALLELISM_KEYS", "candidates", "evaluate", "JOB_BLOCK_GPUS", "Estimate", "estimate",
           "Deadline", "GLOBAL_BATCH_TOKENS", "THROUGHPUT_SEQS_PER_GPU", "batch_tokens", "gpus_for_deadline",
           "gpus_for_deadline_throughput", "throughput_curve", "REGIMES", "deadline", "deadline_if_cached",
           "deadline_table", "ratio_regime", "DECOMPOSITION_STEPS", "decompose_ratio_regime",
           "format_layout"]
