"""Alpha-beta (latency-bandwidth) cost of collectives on a link, flat or hierarchical.

For ``p`` ranks, a message of ``S`` bytes per rank, per-step latency ``alpha`` and per-rank link
bandwidth ``B`` (one direction, times an achieved efficiency), the ring algorithms cost
(Thakur, Rabenseifner & Gropp 2005, "Optimization of Collective Communication Operations in
MPICH", IJHPCA 19(1), section 4; NCCL docs, "Performance" / nccl-tests ``doc/PERFORMANCE.md``,
whose *bus bandwidth* is exactly ``B`` below):

* reduce-scatter, all-gather: ``(p-1) alpha + (p-1)/p * S / B``
* all-reduce (reduce-scatter + all-gather): ``2 (p-1) alpha + 2 (p-1)/p * S / B``
* all-to-all (pairwise exchange): ``(p-1) alpha + (p-1)/p * S / B``, split between NVLink and the NICs by
  :func:`hierarchical_all_to_all_s`
* point-to-point: ``alpha + S / B``

``S`` is the full buffer per rank (the all-reduce input, the all-gather *output*, the
reduce-scatter *input*, the all-to-all send buffer). A tree all-reduce has ``2 log2(p)`` latency
steps and the same bandwidth term (NCCL's double binary tree), used when it is cheaper.

A group that spans scale-up domains runs hierarchically: the ``p_in`` ranks of a domain work on
NVLink and the ``p_out = p / p_in`` domains on the scale-out NICs, each GPU driving its own NIC
(rail-optimised fabric). E.g. a hierarchical all-reduce is a reduce-scatter inside the domain, an
all-reduce of ``S/p_in`` across domains, and an all-gather inside the domain. The latency of a reduce-scatter or
all-gather across domains is the flat ring's, ``p - 1`` steps (:func:`ring_latency_s`): NCCL rings span all ranks.

All functions take numpy arrays (broadcast together) and return arrays of seconds.
"""

from __future__ import annotations

import functools

import numpy as np

from intelligence_per_dollar.sources import checks

__all__ = ["Link", "overlap_exposed_s", "reduce_scatter_s", "all_gather_s", "all_reduce_s", "one_shot_all_reduce_s",
           "p2p_s", "ring_latency_s", "hierarchical_all_reduce_s", "hierarchical_reduce_scatter_s",
           "hierarchical_all_to_all_s", "mesh_share", "on_shared_link"]


class Link:
    """One direction of a per-GPU link: ``bytes_per_s`` (line rate), ``efficiency``, ``latency_s``."""

    __slots__ = ("bytes_per_s", "efficiency", "latency_s")

    def __init__(self, bytes_per_s: float, efficiency: float = 1.0, latency_s: float = 0.0):
        self.bytes_per_s = checks.positive_number("Link bytes_per_s", bytes_per_s)
        self.efficiency = checks.fraction("Link efficiency", efficiency, low_open=True)
        self.latency_s = checks.non_negative_number("Link latency_s", latency_s)

    @property
    def effective_bytes_per_s(self) -> float:
        return self.bytes_per_s * self.efficiency

    def __repr__(self):
        return f"Link({self.bytes_per_s:.3g} B/s, eff {self.efficiency}, {self.latency_s:.2g} s)"


def mesh_share(group, domain_gpus: int, mesh: bool):
    """Share of a GPU's scale-up bandwidth a collective among ``group`` GPUs of one domain of ``domain_gpus`` can
    drive. Behind switches (NVSwitch) every link reaches every peer: 1. On a domain whose GPUs are wired to each other
    directly (``mesh``: an HGX H100 4-GPU board, whose MLPerf system descriptions state "6x 4th Gen NVLink, 900GB/s",
    6 of each GPU's 18 links per pair) only the links to the group's other ``g - 1`` GPUs carry it:
    ``(g - 1) / (n - 1)``, so a tensor-parallel pair on such a board all-reduces at a third of the rate. At least one
    pair's share (a point-to-point send)."""
    g = np.minimum(np.asarray(group, float), domain_gpus)
    if not mesh or domain_gpus < 2:
        return np.ones_like(g)
    return np.clip((g - 1.0) / (domain_gpus - 1.0), 1.0 / (domain_gpus - 1.0), 1.0)


def on_shared_link(link: Link, share, timed):
    """``timed(link)`` (a collective's time over a :class:`Link`) with the link's rate times ``share`` element by
    element (:func:`mesh_share`): one evaluation per distinct share below 1."""
    out = timed(link)
    share = np.asarray(share, float)
    for v in np.unique(share[share < 1.0]):
        out = np.where(share == v, timed(Link(link.bytes_per_s * float(v), link.efficiency, link.latency_s)), out)
    return out


def _finite_time(fn):
    """Run the collective with float overflow allowed, then refuse an infinite or NaN time with a
    ``ValueError`` (extreme inputs: a link of 1e-300 B/s, 1e308 bytes)."""
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            t = fn(*args, **kwargs)
        if not np.all(np.isfinite(t)):
            raise ValueError(f"{fn.__name__}: the time overflows to infinity for these inputs (bytes, ranks or link "
                             f"figures at the float64 limits); allowed: inputs whose time is a finite number")
        return t
    return timed


def _args(bytes_, ranks):
    """``(bytes, ranks)`` as float arrays: finite, bytes >= 0, ranks >= 1."""
    return checks.array_at_least("bytes_", bytes_, 0.0), checks.array_at_least("ranks", ranks, 1.0)


@_finite_time
def reduce_scatter_s(bytes_, ranks, link: Link):
    """Ring reduce-scatter of a ``bytes_`` buffer over ``ranks`` (Thakur et al. 2005, Sec. 4.4)."""
    b, p = _args(bytes_, ranks)
    t = (p - 1) * link.latency_s + (p - 1) / p * b / link.effective_bytes_per_s
    return np.where(p > 1, t, 0.0)


@_finite_time
def all_gather_s(bytes_, ranks, link: Link):
    """Ring all-gather producing a ``bytes_`` buffer on each rank (Thakur et al. 2005, Sec. 4.1)."""
    return reduce_scatter_s(bytes_, ranks, link)


@_finite_time
def all_reduce_s(bytes_, ranks, link: Link):
    """All-reduce: min of ring (Rabenseifner RS+AG, 2(p-1) steps) and double binary tree."""
    b, p = _args(bytes_, ranks)
    bw = 2 * (p - 1) / p * b / link.effective_bytes_per_s
    ring = 2 * (p - 1) * link.latency_s + bw
    tree = 2 * np.ceil(np.log2(np.maximum(p, 1))) * link.latency_s + bw
    return np.where(p > 1, np.minimum(ring, tree), 0.0)


@_finite_time
def one_shot_all_reduce_s(bytes_, ranks, link: Link):
    """One-shot all-reduce inside an NVLink domain, the serving engines' custom kernel for small messages
    (vLLM ``csrc/custom_all_reduce.cuh`` ``cross_device_reduce_1stage``; TensorRT-LLM
    ``customAllReduceKernels.cu`` ONESHOT; SGLang's port of vLLM's): every rank reads the other ``p - 1`` ranks'
    buffers over NVLink and reduces them itself, after one barrier to publish its buffer and one to release it:
    ``2 alpha + (p - 1) S / B``. Fewer latency steps than a ring or tree, more bytes per rank, so it wins only for
    small ``S`` (decode at low batch); :func:`all_reduce_s` keeps the larger ones."""
    b, p = _args(bytes_, ranks)
    return np.where(p > 1, 2 * link.latency_s + (p - 1) * b / link.effective_bytes_per_s, 0.0)


@_finite_time
def p2p_s(bytes_, link: Link):
    """One point-to-point transfer."""
    b, _ = _args(bytes_, 1)
    return np.where(b > 0, link.latency_s + b / link.effective_bytes_per_s, 0.0)


def _split(ranks, ranks_in_domain):
    p, d = np.broadcast_arrays(checks.array_at_least("ranks", ranks, 1.0),
                               checks.array_at_least("ranks_in_domain", ranks_in_domain))
    p_in = np.minimum(p, np.maximum(d, 1))
    p_out = np.maximum(p / p_in, 1.0)
    return p_in, p_out


def ring_latency_s(ranks, ranks_in_domain, inner: Link, outer: Link):
    """Latency term of one NCCL ring reduce-scatter or all-gather over ``ranks`` of which ``ranks_in_domain``
    share a scale-up domain: the ring is flat, ``p - 1`` steps, of which the ``p_out - 1`` that leave a domain
    pay the scale-out latency and the other ``p - p_out`` the scale-up one (NCCL ``src/graph/tuning.cc``,
    ``ncclTopoTuneModel``: ring latency ``(nsteps - nInterSteps) intraLat + nInterSteps interLat`` with
    ``nsteps = nRanks - 1`` and ``nInterSteps = nNodes - 1`` for ReduceScatter / AllGather, which NCCL runs as
    rings across nodes unless one GPU per node allows PAT). It grows with every rank, not with the domains."""
    p_in, p_out = _split(ranks, ranks_in_domain)
    p = p_in * p_out
    return np.where(p > 1, (p - p_out) * inner.latency_s + (p_out - 1) * outer.latency_s, 0.0)


@_finite_time
def hierarchical_reduce_scatter_s(bytes_, ranks, ranks_in_domain, inner: Link, outer: Link):
    """Reduce-scatter over ``ranks`` of which ``ranks_in_domain`` share a scale-up domain.

    Bandwidth: inside first (full buffer), then across domains on ``1/p_in`` of it (NCCL's rail-aligned
    rings and PAT have the same bandwidth terms). Latency: the flat ring's ``p - 1`` steps
    (:func:`ring_latency_s`). An empty buffer launches no collective: 0.
    """
    p_in, p_out = _split(ranks, ranks_in_domain)
    b = np.asarray(bytes_, float)
    bw = ((p_in - 1) / p_in * b / inner.effective_bytes_per_s
          + (p_out - 1) / p_out * (b / p_in) / outer.effective_bytes_per_s)
    return np.where((p_in * p_out > 1) & (b > 0), bw + ring_latency_s(ranks, ranks_in_domain, inner, outer), 0.0)


@_finite_time
def hierarchical_all_reduce_s(bytes_, ranks, ranks_in_domain, inner: Link, outer: Link):
    """Reduce-scatter inside the domain, all-reduce across, all-gather inside."""
    p_in, p_out = _split(ranks, ranks_in_domain)
    b = np.asarray(bytes_, float)
    hier = 2 * reduce_scatter_s(b, p_in, inner) + all_reduce_s(b / p_in, p_out, outer)
    return np.where(p_out > 1, hier, all_reduce_s(b, p_in, inner))


@_finite_time
def hierarchical_all_to_all_s(bytes_, ranks, ranks_in_domain, inner: Link, outer: Link, outer_scale=1.0):
    """All-to-all whose peers are partly inside the domain (NVLink) and partly outside (NICs).

    The ``p_in - 1`` in-domain peers' share goes over NVLink and the ``p - p_in`` others' share
    over the GPU's NIC at the same time; the slower of the two sets the time. ``outer_scale``
    (<= 1) shrinks the cross-domain bytes when a dispatcher deduplicates copies bound for the
    same remote domain (DeepEP).
    """
    p_in, _ = _split(ranks, ranks_in_domain)
    b, p = _args(bytes_, ranks)
    outer_scale = checks.array_at_least("outer_scale", outer_scale)
    t_in = (p_in - 1) * inner.latency_s + (p_in - 1) / p * b / inner.effective_bytes_per_s
    t_out = (p - p_in) / p_in * outer.latency_s + (p - p_in) / p * b * outer_scale / outer.effective_bytes_per_s
    return np.where(p > 1, np.maximum(t_in, t_out), 0.0)


def overlap_exposed_s(t_comm, t_compute, slowdown: float):
    """Time a collective of ``t_comm`` seconds adds to the ``t_compute`` seconds of compute it overlaps.

    The collective's kernels take SMs and HBM bandwidth from the compute beside them (NCCL runs each channel as
    a thread block on an SM; DeepSeek-V3 keeps 20 of 132 SMs for its all-to-alls, arXiv 2412.19437 section
    3.2.2), so while it runs the compute is ``1 + slowdown`` times slower (``overlap_compute_slowdown``,
    ``data/efficiency/ceilings.csv``; Lee et al. 2025, arXiv 2507.03114: 18.9% on average). Compute of ``W``
    beside a collective of ``C`` gets ``C / (1 + slowdown)`` of its work done while the collective runs, so both
    end at ``max(C, W + C slowdown / (1 + slowdown))``: the exposed time is ``max(C - W, C slowdown / (1 +
    slowdown))`` instead of the contention-free ``max(0, C - W)`` (``slowdown`` 0)."""
    k = checks.non_negative_number("slowdown", slowdown) / (1.0 + slowdown)
    t_comm = np.asarray(t_comm, float)
    return np.maximum(t_comm - t_compute, k * t_comm)
