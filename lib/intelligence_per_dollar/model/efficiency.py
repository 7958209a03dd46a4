"""Efficiency *curves* (not constants): the time a kernel takes on an accelerator.

Three kinds of kernel cover a transformer step:

* **GEMM** ``(m, k) x (k, n)``: a roofline (Williams, Waterman & Patterson 2009) with a per-kernel
  overhead,

      t = max(2 m n k / (peak x f_gemm),  bytes / (hbm_bytes_per_s x f_stream)) + t_kernel

  where ``f_gemm`` is the *sustained* fraction of the dense peak that large GEMMs reach
  (burst MAMF fraction x power-throttle factor: a GPU at its power cap lowers its clocks),
  ``f_stream`` the fraction of the HBM bandwidth a GEMM kernel streams its operands at (the copy
  rate ``f_hbm`` on the H200 family, where it was calibrated; lower on Blackwell, whose published
  skinny FP8/FP4 GEMMs stream well below copy speed) and ``t_kernel`` the fixed launch/ramp/tail time. The efficiency ``2mnk / (t x peak)`` therefore
  rises with size and saturates at ``f_gemm``; skinny shapes fall on the memory roof.
  Grouped (MoE) GEMM kernels overlap the weight stream with the MMAs less well near the ridge
  point: their compute and memory times combine as a ``p``-norm, ``(t_c^p + t_m^p)^(1/p)``, instead
  of the max (``grouped_gemm_overlap_norm``, p = 2, fitted to DeepGEMM's published H800 grouped
  GEMM table, ``data/efficiency/grouped_gemm_h800.csv``: median 6%, max 11% against 10%, max 34%
  for the max). Dense block-scaled FP4 GEMMs on Blackwell do the same, with a longer fixed time per kernel
  (``dense_fp4_overlap_norm``, ``dense_fp4_kernel_s``; :func:`dense_gemm_terms`), fitted to published B200
  kernels (``data/efficiency/dense_fp4_gemm_b200.csv``: median time error 12% against 37% short for the max with
  Hopper's 2 us).
* **Flash attention**: rate ``peak x f_attn x s / (s + s_half)`` (saturating in sequence length) at the
  calibrated head dimension (128), times :func:`attention_head_dim_factor` for other head dimensions and for
  Blackwell Ultra's doubled softmax (SFU) throughput.
* **Memory-bound** elementwise work (norms, activations, optimizer): ``bytes / (bw x f_hbm)``.

Calibration: H200-family ceilings are fitted to ``data/measurements/h200-2026-11-29`` (GEMM,
attention, HBM and the sustained-power run). Other accelerators transfer through the rows of
``data/efficiency/ceilings.csv`` (published MAMF measurements where they exist, stated
assumptions with low/central/high where they don't). All functions take numpy arrays.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from intelligence_per_dollar.model import peaks
from intelligence_per_dollar.sources import ceilings as ceiling_data
from intelligence_per_dollar.sources import checks, hardware, io, measurements

SCENARIOS = ("low", "central", "high")
QUANTITIES = ("gemm_burst_fraction_bf16", "power_throttle", "precision_ratio_fp8", "precision_ratio_fp4",
              "kernel_overhead_s", "hbm_fraction", "attention_fraction_bf16", "attention_seq_half",
              "scaleup_efficiency", "scaleup_latency_s", "scaleout_efficiency", "scaleout_latency_s",
              "elementwise_traffic_fwd", "elementwise_traffic_bwd", "memory_usable_fraction",
              "gemm_stream_fraction", "decode_attention_hbm_fraction", "grouped_gemm_overlap_norm",
              "grouped_fp4_speedup", "overlap_compute_slowdown", "grouped_gemm_hbm_efficiency",
              "attention_softmax_share", "attention_sfu_speedup", "attention_forward_speedup",
              "dense_fp4_speedup", "dense_fp4_overlap_norm", "dense_fp4_kernel_s", "grouped_fp8_compute_fraction",
              "torch_grouped_mm_fraction")
#: Ceilings that default to another quantity of the same accelerator when no row gives them: GEMM weight
#: streaming and paged decode attention run at the copy rate unless measured otherwise.
FALLBACKS = {"gemm_stream_fraction": "hbm_fraction", "decode_attention_hbm_fraction": "hbm_fraction"}


@dataclass(frozen=True)
class Ceilings:
    """Calibrated ceilings of one accelerator under one scenario (all fractions of datasheet)."""

    accelerator: str
    scenario: str
    gemm_burst_fraction_bf16: float
    power_throttle: float
    precision_ratio_fp8: float
    precision_ratio_fp4: float
    kernel_overhead_s: float
    hbm_fraction: float
    attention_fraction_bf16: float
    attention_seq_half: float
    scaleup_efficiency: float
    scaleup_latency_s: float
    scaleout_efficiency: float
    scaleout_latency_s: float
    elementwise_traffic_fwd: float
    elementwise_traffic_bwd: float
    memory_usable_fraction: float
    gemm_stream_fraction: float
    decode_attention_hbm_fraction: float
    grouped_gemm_overlap_norm: float
    grouped_fp4_speedup: float
    overlap_compute_slowdown: float
    grouped_gemm_hbm_efficiency: float
    attention_softmax_share: float
    attention_sfu_speedup: float
    attention_forward_speedup: float
    dense_fp4_speedup: float
    dense_fp4_overlap_norm: float
    dense_fp4_kernel_s: float
    grouped_fp8_compute_fraction: float
    torch_grouped_mm_fraction: float

    def gemm_fraction(self, precision: str) -> float:
        """Sustained large-GEMM fraction of the dense peak of ``precision``."""
        base = self.gemm_burst_fraction_bf16 * self.power_throttle
        if precision == "bf16":
            return base
        if precision == "fp8":
            return base * self.precision_ratio_fp8
        if precision == "fp4":
            return base * self.precision_ratio_fp4
        raise ValueError(f"precision={precision!r} has no GEMM ceiling; allowed: bf16, fp8, fp4")

    def attention_fraction(self) -> float:
        """Sustained long-sequence flash-attention fraction of the BF16 dense peak."""
        return self.attention_fraction_bf16 * self.power_throttle


# ---------------------------------------------------------------------------------------------
# Calibration (the rows come from sources.ceilings; cached)
# ---------------------------------------------------------------------------------------------

def _fit_attention(df) -> tuple[float, float]:
    """Least-squares fit of rate = e_max * s / (s + s_half) to measured fwd+bwd attention rates."""
    s = df["seq"].to_numpy(float)
    r = df["fwdbwd_flop_per_s"].to_numpy(float)
    best = None
    for s_half in np.linspace(10, 5000, 500):
        x = s / (s + s_half)
        e = float((x * r).sum() / (x * x).sum())
        err = float(((e * x - r) ** 2).sum())
        if best is None or err < best[0]:
            best = (err, e, s_half)
    return best[1], best[2]


@functools.lru_cache(maxsize=4)
def calibration(run: str = measurements.DEFAULT_RUN) -> dict[str, float]:
    """Ceilings fitted to a measured run (fractions of that accelerator's datasheet peaks)."""
    acc = hardware.get(measurements.accelerator_of(run))
    g = measurements.gemm(run)
    best = {p: float(g.loc[g["precision"] == p, "flop_per_s"].max()) for p in ("bf16", "fp8")}
    burst = best["bf16"] / acc.bf16_dense_flop_per_s
    sustained = measurements.power_summary(run)["sustained_bf16_flop_per_s"]
    fp8_frac = best["fp8"] / peaks.dense_flop_per_s(acc, "fp8")
    e_attn, s_half = _fit_attention(measurements.attention(run))
    hbm = float(measurements.hbm(run)["bytes_per_s"].max()) / acc.hbm_bytes_per_s
    return {"gemm_burst_fraction_bf16": burst, "power_throttle": min(1.0, sustained / best["bf16"]),
            "precision_ratio_fp8": fp8_frac / burst, "attention_fraction_bf16": e_attn / acc.bf16_dense_flop_per_s,
            "attention_seq_half": s_half, "hbm_fraction": hbm}


@functools.lru_cache(maxsize=64)
def _ceilings(acc_id: str, scenario: str, data_dir: str) -> Ceilings:
    rows = ceiling_data.rows(QUANTITIES)
    vals: dict[str, float] = {}
    for who in ("*", acc_id):  # the accelerator's own rows override the defaults
        for r in rows:
            if r["accelerator"] != who:
                continue
            v = r[scenario]
            if r["calibration_run"] and scenario == "central":
                v = calibration(r["calibration_run"]).get(r["quantity"], v)
            vals[r["quantity"]] = v
    for q, other in FALLBACKS.items():
        if q not in vals and other in vals:
            vals[q] = vals[other]
    missing = [q for q in QUANTITIES if q not in vals]
    if missing:
        raise io.DataError(f"data/efficiency/ceilings.csv: no value for {', '.join(missing)} "
                           f"(accelerator {acc_id!r}, nor a '*' default)")
    return Ceilings(accelerator=acc_id, scenario=scenario, **vals)


def ceilings(accelerator: str | hardware.Accelerator, scenario: str = "central") -> Ceilings:
    """The calibrated ceilings of an accelerator (id or record) under ``scenario``."""
    checks.choice("scenario", scenario, SCENARIOS)
    acc_id = accelerator.id if isinstance(accelerator, hardware.Accelerator) else hardware.get(accelerator).id
    return _ceilings(acc_id, scenario, str(io.data_dir()))


# ---------------------------------------------------------------------------------------------
# Curves (pure, vectorised)
# ---------------------------------------------------------------------------------------------

#: Fewest rows of the GEMM tiles a kernel library picks for a handful of rows: cuBLAS's GEMV-like kernels and
#: CUTLASS's swap-AB configurations put the batch in the MMA's N dimension (TensorRT-LLM's Hopper tile configs run
#: down to 64 x 16, ``CutlassTileConfigSM90::CtaShape64x16x128B``).
MIN_TILE_ROWS = 16


def padded_rows(m, m_tile, varying=False, small_tiles: bool = False):
    """Rows a GEMM's tensor cores compute when they work on whole tiles of rows (tile quantization, NVIDIA
    "Matrix Multiplication Background User's Guide", section "Tile Quantization").

    A fixed ``m`` is padded up to the next whole tile, ``ceil(m / tile) tile``. ``small_tiles``: the kernel library
    fits the tile to the call (cuBLAS / CUTLASS autotuning; TensorRT-LLM profiles its GEMM tactics per
    power-of-two bucket of ``m``), so a GEMM of fewer than ``m_tile`` rows runs the smallest power-of-two tile
    that holds them, at least :data:`MIN_TILE_ROWS`; without it every call runs ``m_tile``-row tiles (the
    training model's grouped expert GEMMs).

    ``varying`` (a bool or a mask over ``m``): ``m`` is the mean of a row count that changes from call to call
    (a serving engine's iterations: the running batch shrinks and grows, prompt pieces come and go), so the
    residue is spread evenly and the expected padding is half a tile, ``m + (tile - 1) / 2``, with the tile
    ``min(m_tile, max(MIN_TILE_ROWS, m))``: a tile that grows with the rows up to ``m_tile`` (the autotuned tile
    lies between ``m`` and ``2 m``), so the padding stays continuous in ``m`` and a decode GEMM of a few rows pays
    a few rows. No rows, no tiles: 0 stays 0."""
    m = checks.array_at_least("m", m)
    t = float(checks.integer("m_tile", m_tile, low=1, whole_floats=True))
    if t == 1.0:
        return m
    if small_tiles:
        fit = np.exp2(np.ceil(np.log2(np.maximum(m, 1.0))))
        tile = np.minimum(t, np.maximum(float(MIN_TILE_ROWS), fit))
    else:
        tile = np.full_like(m, t)
    fixed = np.where(m > 0, np.maximum(np.ceil(m / tile), 1.0) * tile, 0.0)    # any rows: at least one tile
    if not np.any(varying):
        return fixed
    grow = np.minimum(t, np.maximum(float(MIN_TILE_ROWS), m))
    spread = np.where(m > 0, m + (grow - 1.0) / 2.0, 0.0)
    return np.where(varying, spread, fixed)


def gemm_time_s(m, n, k, *, peak_flop_per_s, hbm_bytes_per_s, ceil: Ceilings, precision: str,
                operand_bytes: float, output_bytes: float = 2.0, groups=1, m_tile=1, overlap_norm=np.inf,
                m_varies=False, small_tiles: bool = False, kernel_s: float | None = None):
    """Time of ``groups`` GEMMs of shape ``(m, k) x (k, n)`` run as one (grouped) kernel.

    Roofline of compute (``t_c = 2 m' n k groups / (peak x f_gemm)``) and memory (``t_m``: operands in
    ``operand_bytes`` per element, output in ``output_bytes``, at ``hbm x gemm_stream_fraction``), plus one
    ``t_kernel``. Williams et al. 2009 (roofline); the saturating efficiency is the overhead term.
    ``m_tile``: the tensor cores work on whole tiles of ``m_tile`` rows, so each group's ``m`` is
    padded up to a multiple of it (``m' = ceil(m / m_tile) m_tile``; :func:`padded_rows`). It matters for
    grouped expert GEMMs with few tokens per expert, and for a serving iteration's dense GEMMs of a few hundred
    rows at the compute roof (``m_varies``: ``m`` is a mean row count, padded by half a tile on average;
    ``small_tiles``: fewer rows than a tile run a smaller, autotuned tile).
    ``overlap_norm`` ``p``: how the two roofs combine, ``(t_c^p + t_m^p)^(1/p)``. ``inf`` (dense
    kernels): the max, full overlap of the operand stream with the MMAs (our H200 cuBLAS FP8 GEMMs
    at 512 x 8192 x 8192 run within 7% of it). Grouped MoE kernels pass
    ``Ceilings.grouped_gemm_overlap_norm`` (2): near the ridge point, with a few hundred rows per
    expert, DeepGEMM's masked grouped FP8 GEMMs on H800 reach 47-53% of peak where the max roofline
    says 62-70% (DeepGEMM README, Performance tables; ``data/efficiency/grouped_gemm_h800.csv``).
    ``kernel_s``: the fixed time of the kernel, ``ceil.kernel_overhead_s`` (the H200 fit) unless a kernel family
    has its own (Blackwell's dense FP4 GEMMs, :func:`dense_gemm_terms`; a grouped MoE launch).
    """
    m, n, k, groups = (checks.array_at_least(name, v) for name, v in (("m", m), ("n", n), ("k", k),
                                                                      ("groups", groups)))
    m_pad = padded_rows(m, m_tile, m_varies, small_tiles)
    flop = 2.0 * m_pad * n * k * groups
    bytes_ = groups * (operand_bytes * (m * k + k * n) + output_bytes * m * n)
    t_compute = flop / (peak_flop_per_s * ceil.gemm_fraction(precision))
    t_memory = bytes_ / (hbm_bytes_per_s * ceil.gemm_stream_fraction)
    p = checks.number("overlap_norm", overlap_norm, low=1.0, allow_inf=True)   # 1: the sum; inf: the max
    t_kernel = ceil.kernel_overhead_s if kernel_s is None else checks.number("kernel_s", kernel_s, low=0.0)
    if np.isinf(p):
        return np.maximum(t_compute, t_memory) + t_kernel
    big = np.maximum(np.maximum(t_compute, t_memory), 1e-300)    # scaled: no overflow of t^p
    return big * ((t_compute / big) ** p + (t_memory / big) ** p) ** (1.0 / p) + t_kernel


def dense_gemm_terms(precision: str, ceil: Ceilings) -> tuple[float, float]:
    """(overlap norm ``p``, fixed seconds per kernel) of a serving engine's dense GEMM at ``precision`` for
    :func:`gemm_time_s`: the max of the two roofs and ``kernel_overhead_s`` (H200 fit, 2 us), except block-scaled FP4,
    whose published B200 kernels (``data/efficiency/dense_fp4_gemm_b200.csv``: DeepGEMM PR 348's MXF4 kernel and
    cuBLASLt 13.3 at seven shapes, vLLM PR 20578's CUTLASS NVFP4 sweep at 6144 x 4096 from 64 to 16,384 rows) reach
    their large-GEMM rate only slowly: 1.2-2.2 PFLOP/s at 512 rows where the max roofline with 2 us says 2.9-3.5, and
    a 128 x 2048 x 7168 product takes 11.5 us. Their compute and operand stream combine as the
    ``dense_fp4_overlap_norm`` p-norm (central 2, the grouped kernels' value) with ``dense_fp4_kernel_s`` (central
    7 us: the scale-factor loads, the 2-SM cluster's prologue and the epilogue of tiles few enough to leave SMs idle);
    fitted, the pair puts the 23 kernels' times at a median 12% (max 40%) where the max with 2 us is 37% short (their
    rate 59% fast). Applied by the serving model's dense GEMMs (:func:`serving_kernels.gemm_s`); the training model's
    GEMMs, thousands of rows each, keep the max."""
    if precision == "fp4":
        return ceil.dense_fp4_overlap_norm, ceil.dense_fp4_kernel_s
    return np.inf, ceil.kernel_overhead_s


def grouped_peak_flop_per_s(precision: str, peak_flop_per_s: float, fp8_peak_flop_per_s: float | None,
                            ceil: Ceilings, deepgemm: bool = False) -> float:
    """The peak a grouped (MoE) GEMM at ``precision`` is timed against in :func:`gemm_time_s`.

    NVFP4 grouped MoE kernels run at the FP8 tensor rate times ``grouped_fp4_speedup`` (1.0: published fused
    MoE timings on B200 and B300 reach ~3.0-3.3 PFLOP/s marginal, the FP8 burst rate of both, although B300's
    dense FP4 is 3x its FP8; ``data/efficiency/ceilings.csv``), never above the FP4 rate. Other precisions
    keep their dense peak, except FP8 on Hopper, whose grouped kernels run at ``grouped_fp8_compute_fraction`` of
    the dense FP8 rate (measured on our H200: a CUTLASS grouped FP8 GEMM, PyTorch's ``_scaled_grouped_mm``, at
    0.68-0.77 of cuBLAS's per-expert products from 512 to 4,096 rows per expert at Mixtral's shapes,
    data/measurements/h200-2026-12-04/moe_fp8.csv). ``deepgemm``: the experts run DeepGEMM's block-scaled FP8
    grouped kernels instead, as engines run the DeepSeek family's 128 x 128 block-scaled FP8 experts on Hopper
    (SGLang, TensorRT-LLM), whose published grouped rates reach the dense rate (DeepGEMM README, H800); they keep
    the dense FP8 peak. The serving model applies it; the training model keeps the dense FP4 rate for its NVFP4
    expert GEMMs, as no published NVFP4 grouped *training* kernel timing was found (applied there, it would raise
    the 10T-MoE headline's GB200 count by ~15%)."""
    if precision == "fp8":
        return peak_flop_per_s * (1.0 if deepgemm else ceil.grouped_fp8_compute_fraction)
    if precision != "fp4" or not fp8_peak_flop_per_s:
        return peak_flop_per_s
    ratio = ceil.gemm_fraction("fp8") / ceil.gemm_fraction("fp4")     # keeps the fp4 fraction gemm_time_s applies
    return min(peak_flop_per_s, fp8_peak_flop_per_s * ceil.grouped_fp4_speedup * ratio)


def serving_dense_peak_flop_per_s(precision: str, peak_flop_per_s: float, fp8_peak_flop_per_s: float | None,
                                  ceil: Ceilings) -> float:
    """The peak a serving engine's dense (non-expert) GEMM at ``precision`` is timed against in :func:`gemm_time_s`.

    Blackwell's NVFP4 tensor-core instruction issues at twice its FP8 rate (B200 9 / 4.5 PF, GB200 10 / 5 PF dense).
    Blackwell Ultra (SM103: B300, GB300) is specified at three times (13.5 / 4.5, 15 / 5 PF), a rate only kernels
    written for its K96 block-scaled MMA reach (HazyResearch/ThunderKittens PR 201; CUTLASS's SM103 reference kernel,
    the ``tk-b300-nvfp4-gemm`` row of ``data/runs/inference_runs.csv``); the serving engines' kernels of 2025-26 do
    not (FlashInfer PR 2303: "current kernels remain far from this limit"; SGLang PR 28460: B300 15-40% behind B200
    with SM100-tuned kernels; ``data/efficiency/ceilings.csv``). So dense NVFP4 GEMMs run at ``dense_fp4_speedup`` x
    the FP8 peak (central 2.0, Blackwell's ratio), never above the FP4 peak, at the FP4 kernel efficiency; B200,
    GB200 and Rubin (ratio 2) are unchanged. Other precisions keep their peak. The serving model applies it, as
    :func:`grouped_peak_flop_per_s`; the training model keeps the dense FP4 rate (Transformer Engine's cuBLASLt
    GEMMs; no SM100-only evidence for training was found)."""
    if precision != "fp4" or not fp8_peak_flop_per_s:
        return peak_flop_per_s
    return min(peak_flop_per_s, fp8_peak_flop_per_s * ceil.dense_fp4_speedup)


def gemm_efficiency(m, n, k, *, peak_flop_per_s, hbm_bytes_per_s, ceil: Ceilings, precision: str,
                    operand_bytes: float, output_bytes: float = 2.0):
    """Achieved fraction of ``peak_flop_per_s`` for one GEMM (the curve behind :func:`gemm_time_s`)."""
    t = gemm_time_s(m, n, k, peak_flop_per_s=peak_flop_per_s, hbm_bytes_per_s=hbm_bytes_per_s, ceil=ceil,
                    precision=precision, operand_bytes=operand_bytes, output_bytes=output_bytes)
    return 2.0 * np.asarray(m, float) * n * k / (t * peak_flop_per_s)


#: Head dimension the flash-attention ceilings (``attention_fraction_bf16``) are calibrated at: the project's H200
#: SDPA runs (``data/measurements/h200-2026-11-29/attention.csv``) and the FA3 reference shapes.
ATTENTION_REFERENCE_HEAD_DIM = 128.0


def attention_head_dim_factor(head_dim, ceil: Ceilings):
    """Flash-attention time per FLOP at head dimension ``head_dim`` over the calibrated one (d = 128).

    Each attention score costs ``4 d`` tensor-core FLOPs forward (``Q K^T`` and ``P V``; 2.5x that backward)
    and a fixed amount of softmax work that does not scale with ``d``: the ``exp`` on the special-function
    units (MUFU.EX2) forward, its recompute and the ``dS`` elementwise backward, which the kernels do not fully
    hide behind the MMAs. If a share ``phi`` (``attention_softmax_share``) of the time at d = 128 is that
    per-score work, then per FLOP it scales as ``128 / d``, and an accelerator with ``attention_sfu_speedup``
    times the SFU throughput of its generation's reference does it that much faster::

        factor = (1 - phi) + phi x (128 / d) / sfu_speedup

    Fitted to Shah et al. 2024, "FlashAttention-3" (arXiv 2407.08608), Figures 5-6 (H100 SXM5 BF16, head
    dimension 64 vs 128, forward and backward, FA3 and cuDNN): ``phi`` 0.21-0.27 on Hopper, so head dimension 64
    runs at ~0.8x the FLOP rate of 128. Blackwell doubled the tensor-core rate per SM but not the SFU rate;
    Blackwell Ultra (B300, GB300) doubles the SFU throughput (NVIDIA technical blog "Making Softmax More
    Efficient with NVIDIA Blackwell Ultra": ~35% higher FP8 attention forward throughput for DeepSeek-V3 on GB300
    than GB200). ``head_dim``: FLOPs per score element / 4, i.e. ``(d_qk + d_v) / 2`` (MLA: 160 in training,
    ``(2c + r) / 2`` in absorbed decode). Returns 1 at d = 128 with no SFU speedup."""
    d = checks.array_at_least("head_dim", head_dim, low=1.0)
    phi = ceil.attention_softmax_share
    return (1.0 - phi) + phi * (ATTENTION_REFERENCE_HEAD_DIM / d) / ceil.attention_sfu_speedup


def attention_efficiency(seq_len, ceil: Ceilings, head_dim=ATTENTION_REFERENCE_HEAD_DIM):
    """Flash-attention fwd+bwd fraction of the BF16 dense peak at sequence length ``seq_len``.

    ``f_attn x s / (s + s_half)``: short sequences leave tiles and SMs idle (Dao 2023,
    FlashAttention-2, Fig. 6 shows the same rise with sequence length), divided by
    :func:`attention_head_dim_factor` (head dimension and softmax throughput).
    """
    s = checks.array_at_least("seq_len", seq_len)
    return ceil.attention_fraction() * s / (s + ceil.attention_seq_half) / attention_head_dim_factor(head_dim, ceil)


def attention_time_s(flop, seq_len, *, bf16_peak_flop_per_s, ceil: Ceilings, head_dim=ATTENTION_REFERENCE_HEAD_DIM,
                     forward_only: bool = False):
    """Time of flash-attention work of ``flop`` FLOPs at ``seq_len`` and ``head_dim``: a training step's forward
    and backward mix, or (``forward_only``, serving prefill and decode) the forward kernel alone, which runs
    ``attention_forward_speedup`` times the fwd+bwd FLOP rate (its MMAs need no atomics or recomputation)."""
    rate = bf16_peak_flop_per_s * attention_efficiency(seq_len, ceil, head_dim)
    return np.asarray(flop, float) / (rate * (ceil.attention_forward_speedup if forward_only else 1.0))
