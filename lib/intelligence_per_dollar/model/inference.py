"""Inference serving from first principles: prefill, decode, KV capacity, the throughput-interactivity
frontier, time to first token, $/Mtok and tokens/s per MW.

**The serving step.** A continuous-batching server (Yu et al. 2022, "Orca", OSDI'22; vLLM/SGLang/
TensorRT-LLM in-flight batching) runs *iterations*. In the steady state of a replica that keeps
``b`` sequences decoding per attention rank, each iteration produces one token for each of the
``b`` sequences and also prefills the prompts of the requests that replace finished ones: ``b``
requests finish every ``OSL`` iterations, so each iteration carries on average
``b * ISL / OSL`` prompt tokens (chunked prefill, Agrawal et al. 2024, "Sarathi-Serve", OSDI'24).
The tokens through the weight matrices per iteration are therefore

    T = b (1 + ISL / OSL)                                                         (1)

which is exactly TensorRT-LLM's own ``max_num_tokens`` sizing rule for its throughput benchmark
(``tensorrt_llm/bench/build/tuning.py``: ``max_batch_size * (1 + isl / osl)``).

**Time of one iteration** is the sum of its kernels, each capped by the roofline that binds
(Williams, Waterman & Patterson 2009):

* matrix products (projections, FFNs, experts, LM head): :func:`efficiency.gemm_time_s`, i.e.
  ``max(2 m n k / (peak f_gemm), bytes / (hbm f_hbm)) + t_kernel`` with the calibrated H200-family
  ceilings. With few tokens the weight bytes bind (decode is memory-bound); with many the FLOPs do
  (prefill is compute-bound).
* mixture-of-experts layers read only the experts the batch touches. With ``T`` tokens routed
  top-``k`` over ``E`` experts uniformly, the expected number of distinct experts touched is
  ``E (1 - (1 - k/E)^T)`` (occupancy of ``T k`` draws; e.g. Fedus et al. 2022's capacity
  analysis). Grouped GEMMs process each expert's rows in tiles of ``moe_tile_rows``; the expected
  padded rows per expert are ``max(t phi, lambda + t/2 (1 - exp(-2 lambda / t)))`` with ``lambda =
  T k / E`` and ``phi`` the touched fraction (a partly filled last tile wastes t/2 rows on average).
  This reproduces the measured H200 grouped GEMMs (``h200-grouped-gemm`` validation group: 64
  tokens per expert on the memory roof, >= 256 on the compute roof, median error 2%).
  The busiest expert-parallel rank sets the pace (:func:`ep_load_imbalance`): expert popularity
  skew (``expert_load_cv``) plus the multinomial noise of a finite batch, ``1 + sqrt(2 ln ep)
  sqrt(cv^2 ep / E + ep / R)`` times the mean rows.
* decode attention reads each sequence's KV cache once per iteration: ``b x context x KV bytes per
  token`` at ``hbm f_hbm``, or its FLOPs at the flash-attention rate if those bind (MLA with weight
  absorption is compute-heavy: per head ``2 ctx (2 c + r)`` FLOPs, DeepSeek-V2 arXiv 2405.04434
  section 2.1.3 and Appendix C).
* prefill attention: causal flash attention FLOPs at the calibrated :func:`efficiency.attention_time_s`.
* elementwise kernels (norms, activation, RoPE, residuals, quantisation): memory-bound traffic of
  about ``10 d + 3 d_ff / tp`` BF16 values per token and layer (each norm reads and writes ``d``,
  residual adds read ``2d`` and write ``d``, the activation reads ``2 d_ff`` and writes ``d_ff``),
  plus a floor per kernel.
* **the per-kernel floor.** Every dependent kernel of a step costs at least ``kernel_floor_s``
  (~2.8 us on H200 under CUDA-graph replay: launch, one short wave, tail and the wait on the
  previous kernel; a graph of 1,000 dependent one-element adds replays at 1.0 us each, real norms,
  copies and reductions take 2-3 us). Non-GEMM kernels are counted per layer by architecture and
  implementation: a fused serving engine (``implementation="engine"``) launches
  ``other_kernels_per_layer`` (8) per layer plus ``moe_kernels_per_layer`` (12: routing top-k in
  FP32, expert-map sort, permute, activation, quantisation, grouped-GEMM setup, finalize) per MoE
  layer; the unfused PyTorch reference measured on our H200 (``implementation="pytorch"``) launches
  12 and 12 + 23 (counted in a kernel profile, ``tools/profile_moe_decode.py``). The floor was
  calibrated on the dense Llama-8B-shape decode at batch 1 and checked, not fitted, on the MoE decode.
* **grouped (MoE) GEMMs** (:func:`_grouped_gemm`) are pointer-array kernels (CUTLASS
  ``KernelPtrArrayTmaWarpSpecialized*``, as in ``torch._grouped_mm`` and TensorRT-LLM's MoE GEMM):
  every touched expert is a new group (TMA-descriptor switch, pipeline fill) whose weight panels
  stream through short K loops, so the weight stream runs at ``grouped_gemm_hbm_efficiency``
  (0.7) of the dense-GEMM rate, and each launch pays ``grouped_gemm_launch_s`` (~10 us: a setup
  kernel with one thread per expert, a device-side scan of all E group shapes, prologue and tail)
  even when only 8 of 128 experts are touched. Empty groups cost no tiles; a touched expert's rows
  are padded to whole tiles (``moe_tile_rows``). Measured on our H200: 2 calls per layer take
  47/194/379/410/408 us at batch 1/8/32/128/512 against 18/115/250/286/286 us of touched-expert
  bytes; the model gives 46/185/377/428/428.
* **the top-k combine.** Engines gather-reduce the ``k`` expert outputs of each token (TensorRT-LLM
  ``finalizeMoeRouting``) at HBM speed (in the elementwise bytes, ``2 k d`` per token); the PyTorch
  reference scatter-adds them with BF16 atomics (``index_add_``), ~15x slower than streaming the
  same bytes (``scatter_add_rate``, 137 G values/s measured).
* collectives: two tensor-parallel all-reduces per layer (Shoeybi et al. 2019, Megatron-LM), and
  for expert parallelism a dispatch and a combine all-to-all per MoE layer (DeepEP / Rajbhandari
  et al. 2022, DeepSpeed-MoE); across NVLink domains a token crosses the NIC once per distinct
  remote domain (:func:`_ep_all_to_all_s`). ``comm_overlap=True`` (two-batch overlap) hides them
  behind compute: the layer takes ``max(compute, comm)`` instead of the sum.

**Host overhead.** Each iteration also costs host (CPU) time, a fixed part plus Python work per
running sequence (:func:`host_time_s`, ``host_step_s`` and ``host_per_sequence_s`` in
``data/assumptions/inference.csv``). Engines overlap it with the GPU, so an iteration takes
``max(GPU, host)``: it binds only for small models at very large batch (e.g. Qwen3-30B-A3B at
~1,500 sequences on one B200).

**Validation notes.** Our own H200 measurements (dense decode and prefill, grouped GEMMs, whole MoE
decode steps at batch 1-512 that run 1.7-4.5x slower than their byte roofline) are within a few
per cent (MoE decode median 2%, max 9%; the grouped-GEMM constants come from a kernel profile of
the same run, so that group checks the decomposition, while the kernel floor was set on the dense
step only). Over all cases the median |error| is ~13.5%. **Known gaps**: MoE serving at max load
(TensorRT-LLM Qwen3-235B, DeepSeek-R1, SGLang large-EP decode) is still over-predicted by up to
~2x at short ISL/OSL (median 45% for Qwen3-235B and DeepSeek-R1, 20% for Qwen3-30B) and Blackwell
FP4 dense Llama-70B by 20-45%; the error shrinks as ISL or OSL grows. At max load the step is
compute- and attention-bound, where the kernel floor and the weight-stream efficiency matter
little. Not modelled and could explain the rest: attention-DP imbalance of whole-prompt prefill (no
chunked prefill in trtllm-bench), the compute efficiency of grouped GEMMs with ragged groups
(measured here only on the memory roof), sustained NVFP4 clocks under the power cap, and
trtllm-bench's own max-batch heuristic.

**Capacity.** Weights per GPU (dense weights split by tensor parallelism and replicated across
attention data-parallel ranks, experts split across the whole replica), the KV cache of every
sequence at its *full* length ``ISL + OSL`` (a request is admitted only if it can finish: TensorRT-
LLM's GUARANTEED_NO_EVICT, vLLM's block reservation) and a small activation workspace must fit in
``hbm x memory_usable_fraction``. KV bytes per token come from :func:`architecture.kv_cache_bytes_per_token`
(GQA: ``2 kv_heads head_dim layers``; MLA: ``(kv_lora_rank + rope) layers``); GQA shards its KV
heads across TP ranks (replicating when ``tp > kv_heads``), MLA's latent is replicated across TP
ranks, which is why MLA models serve with attention data parallelism.

**Outputs.** Per-user speed ``1 / t_iteration``; output tokens/s per GPU
``concurrency / (t_iteration x gpus)``; TTFT is the time of one iteration that carries a whole
prompt next to the decode batch (no queueing); $/Mtok = $/GPU-hour / 3600 / (tokens/s per GPU) x 1e6;
tokens/s per MW = tokens/s per GPU / (W per GPU) x 1e6.

Everything is vectorised over concurrency and parallelism (numpy), so :func:`frontier` evaluates
thousands of points in one pass. Assumptions that are not hardware facts (tile rows, kernels per
layer) live in ``data/assumptions/inference.csv``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from intelligence_per_dollar.model import architecture, collectives, economics, efficiency
from intelligence_per_dollar.sources import hardware, io

__all__ = ["PRECISIONS", "MODES", "IMPLEMENTATIONS", "PARALLELISM_KEYS", "Estimate", "estimate", "frontier", "evaluate",
           "candidates", "max_concurrency", "usd_per_mtok", "tokens_per_s_per_mw", "assumptions",
           "expected_experts_touched", "padded_rows_per_expert", "ep_load_imbalance", "host_time_s", "validation_table", "validation_summary",
           "runs"]

PRECISIONS = ("bf16", "fp8", "fp4")
#: ``aggregated``: prefill piggybacks on decode iterations (Eq. 1); ``decode``: a decode-only
#: instance (disaggregated serving); ``prefill``: a prefill-only instance, whose throughput is
#: input tokens/s.
MODES = ("aggregated", "decode", "prefill")
#: ``engine``: a fused serving engine (TensorRT-LLM, SGLang, vLLM): few non-GEMM kernels per layer,
#: gather-reduce top-k combine. ``pytorch``: the unfused PyTorch decode step this project measured on
#: its H200 (``tools/measure_gpu.py``: more kernels per layer, atomic ``index_add_`` combine).
IMPLEMENTATIONS = ("engine", "pytorch")
#: tp: attention tensor parallelism; dp: attention data-parallel ranks in one replica; ep: expert
#: parallelism (1 = experts tensor-split over the replica, ``tp*dp`` = one expert group per GPU).
PARALLELISM_KEYS = ("tp", "dp", "ep")
#: Activations move in BF16 between kernels; expert dispatch in the weights' precision when that
#: is FP8 (DeepEP dispatches FP8, combines BF16).
ACTIVATION_BYTES = 2.0
#: The LM head (output projection) stays in BF16 in FP8/FP4 checkpoints (ModelOpt, DeepSeek-V3).
HEAD_BYTES = 2.0
#: Embedding tables are stored in BF16.
EMBEDDING_BYTES = 2.0


# ---------------------------------------------------------------------------------------------
# assumptions (the only file read; cached)
# ---------------------------------------------------------------------------------------------

def assumptions() -> Mapping[str, economics.Assumption]:
    """``data/assumptions/inference.csv``: tile rows, kernels per layer and similar serving facts."""
    return economics.assumptions("inference.csv")


def _assumed(name: str, scenario: str) -> float:
    a = assumptions()[name]
    return {"low": a.low, "central": a.central, "high": a.high}[scenario]


# ---------------------------------------------------------------------------------------------
# closed-form pieces (documented once, reused)
# ---------------------------------------------------------------------------------------------

def expected_experts_touched(tokens, experts: int, top_k: int):
    """Expected distinct experts hit by ``tokens`` tokens routed top-``k`` of ``E`` uniformly.

    ``E (1 - (1 - k/E)^T)``: each expert is missed by one token with probability ``1 - k/E``.
    """
    if experts < 1 or not 1 <= top_k <= experts:
        raise ValueError(f"experts={experts!r} must be >= 1 and top_k={top_k!r} in [1, experts]")
    t = np.asarray(tokens, dtype=float)
    if np.any(t < 0):
        raise ValueError(f"tokens={tokens!r} must be >= 0")
    return experts * (1.0 - np.power(1.0 - top_k / experts, t))


def padded_rows_per_expert(tokens, experts: int, top_k: int, tile_rows: float):
    """Expected rows one expert's grouped-GEMM processes, its last tile padded.

    ``lambda = T k / E`` rows arrive on average; an expert with any rows runs at least one tile
    (``t phi``, ``phi`` the touched fraction); a busy one wastes half a tile on average
    (``lambda + t/2``), blended smoothly by ``(1 - exp(-2 lambda / t))``.
    """
    lam = np.asarray(tokens, dtype=float) * top_k / experts
    phi = expected_experts_touched(tokens, experts, top_k) / experts
    t = float(tile_rows)
    return np.maximum(t * phi, lam + 0.5 * t * (1.0 - np.exp(-2.0 * lam / t)))


def ep_load_imbalance(routed_rows, experts: int, ep, cv: float):
    """Expected busiest-rank load over the mean load of ``ep`` expert-parallel ranks.

    Two sources, added in variance: (i) expert popularity is not uniform: per-expert loads have a
    coefficient of variation ``cv`` across experts (``data/assumptions/inference.csv``
    ``expert_load_cv``; the reason DeepSeek's EPLB and SGLang's large-EP deployment replicate hot
    experts, lmsys.org/blog/2025-05-05-large-scale-ep). A rank holding ``E/ep`` experts sums their
    loads, so its cv is ``cv / sqrt(E/ep)`` (``cv sqrt(ep/E)``). (ii) sampling noise of a finite
    batch: ``R`` routed rows spread over ``ep`` ranks give a multinomial count of mean ``R/ep``
    and cv ``sqrt(ep/R)``. The expected maximum of ``ep`` near-Gaussian loads is
    ``mean (1 + cv_rank sqrt(2 ln ep))`` (extreme-value bound for Gaussians; e.g. Gumbel 1958),
    so

        imbalance = 1 + sqrt(2 ln ep) sqrt(cv^2 ep / E + ep / R).

    With one rank (ep = 1) there is nothing to wait for: 1.
    """
    ep = np.asarray(ep, dtype=float)
    r = np.maximum(np.asarray(routed_rows, dtype=float), 1.0)
    var = cv * cv * ep / float(experts) + ep / r
    return 1.0 + np.sqrt(2.0 * np.log(np.maximum(ep, 1.0)) * var)


def host_time_s(sequences_per_rank, step_s: float, per_sequence_s: float):
    """Host (CPU) time of one serving iteration on one attention rank.

    ``step_s + per_sequence_s x sequences``: a fixed part (scheduler loop, batch metadata,
    CUDA-graph launch) and Python per-request work (bookkeeping, input preparation, sampler output,
    stop checks) that grows with the running batch (vLLM v0.6 blog; SGLang v0.4 blog; constants in
    ``data/assumptions/inference.csv``). Serving engines overlap it with the GPU's previous
    iteration (TensorRT-LLM's overlap scheduler, SGLang's zero-overhead scheduler), so the
    iteration takes ``max(GPU, host)``: only small models at very large batch become host-bound.
    """
    return step_s + per_sequence_s * np.asarray(sequences_per_rank, dtype=float)


def usd_per_mtok(output_tokens_per_s_per_gpu, usd_per_gpu_hour):
    """Cost per million output tokens: ``$/GPU-h / 3600 / (tokens/s per GPU) x 1e6``."""
    tps = np.asarray(output_tokens_per_s_per_gpu, dtype=float)
    price = np.asarray(usd_per_gpu_hour, dtype=float)
    if np.any(~np.isfinite(price)) or np.any(price < 0):
        raise ValueError(f"usd_per_gpu_hour={usd_per_gpu_hour!r} must be a finite number >= 0")
    if np.any(~(tps > 0)):
        raise ValueError(f"output_tokens_per_s_per_gpu={output_tokens_per_s_per_gpu!r} must be > 0")
    return price / 3600.0 / tps * 1e6


def tokens_per_s_per_mw(output_tokens_per_s_per_gpu, power_w_per_gpu):
    """Output tokens per second per megawatt of (GPU or all-in) power."""
    p = np.asarray(power_w_per_gpu, dtype=float)
    if np.any(~(p > 0)) or np.any(~np.isfinite(p)):
        raise ValueError(f"power_w_per_gpu={power_w_per_gpu!r} must be a finite number > 0")
    return np.asarray(output_tokens_per_s_per_gpu, dtype=float) / p * 1e6


# ---------------------------------------------------------------------------------------------
# context: validated, static per (model, hardware, precision, lengths)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Ctx:
    s: architecture.ModelSpec
    acc: hardware.Accelerator
    ceil: efficiency.Ceilings
    precision: str           # weight storage precision
    run_precision: str       # tensor-core precision the GEMMs run at
    w_bytes: float
    kv_bytes_per_token: float
    peak: float
    bf16_peak: float
    scaleup: collectives.Link
    scaleout: collectives.Link
    domain: int
    isl: int
    osl: int
    mode: str
    tile_rows: float
    kernels_per_layer: float
    comm_overlap: bool
    implementation: str = "engine"
    kernel_floor_s: float = 0.0
    moe_kernels_per_layer: float = 0.0
    grouped_gemm_hbm_efficiency: float = 1.0
    grouped_gemm_launch_s: float = 0.0
    scatter_add_rate: float = 0.0      # values/s of an atomic top-k combine; 0: gather-reduce at HBM speed
    expert_skew_cv: float = 0.0
    host_step_s: float = 0.0
    host_per_sequence_s: float = 0.0
    params: Mapping[str, float] = field(default_factory=dict)


def _check_int(name, value, low=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    return int(value)


def _context(model, hw, precision, input_tokens, output_tokens, kv_precision, mode, scenario,
             comm_overlap=False, implementation="engine") -> _Ctx:
    s = architecture.spec(model)
    acc = hw if isinstance(hw, hardware.Accelerator) else hardware.get(hw)
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if kv_precision is None:
        kv_precision = "bf16" if precision == "bf16" else "fp8"
    if kv_precision not in PRECISIONS:
        raise ValueError(f"kv_precision={kv_precision!r} is not allowed; allowed: {', '.join(PRECISIONS)}")
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not allowed; allowed: {', '.join(MODES)}")
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation={implementation!r} is not allowed; allowed: {', '.join(IMPLEMENTATIONS)}")
    torch_ref = implementation == "pytorch"
    isl = _check_int("input_tokens", input_tokens)
    osl = _check_int("output_tokens", output_tokens)
    # 4-bit weights on GPUs without FP4 tensor cores are dequantised and multiplied in FP8
    run = precision if acc.supports(precision) else next(
        p for p in hardware.PRECISIONS[hardware.PRECISIONS.index(precision):] if acc.supports(p))
    ceil = efficiency.ceilings(acc, scenario)
    up_bw = acc.scaleup_bytes_per_s_one_way if acc.scaleup_bytes_per_s_bidirectional else acc.scaleout_bytes_per_s
    up = collectives.Link(up_bw, ceil.scaleup_efficiency, ceil.scaleup_latency_s)
    out = collectives.Link(acc.scaleout_bytes_per_s or up_bw / 18, ceil.scaleout_efficiency, ceil.scaleout_latency_s)
    p = architecture.params_per_layer(s)
    emb = architecture.embedding_params(s)
    L_moe = architecture.moe_layers(s)
    expert_total = L_moe * s.experts * p["expert"] if L_moe else 0.0
    dense_total = architecture.total_params(s) - emb - expert_total
    return _Ctx(s, acc, ceil, precision, run, hardware.BYTES_PER_ELEMENT[precision],
                architecture.kv_cache_bytes_per_token(s, hardware.BYTES_PER_ELEMENT[kv_precision]),
                hardware.dense_flop_per_s(acc, run), acc.bf16_dense_flop_per_s, up, out,
                int(acc.scaleup_domain_gpus), isl, osl, mode, _assumed("moe_tile_rows", scenario),
                _assumed("pytorch_kernels_per_layer" if torch_ref else "other_kernels_per_layer", scenario),
                bool(comm_overlap), implementation, _assumed("kernel_floor_s", scenario),
                _assumed("pytorch_moe_kernels_per_layer" if torch_ref else "moe_kernels_per_layer", scenario),
                _assumed("grouped_gemm_hbm_efficiency", scenario), _assumed("grouped_gemm_launch_s", scenario),
                _assumed("scatter_add_rate", scenario) if torch_ref else 0.0,
                _assumed("expert_load_cv", scenario), _assumed("host_step_s", scenario),
                _assumed("host_per_sequence_s", scenario),
                {"expert_total": expert_total, "dense_total": dense_total, "embedding": emb,
                 **{k: float(v) for k, v in p.items()}})


# ---------------------------------------------------------------------------------------------
# the vectorised evaluator
# ---------------------------------------------------------------------------------------------

def _gemm(ctx: _Ctx, m, n, k, groups=1, *, head=False):
    if head:
        return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.bf16_peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                      ceil=ctx.ceil, precision="bf16", operand_bytes=HEAD_BYTES,
                                      output_bytes=ACTIVATION_BYTES, groups=groups)
    return efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.peak, hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s,
                                  ceil=ctx.ceil, precision=ctx.run_precision, operand_bytes=ctx.w_bytes,
                                  output_bytes=ACTIVATION_BYTES, groups=groups)


def _grouped_gemm(ctx: _Ctx, m, n, k, groups):
    """One pointer-array grouped (MoE) GEMM launch: the dense roofline with the weight stream at
    ``grouped_gemm_hbm_efficiency`` of the dense-GEMM rate, plus a fixed ``grouped_gemm_launch_s``
    (setup kernel, scan of the group shapes, prologue, tail) instead of the dense ``kernel_overhead_s``."""
    t = efficiency.gemm_time_s(m, n, k, peak_flop_per_s=ctx.peak,
                               hbm_bytes_per_s=ctx.acc.hbm_bytes_per_s * ctx.grouped_gemm_hbm_efficiency,
                               ceil=ctx.ceil, precision=ctx.run_precision, operand_bytes=ctx.w_bytes,
                               output_bytes=ACTIVATION_BYTES, groups=groups)
    return t - ctx.ceil.kernel_overhead_s + ctx.grouped_gemm_launch_s


def _kv_shards(ctx: _Ctx, tp):
    """GPUs one sequence's KV cache is split over inside a TP group (MLA: replicated, 1)."""
    if architecture.is_mla(ctx.s):
        return np.ones_like(np.asarray(tp, float))
    return np.minimum(np.asarray(tp, float), ctx.s.kv_heads)


def _decode_attention_flops_per_token(ctx: _Ctx, context):
    """Decode attention FLOPs per new token over all layers at ``context`` cached tokens.

    GQA/MHA: ``2 ctx heads (d_qk + d_v)`` per layer. MLA with the up-projections absorbed into
    the query and output (DeepSeek-V2 section 2.1.3): scores over the ``c + r`` latent and the
    context over ``c``: ``2 ctx heads (2 c + r)``.
    """
    s = ctx.s
    if architecture.is_mla(s):
        per = 2.0 * s.heads * (2 * s.kv_lora_rank + architecture.rope_head_dim(s))
        return s.layers * per * np.asarray(context, float)
    return architecture.attention_flops_per_token(s, np.maximum(np.asarray(context, float), 1.0), causal=False)


def _ep_all_to_all_s(ctx: _Ctx, tokens_per_gpu, ep, bytes_per_value):
    """One expert-parallel all-to-all (dispatch or combine) of ``tokens_per_gpu`` tokens routed top-k.

    Inside the NVLink domain each token goes to the ranks holding its ``k`` experts; across domains
    it crosses the NIC once per *distinct remote domain* it hits and is forwarded over NVLink there
    (DeepEP's NVLink forwarding, DeepSeek-V3 arXiv 2412.19437 section 3.2.2). With ``n`` domains and
    uniform routing a token hits ``(n - 1)(1 - (1 - 1/n)^k)`` remote domains.
    """
    s = ctx.s
    ep = np.asarray(ep, float)
    k = s.top_k
    p_in = np.minimum(ep, ctx.domain)
    n_dom = np.maximum(ep / p_in, 1.0)
    vec = np.asarray(tokens_per_gpu, float) * s.d_model * bytes_per_value
    in_bytes = vec * k * (p_in - 1) / np.maximum(ep, 1.0) + vec * k * (n_dom - 1) / n_dom * (p_in - 1) / p_in
    remote = (n_dom - 1) * (1.0 - np.power(1.0 - 1.0 / n_dom, k))
    out_bytes = vec * remote
    t_in = np.where(p_in > 1, (p_in - 1) * ctx.scaleup.latency_s + in_bytes / ctx.scaleup.effective_bytes_per_s, 0.0)
    t_out = np.where(n_dom > 1, (n_dom - 1) * ctx.scaleout.latency_s + out_bytes / ctx.scaleout.effective_bytes_per_s, 0.0)
    return np.where(ep > 1, np.maximum(t_in, t_out), 0.0)


def evaluate(ctx: _Ctx, c: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Iteration time, throughput and memory of configurations ``c`` (broadcastable arrays
    ``tp``, ``dp``, ``ep``, ``replicas`` and ``concurrency`` = sequences in flight over all GPUs).

    Returns arrays: ``step_s`` and its parts, ``output_tokens_per_s_per_gpu``,
    ``tokens_per_s_per_user``, ``ttft_s``, ``memory_per_gpu_bytes``, ``fits``.
    """
    s, acc, ceil, P = ctx.s, ctx.acc, ctx.ceil, ctx.params
    tp, dp, ep, rep, conc = (np.asarray(c[k], float) for k in ("tp", "dp", "ep", "replicas", "concurrency"))
    r = tp * dp                                           # GPUs per replica
    b = conc / (rep * dp)                                 # sequences per attention rank
    d, gated = s.d_model, (3 if s.gated_ffn else 2)
    hbm = acc.hbm_bytes_per_s * ceil.hbm_fraction
    isl, osl = ctx.isl, ctx.osl
    if ctx.mode == "aggregated":
        dec, pre = b, b * isl / osl
        ctx_avg = isl + osl / 2.0
    elif ctx.mode == "decode":
        dec, pre = b, 0.0 * b
        ctx_avg = isl + osl / 2.0
    else:  # prefill: b prompts per iteration, one output token each
        dec, pre = 0.0 * b, b * isl
        ctx_avg = 0.0

    def layer_times(decode_tokens, prefill_tokens):
        T = decode_tokens + prefill_tokens                # tokens per attention rank
        # attention block: projections, core, elementwise
        t_proj = _gemm(ctx, T, P["attention"] / d / tp, d)
        kv_read = decode_tokens * ctx_avg * ctx.kv_bytes_per_token / s.layers / _kv_shards(ctx, tp)
        dec_flop = decode_tokens * _decode_attention_flops_per_token(ctx, ctx_avg) / s.layers / tp
        t_dec_attn = np.maximum(kv_read / hbm, dec_flop / (ctx.bf16_peak * ceil.attention_fraction()))
        pre_flop = prefill_tokens * architecture.attention_flops_per_token(s, isl, causal=True) / s.layers / tp
        t_pre_attn = efficiency.attention_time_s(pre_flop, isl, bf16_peak_flop_per_s=ctx.bf16_peak, ceil=ceil)
        kv_write = prefill_tokens * ctx.kv_bytes_per_token / s.layers / _kv_shards(ctx, tp) / hbm
        t_core = t_dec_attn + t_pre_attn + kv_write + ctx.kernel_floor_s
        t_tp = np.where(tp > 1, 2 * collectives.all_reduce_s(T * d * ACTIVATION_BYTES, tp, ctx.scaleup), 0.0)
        # dense FFN (used by dense layers and MoE shared experts)

        def ffn(hidden, tokens, split):
            return (_gemm(ctx, tokens, (gated - 1) * hidden / split, d) + _gemm(ctx, tokens, d, hidden / split))
        t_dense_ffn = ffn(s.d_ff, T, tp)
        ew_bytes_dense = T * ACTIVATION_BYTES * (10 * d + 3 * s.d_ff / tp)
        t_ew_dense = ew_bytes_dense / hbm + ctx.kernels_per_layer * ctx.kernel_floor_s
        dense_layer = t_proj + t_core + t_tp + t_dense_ffn + t_ew_dense
        if not architecture.is_moe(s):
            return dense_layer, dense_layer, {"gemm": t_proj + t_dense_ffn, "attention": t_core,
                                              "comm": t_tp, "other": t_ew_dense}
        # MoE FFN: tokens of the whole replica (all dp ranks) routed over experts
        E, k = s.experts, s.top_k
        T_rep = T * dp
        phi = expected_experts_touched(T_rep, E, k) / E
        rows = padded_rows_per_expert(T_rep, E, k, ctx.tile_rows)     # per expert, all tiles
        local = E / ep                                                # experts per EP rank
        split = r / ep                                                # GPUs one expert is split over
        straggle = ep_load_imbalance(T_rep * k, E, ep, ctx.expert_skew_cv)
        groups = np.maximum(local * phi, 1e-9)
        m_e = rows * local * straggle / groups
        f = s.expert_d_ff
        t_experts = (_grouped_gemm(ctx, m_e, (gated - 1) * f / split, d, groups)
                     + _grouped_gemm(ctx, m_e, d, f / split, groups))
        t_router = _gemm(ctx, T / tp, E, d, head=True)
        t_shared = ffn(s.shared_experts * f, T, tp) if s.shared_experts else 0.0 * T
        # dispatch (weights' precision if FP8, else BF16) + combine (BF16) all-to-all over the EP group
        disp_bytes = min(ctx.w_bytes, 1.0) if ctx.precision != "bf16" else ACTIVATION_BYTES
        a2a = (_ep_all_to_all_s(ctx, T / tp, ep, disp_bytes) + _ep_all_to_all_s(ctx, T / tp, ep, ACTIVATION_BYTES))
        # ep == 1 with attention DP: gather the replica's tokens, reduce-scatter the outputs
        ag = (collectives.hierarchical_reduce_scatter_s(T_rep * d * disp_bytes, dp, ctx.domain // np.maximum(tp, 1),
                                                        ctx.scaleup, ctx.scaleout)
              + collectives.hierarchical_reduce_scatter_s(T_rep * d * ACTIVATION_BYTES, dp,
                                                          ctx.domain // np.maximum(tp, 1), ctx.scaleup, ctx.scaleout))
        t_moe_comm = np.where(ep > 1, a2a, np.where(dp > 1, ag, 0.0))
        ew_bytes_moe = T * ACTIVATION_BYTES * (10 * d + 2 * k * d)
        # the top-k combine: an atomic scatter-add (PyTorch index_add_) runs at its atomic rate
        t_combine = T * k * d / ctx.scatter_add_rate if ctx.scatter_add_rate else 0.0 * T
        t_ew_moe = (ew_bytes_moe / hbm + t_combine
                    + (ctx.kernels_per_layer + ctx.moe_kernels_per_layer) * ctx.kernel_floor_s)
        t_compute = t_proj + t_core + t_experts + t_router + t_shared + t_ew_moe
        # two-batch overlap (SGLang/DeepEP) hides the collectives behind the other micro-batch's compute
        moe_layer = np.maximum(t_compute, t_tp + t_moe_comm) if ctx.comm_overlap else t_compute + t_tp + t_moe_comm
        parts = {"gemm": t_proj + t_experts + t_router + t_shared, "attention": t_core,
                 "comm": t_tp + t_moe_comm, "other": t_ew_moe}
        return dense_layer, moe_layer, parts

    L_moe = architecture.moe_layers(s)
    L_dense = s.layers - L_moe

    def step(decode_tokens, prefill_tokens):
        t_dense, t_moe, parts = layer_times(decode_tokens, prefill_tokens)
        head_tokens = decode_tokens + (b if ctx.mode == "prefill" else 0.0 * b)
        t_head = _gemm(ctx, np.maximum(head_tokens, 1.0), s.vocab / tp, d, head=True)
        total = L_dense * t_dense + L_moe * t_moe + t_head
        return total, parts, t_head

    t_gpu, parts, t_head = step(dec, pre)
    # TTFT: one iteration that carries a whole prompt next to the decode batch
    t_ttft_gpu, _, _ = step(dec, np.maximum(pre, isl) if ctx.mode != "prefill" else pre)
    # host work per iteration, overlapped with the GPU's previous iteration: the slower one paces
    t_host = host_time_s(b, ctx.host_step_s, ctx.host_per_sequence_s)
    t_step = np.maximum(t_gpu, t_host)
    t_ttft = np.maximum(t_ttft_gpu, t_host)

    # ---- memory per GPU -------------------------------------------------------------------------
    w = (P["dense_total"] / tp + P["expert_total"] / r) * ctx.w_bytes + P["embedding"] / tp * EMBEDDING_BYTES
    seq_len = isl + (osl if ctx.mode != "prefill" else 1)
    kv = b * seq_len * ctx.kv_bytes_per_token / _kv_shards(ctx, tp)
    # workspace (affine in b so that capacity solves in closed form): activations of the largest
    # iteration (decode batch + its prefill share + one whole prompt) and FP32 logits
    T_max = dec + pre + (isl if ctx.mode != "prefill" else 0.0)
    work = T_max * (8 * d + 3 * max(s.d_ff, s.expert_d_ff * max(s.top_k, 1)) / tp) * ACTIVATION_BYTES \
        + (dec + 1.0) * s.vocab / tp * 4.0
    mem = w + kv + work
    usable = acc.hbm_bytes * ceil.memory_usable_fraction
    tokens_per_step = dec if ctx.mode != "prefill" else b              # per attention rank (prefill: one per prompt)
    tps_gpu = tokens_per_step * dp / (t_step * r)
    per_user = np.where(ctx.mode == "prefill", isl / t_step, 1.0 / t_step)
    L = float(s.layers)
    out = {"step_s": t_step, "ttft_s": t_ttft, "gpu_step_s": t_gpu + 0 * t_step, "host_s": t_host + 0 * t_step, "output_tokens_per_s_per_gpu": tps_gpu,
           "tokens_per_s_per_user": per_user, "memory_per_gpu_bytes": mem, "weights_bytes": w + 0 * mem,
           "kv_cache_bytes": kv + 0 * mem, "workspace_bytes": work + 0 * mem, "usable_bytes": usable,
           "fits": mem <= usable, "sequences_per_rank": b,
           "gemm_s": L_moe * parts["gemm"] + L_dense * 0 + t_head,
           "attention_s": L * parts["attention"], "comm_s": L * parts["comm"], "other_s": L * parts["other"]}
    if L_dense and architecture.is_moe(s):
        # dense leading layers: attribute their whole time to gemm (it is dominated by the FFN)
        t_dense, _, _ = layer_times(dec, pre)
        out["gemm_s"] = out["gemm_s"] + L_dense * t_dense - L_dense * (parts["attention"] + parts["comm"] + parts["other"])
    elif not architecture.is_moe(s):
        out["gemm_s"] = L * parts["gemm"] + t_head
    return out


# ---------------------------------------------------------------------------------------------
# candidates, capacity, API
# ---------------------------------------------------------------------------------------------

def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def candidates(ctx: _Ctx, gpus: int, fixed: Mapping | None = None) -> dict[str, np.ndarray]:
    """Valid (tp, dp, ep, replicas) for ``gpus`` GPUs: tp within the NVLink domain dividing the heads,
    dp attention ranks per replica, ep = 1 or the whole replica for MoE models (1 for dense)."""
    s = ctx.s
    fixed = dict(fixed or {})
    out = {k: [] for k in ("tp", "dp", "ep", "replicas")}
    for r in _divisors(gpus):
        for tp in _divisors(r):
            if tp > ctx.domain or s.heads % tp:
                continue
            dp = r // tp
            eps = [1, r] if architecture.is_moe(s) and r > 1 else [1]
            for ep in sorted(set(eps)):
                cand = {"tp": tp, "dp": dp, "ep": ep, "replicas": gpus // r}
                if any(k in fixed and fixed[k] != cand[k] for k in PARALLELISM_KEYS):
                    continue
                for k2, v in cand.items():
                    out[k2].append(v)
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def _check_parallelism(ctx: _Ctx, gpus: int, par: Mapping) -> dict:
    unknown = sorted(set(par) - set(PARALLELISM_KEYS))
    if unknown:
        raise ValueError(f"parallelism has unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(PARALLELISM_KEYS)}")
    fixed = {k: _check_int(f"parallelism[{k!r}]", v) for k, v in par.items()}
    s = ctx.s
    if "tp" in fixed:
        if s.heads % fixed["tp"]:
            raise ValueError(f"parallelism['tp']={fixed['tp']} does not divide the model's heads={s.heads}")
        if fixed["tp"] > ctx.domain:
            raise ValueError(f"parallelism['tp']={fixed['tp']} exceeds the NVLink domain of {ctx.acc.id} "
                             f"({ctx.domain} GPUs)")
    r = fixed.get("tp", 1) * fixed.get("dp", 1)
    if gpus % r:
        raise ValueError(f"tp x dp = {r} does not divide gpus={gpus}")
    if "ep" in fixed and fixed["ep"] != 1:
        if not architecture.is_moe(s):
            raise ValueError(f"parallelism['ep']={fixed['ep']} needs a mixture-of-experts model (experts=0)")
        if "tp" in fixed and "dp" in fixed and fixed["ep"] != r:
            raise ValueError(f"parallelism['ep']={fixed['ep']} must be 1 or tp x dp = {r} (one expert group per GPU)")
    return fixed


def max_concurrency(ctx: _Ctx, c: Mapping[str, np.ndarray]) -> np.ndarray:
    """Largest concurrency (sequences over all GPUs) whose weights, KV cache and workspace fit.

    Memory is affine in the sequences per rank ``b``; evaluated at b = 0 and b = 1.
    """
    base = {k: np.asarray(v, float) for k, v in c.items()}
    ranks = base["replicas"] * base["dp"]
    m0 = evaluate(ctx, {**base, "concurrency": 0.0 * ranks})
    m1 = evaluate(ctx, {**base, "concurrency": ranks})
    slope = m1["memory_per_gpu_bytes"] - m0["memory_per_gpu_bytes"]
    b = np.floor((m0["usable_bytes"] - m0["memory_per_gpu_bytes"]) / slope)
    return np.maximum(b, 0.0) * ranks


@dataclass(frozen=True)
class Estimate:
    """One serving configuration at one concurrency (SI units)."""

    output_tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    ttft_s: float
    step_time_s: float
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: Mapping[str, float]
    time_breakdown_s: Mapping[str, float]
    parallelism: Mapping[str, int]
    concurrency: float
    max_concurrency: float
    gpus: int
    hardware: str
    precision: str
    input_tokens: int
    output_tokens: int
    mode: str
    power_w_per_gpu: float

    @property
    def input_tokens_per_s_per_gpu(self) -> float:
        """Prompt tokens processed per second per GPU (equal to output x ISL/OSL when aggregated)."""
        if self.mode == "prefill":
            return self.output_tokens_per_s_per_gpu * self.input_tokens
        return self.output_tokens_per_s_per_gpu * self.input_tokens / self.output_tokens

    def usd_per_mtok(self, usd_per_gpu_hour: float) -> float:
        """$ per million output tokens at ``usd_per_gpu_hour`` (prefill mode: per million input tokens)."""
        tps = self.input_tokens_per_s_per_gpu if self.mode == "prefill" else self.output_tokens_per_s_per_gpu
        return float(usd_per_mtok(tps, usd_per_gpu_hour))

    def tokens_per_s_per_mw(self, power_w_per_gpu: float | None = None) -> float:
        """Output tokens/s per MW; ``power_w_per_gpu`` defaults to the GPU's TDP (pass all-in power)."""
        return float(tokens_per_s_per_mw(self.output_tokens_per_s_per_gpu, power_w_per_gpu or self.power_w_per_gpu))


def _setup(model, hardware_, gpus, precision, input_tokens, output_tokens, parallelism, kv_precision, mode, scenario,
           comm_overlap=False, implementation="engine"):
    gpus = _check_int("gpus", gpus)
    if scenario not in efficiency.SCENARIOS:
        raise ValueError(f"scenario={scenario!r} is not allowed; allowed: {', '.join(efficiency.SCENARIOS)}")
    if not isinstance(comm_overlap, bool):
        raise ValueError(f"comm_overlap={comm_overlap!r} must be True or False")
    ctx = _context(model, hardware_, precision, input_tokens, output_tokens, kv_precision, mode, scenario, comm_overlap,
                   implementation)
    if parallelism is not None and not isinstance(parallelism, Mapping):
        raise ValueError(f"parallelism={parallelism!r} must be None or a dict of {', '.join(PARALLELISM_KEYS)}")
    fixed = _check_parallelism(ctx, gpus, parallelism or {})
    c = candidates(ctx, gpus, fixed)
    if len(c["tp"]) == 0:
        raise ValueError(f"no valid parallelism for gpus={gpus} with {fixed}: tp must divide heads={ctx.s.heads} "
                         f"and fit in the NVLink domain ({ctx.domain}), tp x dp must divide gpus")
    return gpus, ctx, c


def _no_fit_message(ctx, gpus, c):
    mc = max_concurrency(ctx, c)
    m0 = evaluate(ctx, {**c, "concurrency": 0.0 * c["tp"]})
    j = int(np.argmin(m0["memory_per_gpu_bytes"]))
    if mc.max() < 1:
        return (f"the weights do not fit: the smallest configuration needs {m0['weights_bytes'][j] / 1e9:.1f} GB of "
                f"weights per GPU before any KV cache, but {ctx.acc.id} has {ctx.acc.hbm_bytes / 1e9:.0f} GB of HBM "
                f"({m0['usable_bytes'] / 1e9:.0f} GB usable) on {gpus} GPUs")
    return (f"the KV cache does not fit: at most {int(mc.max())} sequences of {ctx.isl}+{ctx.osl} tokens fit on "
            f"{gpus} {ctx.acc.id} GPUs ({ctx.kv_bytes_per_token / 1e3:.1f} kB of KV cache per token)")


def estimate(model, hardware: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
             output_tokens: int = 1000, concurrency: float | None = None, parallelism: Mapping | None = None, *,
             kv_precision: str | None = None, mode: str = "aggregated", scenario: str = "central",
             comm_overlap: bool = False, implementation: str = "engine") -> Estimate:
    """Throughput, interactivity, TTFT and memory of serving ``model`` on ``gpus`` GPUs.

    ``concurrency``: sequences in flight over all ``gpus`` (None: the most that fit, i.e. a
    max-throughput offline benchmark). ``parallelism``: None to choose the fastest valid
    (tp, dp, ep), or a dict fixing some of them. ``kv_precision`` defaults to BF16 for BF16
    weights and FP8 otherwise. Raises ``ValueError`` naming the constraint: unknown precision,
    impossible parallelism, weights or KV cache that do not fit.
    """
    gpus, ctx, c = _setup(model, hardware, gpus, precision, input_tokens, output_tokens, parallelism,
                          kv_precision, mode, scenario, comm_overlap, implementation)
    mc = max_concurrency(ctx, c)
    if concurrency is None:
        conc = mc
        if mc.max() < 1:
            raise ValueError(_no_fit_message(ctx, gpus, c))
    else:
        if isinstance(concurrency, bool) or not isinstance(concurrency, (int, float, np.integer, np.floating)) \
                or not math.isfinite(concurrency) or concurrency < 1:
            raise ValueError(f"concurrency={concurrency!r} must be a number >= 1 (sequences in flight)")
        conc = np.full_like(c["tp"], float(concurrency))
    r = evaluate(ctx, {**c, "concurrency": conc})
    ok = r["fits"] & (conc >= c["replicas"] * c["dp"] * (1.0 if concurrency is None else 0.0)) & (mc >= 1)
    if not ok.any():
        raise ValueError(_no_fit_message(ctx, gpus, c) + (f"; concurrency={concurrency} asked for more"
                                                          if concurrency is not None else ""))
    score = np.where(ok, r["output_tokens_per_s_per_gpu"], -np.inf)
    i = int(np.argmax(score))
    pick = {k: float(np.broadcast_to(v, c["tp"].shape)[i]) for k, v in r.items() if np.ndim(v) or True}
    par = {k: int(c[k][i]) for k in ("tp", "dp", "ep")}
    par["replicas"] = int(c["replicas"][i])
    return Estimate(
        output_tokens_per_s_per_gpu=pick["output_tokens_per_s_per_gpu"],
        tokens_per_s_per_user=pick["tokens_per_s_per_user"], ttft_s=pick["ttft_s"], step_time_s=pick["step_s"],
        memory_per_gpu_bytes=pick["memory_per_gpu_bytes"],
        memory_breakdown_bytes={k: pick[k + "_bytes"] for k in ("weights", "kv_cache", "workspace")},
        time_breakdown_s={k: pick[k + "_s"] for k in ("gemm", "attention", "comm", "other")},
        parallelism=par, concurrency=float(np.broadcast_to(conc, c["tp"].shape)[i]), max_concurrency=float(mc[i]),
        gpus=gpus, hardware=ctx.acc.id, precision=precision, input_tokens=ctx.isl, output_tokens=ctx.osl,
        mode=mode, power_w_per_gpu=ctx.acc.power_w)


FRONTIER_COLUMNS = ("concurrency", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_s",
                    "memory_per_gpu_bytes", "step_time_s", "fits", "tp", "dp", "ep", "replicas")


def frontier(model, hardware: str, gpus: int, precision: str = "fp8", input_tokens: int = 1000,
             output_tokens: int = 1000, concurrency=None, parallelism: Mapping | None = None, *,
             kv_precision: str | None = None, mode: str = "aggregated", scenario: str = "central",
             comm_overlap: bool = False, points: int = 64, implementation: str = "engine"):
    """The throughput-interactivity frontier: one row per concurrency.

    ``concurrency``: an array of concurrencies (None: ``points`` log-spaced values from one sequence
    per attention rank up to the most that fit). For each concurrency the fastest valid parallelism
    is chosen (or ``parallelism`` fixes it). Columns: :data:`FRONTIER_COLUMNS`; rows that do not fit
    keep ``fits=False`` and NaN metrics.
    """
    import pandas as pd

    gpus, ctx, c = _setup(model, hardware, gpus, precision, input_tokens, output_tokens, parallelism,
                          kv_precision, mode, scenario, comm_overlap, implementation)
    mc = max_concurrency(ctx, c)
    if mc.max() < 1:
        raise ValueError(_no_fit_message(ctx, gpus, c))
    if concurrency is None:
        _check_int("points", points, 2)
        lo = float((c["replicas"] * c["dp"]).min())
        conc = np.unique(np.round(np.geomspace(lo, max(lo, mc.max()), points)))
    else:
        conc = np.atleast_1d(np.asarray(concurrency, dtype=float))
        if conc.ndim != 1 or np.any(~np.isfinite(conc)) or np.any(conc < 1):
            raise ValueError(f"concurrency={concurrency!r} must be a 1-D array of numbers >= 1")
    n, m = len(c["tp"]), len(conc)
    grid = {k: np.repeat(v[:, None], m, axis=1) for k, v in c.items()}
    grid["concurrency"] = np.broadcast_to(conc[None, :], (n, m))
    r = evaluate(ctx, grid)
    ok = r["fits"] & (grid["concurrency"] >= grid["replicas"] * grid["dp"])
    score = np.where(ok, r["output_tokens_per_s_per_gpu"], -np.inf)
    best = np.argmax(score, axis=0)
    cols = np.arange(m)
    fits = ok[best, cols]

    def pick(a):
        v = np.broadcast_to(a, (n, m))[best, cols].astype(float)
        return np.where(fits, v, np.nan)
    df = pd.DataFrame({
        "concurrency": conc, "output_tokens_per_s_per_gpu": pick(r["output_tokens_per_s_per_gpu"]),
        "tokens_per_s_per_user": pick(r["tokens_per_s_per_user"]), "ttft_s": pick(r["ttft_s"]),
        "memory_per_gpu_bytes": pick(r["memory_per_gpu_bytes"]), "step_time_s": pick(r["step_s"]),
        "fits": fits,
        **{k: np.where(fits, grid[k][best, cols], np.nan) for k in ("tp", "dp", "ep", "replicas")},
    })
    return df


# ---------------------------------------------------------------------------------------------
# validation against measured serving results (data/runs/inference_runs.csv)
# ---------------------------------------------------------------------------------------------

_MODEL_INT = ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab", "experts", "top_k", "expert_d_ff",
              "shared_experts", "dense_layers", "head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim")
_RUN_COLUMNS = ("id", "group", "citation", "source_url", "date_read", "kind", "model_name", *_MODEL_INT, "gated_ffn",
                "hardware", "gpus", "precision", "kv_precision", "mode", "input_tokens", "output_tokens", "tp", "dp",
                "ep", "concurrency", "comm_overlap", "implementation", "measured", "unit", "note")
UNITS = ("output_tokens_per_s_per_gpu", "input_tokens_per_s_per_gpu", "gemm_s")


@functools.lru_cache(maxsize=2)
def _runs(data_dir: str) -> tuple[dict, ...]:
    path = io.data_path("runs", "inference_runs.csv")
    out = []
    for row, rec in io.read_rows(path, _RUN_COLUMNS):
        prov = io.check_provenance(path, row, rec)
        if prov.kind != "measured":
            raise io.DataError(f"{path}, row {row}, column 'kind': validation cases must be 'measured'")
        if rec["unit"] not in UNITS:
            raise io.DataError(f"{path}, row {row}, column 'unit': '{rec['unit']}' not in {', '.join(UNITS)}")
        model = {k: int(io.parse_float(path, row, k, rec[k] or "0", positive=True)) for k in _MODEL_INT}
        model["gated_ffn"] = io.parse_bool(path, row, "gated_ffn", rec["gated_ffn"])
        par = {k: int(io.parse_float(path, row, k, rec[k], positive=True)) for k in ("tp", "dp", "ep") if rec[k]}
        out.append({"id": rec["id"], "group": rec["group"], "citation": rec["citation"], "provenance": prov,
                    "model_name": rec["model_name"], "model": model, "hardware": rec["hardware"],
                    "gpus": int(io.parse_float(path, row, "gpus", rec["gpus"], positive=True)),
                    "precision": rec["precision"], "kv_precision": rec["kv_precision"] or None,
                    "mode": rec["mode"] or "aggregated",
                    "input_tokens": int(io.parse_float(path, row, "input_tokens", rec["input_tokens"], positive=True)),
                    "output_tokens": int(io.parse_float(path, row, "output_tokens", rec["output_tokens"], positive=True)),
                    "parallelism": par,
                    "concurrency": io.parse_float(path, row, "concurrency", rec["concurrency"], positive=True)
                    if rec["concurrency"] else None,
                    "comm_overlap": io.parse_bool(path, row, "comm_overlap", rec["comm_overlap"] or "false"),
                    "implementation": rec["implementation"] or "engine",
                    "measured": io.parse_float(path, row, "measured", rec["measured"], positive=True),
                    "unit": rec["unit"], "note": rec["note"]})
    return tuple(out)


def runs() -> tuple[dict, ...]:
    """The measured inference cases, validated and typed."""
    return _runs(str(io.data_dir()))


def _predict_gemm(case: dict, scenario: str) -> float:
    """A single measured (grouped) GEMM through the same curve as the serving model.

    m = ``concurrency`` rows (tokens per expert for a grouped GEMM), n = ``d_ff``, k = ``d_model``,
    ``experts`` > 0: that many equal GEMMs in one batched kernel (``torch.bmm``), each reading its
    own weights, so few tokens per expert fall on the memory roof (the weight re-read per expert).
    These are eager PyTorch timings of back-to-back calls: a kernel shorter than the host's
    dispatch time (``eager_dispatch_s`` in ``data/assumptions/inference.csv``) is timed at the
    dispatch rate, so the prediction is ``max(kernel, dispatch)``. CUDA-graph serving does not pay
    it, and :func:`evaluate` never adds it.
    """
    acc = hardware.get(case["hardware"])
    ceil = efficiency.ceilings(acc, scenario)
    m, n, k = case["concurrency"], case["model"]["d_ff"], case["model"]["d_model"]
    groups = max(case["model"]["experts"], 1)
    p = case["precision"]
    t = float(efficiency.gemm_time_s(m, n, k, peak_flop_per_s=hardware.dense_flop_per_s(acc, p),
                                     hbm_bytes_per_s=acc.hbm_bytes_per_s, ceil=ceil, precision=p,
                                     operand_bytes=hardware.BYTES_PER_ELEMENT[p], output_bytes=2.0, groups=groups))
    return max(t, _assumed("eager_dispatch_s", scenario))


def predict(case: dict, scenario: str = "central") -> tuple[float, Estimate | None]:
    """The model's prediction for one case, in the case's unit."""
    if case["unit"] == "gemm_s":
        return _predict_gemm(case, scenario), None
    e = estimate(case["model"], case["hardware"], case["gpus"], case["precision"], case["input_tokens"],
                 case["output_tokens"], case["concurrency"], case["parallelism"] or None,
                 kv_precision=case["kv_precision"], mode=case["mode"], scenario=scenario,
                 comm_overlap=case["comm_overlap"], implementation=case["implementation"])
    if case["unit"] == "input_tokens_per_s_per_gpu":
        return e.input_tokens_per_s_per_gpu, e
    return e.output_tokens_per_s_per_gpu, e


def validation_table(scenario: str = "central"):
    """case, group, citation, unit, measured, predicted, error (signed fraction), parallelism, concurrency."""
    import pandas as pd

    recs = []
    for case in runs():
        pred, e = predict(case, scenario)
        recs.append({"case": case["id"], "group": case["group"], "model": case["model_name"],
                     "hardware": case["hardware"], "citation": case["citation"], "unit": case["unit"],
                     "measured": case["measured"], "predicted": pred, "error": pred / case["measured"] - 1.0,
                     "parallelism": dict(e.parallelism) if e else {},
                     "concurrency": e.concurrency if e else case["concurrency"]})
    return pd.DataFrame.from_records(recs)


def validation_summary(table=None):
    """count, mean, median and max |error| per group and over all cases."""
    t = validation_table() if table is None else table
    a = t.assign(abs_error=t["error"].abs())
    g = a.groupby("group")["abs_error"].agg(["count", "mean", "median", "max"])
    g.loc["all"] = [len(a), a["abs_error"].mean(), a["abs_error"].median(), a["abs_error"].max()]
    return g
