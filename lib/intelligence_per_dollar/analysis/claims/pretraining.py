"""Chapter 2 for the ledger and chapter 4: GPUs that train the 10T target by its deadline on the
reference and candidate accelerators, their ratio, and the training throughput that prices a
model's pretraining.

The workload (10T parameters, 100T tokens, 30 days, sequence length, precision, the accelerators
compared) is :func:`workloads.training`; its active parameters, which NVIDIA does not state, are
the ranged assumption the workload names. Each search takes seconds, so results are cached.
"""

from __future__ import annotations

import functools

from intelligence_per_dollar.model import architecture, training
from intelligence_per_dollar.sources import hardware, models, workloads

#: Fixed-batch pretraining of a catalogue model for chapter 4's lifecycle (sequence, batch in tokens).
LIFECYCLE_SEQ_LEN = 8192
LIFECYCLE_GLOBAL_BATCH_TOKENS = 16 * 2**20


@functools.lru_cache(maxsize=64)
def _deadline(active_params: float, accelerator: str, precision: str, total_params: float, tokens: float,
              days: float, seq_len: int) -> training.Deadline:
    model = architecture.from_total_active(total_params, active_params)
    return training.gpus_for_deadline(model, accelerator, precision, tokens, days, seq_len)


def training_gpus(active_params: float, accelerator: str, precision: str | None = None) -> training.Deadline:
    """Chapter 2's :func:`training.gpus_for_deadline` for the 10T workload on ``accelerator`` (cached).

    ``precision`` defaults to the workload's.
    """
    w = workloads.training()
    return _deadline(float(active_params), accelerator, precision or w.precision, float(w.total_params),
                     float(w.tokens), float(w.days), int(w.seq_len))


def training_gpu_ratio(active_params: float, precision: str | None = None
                       ) -> tuple[float, training.Deadline, training.Deadline]:
    """``(reference GPUs / candidate GPUs, reference deadline, candidate deadline)`` for the 10T workload.

    The accelerators are the workload's. NaN (not an error) when the candidate cannot meet the
    deadline; +inf when only the reference cannot (no number of its racks up to chapter 2's search
    limit trains in time).
    """
    w = workloads.training()
    ref = training_gpus(active_params, w.reference_accelerator, precision)
    cand = training_gpus(active_params, w.candidate_accelerator, precision)
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
