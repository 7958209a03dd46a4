"""Serving with part of the weights in host (CPU) memory, streamed to the GPU every iteration.

A model whose weights do not fit in HBM can still be served if a share ``f`` of each layer's
weights lives in host memory and is copied in just before the layer runs, layer by layer, while
the previous layer computes (a two-slot staging buffer in HBM). This is what SGLang does on GB200
prefill instances ("expert weights offloaded to Grace memory and prefetched over NVLink-C2C",
LMSYS blog 2025-09-25, GB200 NVL72 part II), and what ``vllm --cpu-offload-gb`` and
DeepSpeed-Inference ZeRO-Inference do over PCIe (Aminabadi et al. 2022, "DeepSpeed-Inference",
SC'22, section V: weights streamed from CPU memory, prefetch overlapped with compute).

Per GPU and iteration, with ``W`` the layer weights a GPU holds (:func:`serving_pipeline.layer_weight_bytes`):

* **memory**: ``(1 - f) W`` stay in HBM, plus a staging buffer of two of the largest layer's offloaded
  share (one being used, one being filled); ``f W`` must fit in the GPU's share of host memory
  (``host_memory_bytes``).
* **time**: every iteration reads every layer once, so ``f W`` crosses the host link,
  ``t_stream = f W / (host_link_bytes_per_s x host_link_efficiency)``. Prefetch overlaps it with
  compute layer by layer; the layers are alike, so the iteration takes ``max(t_gpu, t_stream)``
  (:func:`stream_s` is the floor ``inference.evaluate`` and ``serving_benchmarks`` apply). Prefill of long prompts hides the stream (compute per byte of
  weight is ``2 x tokens`` FLOPs); decode does not (it reads each weight once per token anyway, now
  over a link 10-100x slower than HBM).

**When** (``weight_offload``): ``None`` (default) offloads only if nothing fits without it *and* the
host link is NVLink-C2C (Grace-Hopper/Blackwell/Vera superchips, hundreds of GB/s: where
deployments do it); ``True`` searches offload shares on any host link (PCIe too), even when the
weights fit (freeing HBM for KV cache can pay on prefill); a number in (0, 1] holds that share; ``False`` never
offloads. Offload needs the accelerator's host link and host memory in the catalogue. The share is
searched over :data:`FRACTIONS` with the layouts, and reported (``offload`` column / field).
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_pipeline as pipe
from intelligence_per_dollar.sources import checks, hardware

__all__ = ["FRACTIONS", "COHERENT_LINKS", "check_option", "can_offload", "with_offload", "no_fit_hint",
           "largest_layer_bytes", "staged_weight_bytes", "stream_s", "host_fits"]

#: Shares of the layer weights a GPU may keep in host memory (searched with the layouts).
FRACTIONS = (0.125, 0.25, 0.5, 0.75, 1.0)
#: Host links fast and coherent enough that ``weight_offload=None`` considers offload.
COHERENT_LINKS = ("NVLink-C2C",)


def check_option(weight_offload) -> bool | float | None:
    """``weight_offload`` validated: None (auto), True, False, or a share in (0, 1] to hold fixed."""
    if weight_offload is None or isinstance(weight_offload, (bool, np.bool_)):
        return None if weight_offload is None else bool(weight_offload)
    if checks.is_number(weight_offload) and 0.0 < float(weight_offload) <= 1.0:
        return float(weight_offload)
    raise ValueError(f"weight_offload={checks.short(weight_offload)} is not allowed; allowed: None (offload only "
                     f"when nothing fits and the host link is NVLink-C2C), True, False, or a share in (0, 1]")


def can_offload(acc: hardware.Accelerator, weight_offload: bool | None) -> bool:
    """Whether the search may offload on ``acc``: an explicit ``True`` (or a share) needs a host link and host memory
    in the catalogue; ``None`` a coherent link (:data:`COHERENT_LINKS`)."""
    if weight_offload is False or not (acc.host_link_bytes_per_s and acc.host_memory_bytes):
        return False
    return weight_offload is not None or acc.host_link in COHERENT_LINKS


def with_offload(ctx: kern.Context, c: dict, fits_without) -> dict:
    """The serving candidates ``c`` with their ``offload`` share: 0 everywhere, crossed with :data:`FRACTIONS`
    where the search may offload -- always for ``weight_offload=True``; for ``None`` only when
    ``fits_without(c)`` says no candidate fits without it; a share given as a number is the only one."""
    c = {**c, "offload": np.zeros_like(c["tp"])}
    if not can_offload(ctx.acc, ctx.weight_offload) or (ctx.weight_offload is None and fits_without(c)):
        return c
    w = ctx.weight_offload
    shares = (w,) if not isinstance(w, bool) and w is not None else ((0.0,) if w else ()) + FRACTIONS
    out = {k: np.tile(v, len(shares)) for k, v in c.items()}
    out["offload"] = np.repeat(np.asarray(shares, float), len(c["tp"]))
    return out


def no_fit_hint(acc: hardware.Accelerator, weight_offload, host_ok: bool = True) -> str:
    """What to add to a "weights do not fit" refusal: how to offload, or that even offload did not fit (``host_ok``:
    whether some offloaded share fitted the host memory)."""
    if can_offload(acc, weight_offload):
        return ("; nor with part of the layer weights offloaded to host memory ("
                + ("the HBM still cannot hold the rest)" if host_ok else "host memory per GPU too small)"))
    if weight_offload is not False and acc.host_link_bytes_per_s:
        return (f"; weight_offload=True streams part of the weights from host memory over its {acc.host_link} link "
                f"({acc.host_link_bytes_per_s / 1e9:.0f} GB/s per direction)")
    return ""


def largest_layer_bytes(ctx: kern.Context, tp, r):
    """Bytes of the largest layer one GPU holds: a MoE layer's dense part split by TP plus its experts over
    the stage's ``r`` GPUs, or a dense layer split by TP."""
    P = ctx.params
    attention = kern.attention_extra_bytes(ctx)
    dense = (P["dense_layer"] * ctx.w_bytes + attention) / tp
    if not P["expert_total"]:
        return dense
    experts = P["expert"] * ctx.s.experts                    # routed experts of one MoE layer
    moe = ((P["moe_layer_total"] - experts) * ctx.w_bytes + attention) / tp + experts / r * ctx.expert_bytes
    return np.maximum(dense, moe)


def staged_weight_bytes(ctx: kern.Context, tp, r, pp, offload):
    """HBM bytes the offload changes on one GPU: ``-f W`` for the share kept in host memory plus the
    two-slot staging buffer, two of the largest layer's offloaded share (0 without offload)."""
    f = np.asarray(offload, float)
    return -f * pipe.layer_weight_bytes(ctx, tp, r, pp) + 2.0 * f * largest_layer_bytes(ctx, tp, r)


def stream_s(ctx: kern.Context, tp, r, pp, offload, efficiency: float):
    """Seconds to copy one iteration's offloaded weights over the host link (0 without offload)."""
    f = np.asarray(offload, float)
    bw = (ctx.acc.host_link_bytes_per_s or np.inf) * efficiency
    return f * pipe.layer_weight_bytes(ctx, tp, r, pp) / bw


def host_fits(ctx: kern.Context, tp, r, pp, offload):
    """Whether the offloaded share fits in the GPU's share of host memory (True where the catalogue
    has no figure)."""
    cap = ctx.acc.host_memory_bytes
    return np.asarray(offload, float) * pipe.layer_weight_bytes(ctx, tp, r, pp) <= (cap if cap else np.inf)
