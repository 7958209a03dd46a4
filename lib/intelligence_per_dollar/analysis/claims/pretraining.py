"""Chapter 2 for the ledger and chapter 4: GPUs that train the 10T target by its deadline on the
reference and candidate accelerators, their ratio, and the training throughput that prices a
model's pretraining.

The workload (10T parameters, 100T tokens, 30 days, sequence length, precision, the accelerators
compared, the regime its claim is judged in) is :func:`workloads.training`; its active parameters,
which NVIDIA does not state, are the ranged assumption the workload names. Each search takes
about a second; :func:`training.deadline` memoises them.
"""

from __future__ import annotations

import functools

from intelligence_per_dollar.model import architecture, training
from intelligence_per_dollar.sources import hardware, models, workloads

#: Fixed-batch pretraining of a catalogue model for chapter 4's lifecycle (sequence, batch in tokens).
LIFECYCLE_SEQ_LEN = 8192
LIFECYCLE_GLOBAL_BATCH_TOKENS = 16 * 2**20


def training_gpus(active_params: float, accelerator: str, precision: str | None = None,
                  regime: str | None = None) -> training.Deadline:
    """Chapter 2's deadline search (:func:`training.deadline`, memoised) for the 10T workload on
    ``accelerator``. ``precision`` defaults to the workload's, ``regime`` to the regime its claim
    is judged in (``claim_regime``)."""
    w = workloads.training()
    model = architecture.from_total_active(float(w.total_params), float(active_params))
    return training.deadline(model, accelerator, precision or w.precision, tokens=float(w.tokens), days=float(w.days),
                             seq_len=int(w.seq_len), regime=regime or w.claim_regime)


def training_gpu_ratio(active_params: float, precision: str | None = None, regime: str | None = None
                       ) -> tuple[float, training.Deadline, training.Deadline]:
    """``(reference GPUs / candidate GPUs, reference deadline, candidate deadline)`` for the 10T
    workload in ``regime`` (default: the claim's, :func:`training_gpus`).

    The accelerators are the workload's. NaN (not an error) when the candidate cannot meet the
    deadline; +inf when only the reference cannot (no number of its racks up to chapter 2's search
    limit trains in time).
    """
    w = workloads.training()
    ref = training_gpus(active_params, w.reference_accelerator, precision, regime)
    cand = training_gpus(active_params, w.candidate_accelerator, precision, regime)
    if not cand.feasible:
        return float("nan"), ref, cand
    if not ref.feasible:
        return float("inf"), ref, cand
    return ref.gpus / cand.gpus, ref, cand


@functools.lru_cache(maxsize=16)
def _tokens_per_s_per_gpu(model: str, accelerator: str, gpus: int, precision: str) -> float:
    e = training.estimate(models.get(model), accelerator, gpus, precision, LIFECYCLE_SEQ_LEN,
                          LIFECYCLE_GLOBAL_BATCH_TOKENS)
    return float(e.tokens_per_s_per_gpu)


def training_tokens_per_s_per_gpu(model: str, system: str, *, racks: int = 8, precision: str = "bf16") -> float:
    """Chapter 2's training throughput per GPU of catalogue ``model`` on ``racks`` racks of ``system`` (cached).

    Raises ``ValueError`` (from :func:`training.estimate`) when the model does not fit those GPUs.
    """
    system_spec = hardware.get_system(system)
    return _tokens_per_s_per_gpu(model, system_spec.accelerator, int(racks * system_spec.gpus), precision)
