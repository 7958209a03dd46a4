"""Named workloads: ``data/workloads/workloads.csv`` -> validated, typed, frozen records.

One definition of each workload the book prices, shared by the chapters' parameter cells (their
literal defaults equal these; a test checks), the explore panels, the scenarios and the claims
ledger:

* :func:`training` -- NVIDIA's 10T-parameter / 100T-token / 30-day pretraining target (chapter 2).
* :func:`rl` -- chapter 3's RL step: policy, fleet, rollout mix, sandboxes, algorithm.
* :func:`serving` -- the chapter 4 / ledger serving mix whose tokens are priced.

The file is long format (``workload, field, value, source_url, date_read, kind, used, note``, read
with :func:`io.read_long_catalogue`); the ``workload_type`` field says which record a workload is.
Every problem raises :class:`io.DataError` (a ``ValueError``) naming the file, row and field.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Mapping

from intelligence_per_dollar.sources import hardware, io, models

__all__ = ["TrainingWorkload", "RLWorkload", "ServingWorkload", "RL_ALGORITHMS", "SIZING_REGIMES", "WORKLOAD_TYPES",
           "training", "rl", "serving", "names", "provenance", "length_sample_names", "check_length_sample",
           "length_sample"]

#: Ways of sizing a training cluster for a deadline (the model's ``training.REGIMES``): a fixed
#: global batch, or a batch that grows with the cluster (how vendor sizing divides a FLOP budget).
SIZING_REGIMES = ("batch-limited", "throughput")
#: RL algorithms the RL step models (:mod:`post_training` prices their extra passes).
RL_ALGORITHMS = ("grpo", "ppo")
WORKLOAD_TYPES = ("training", "rl", "serving")


@dataclass(frozen=True)
class TrainingWorkload:
    """A pretraining run to price: model size, tokens, deadline, and the claim it tests."""

    name: str
    total_params: float
    tokens: float
    days: float
    seq_len: int
    precision: str
    reference_accelerator: str
    candidate_accelerator: str
    claimed_gpu_ratio: float
    claim_tolerance: float
    active_params_assumption: str
    claim_regime: str         # the sizing regime the claim is judged in (:data:`SIZING_REGIMES`)


@dataclass(frozen=True)
class RLWorkload:
    """One RL post-training step and its campaign (chapter 3)."""

    name: str
    policy: str
    accelerators: tuple[str, ...]
    fleet_gpus: int
    rollout_fraction: float
    rollout_precision: str
    trainer_precision: str
    prompts: int
    group_size: int
    input_tokens: int
    output_tokens_mean: float
    output_tokens_sigma: float
    max_output_tokens: int
    sandbox_cpu_s: float
    sandbox_cpus: int
    cpu_speed_factor: float
    vera_cpu_accelerators: tuple[str, ...]
    async_depth: int
    algorithm: str
    campaign_steps: int

    def step_kwargs(self) -> dict[str, object]:
        """The keyword arguments of :func:`post_training.rl_step` that the workload fixes."""
        return {k: getattr(self, k) for k in _STEP_FIELDS}

    def cpu_speed_factor_on(self, accelerator: str) -> float:
        """Sandbox CPU speed next to ``accelerator``: ``cpu_speed_factor`` where its host CPU is Vera, else 1."""
        return self.cpu_speed_factor if accelerator in self.vera_cpu_accelerators else 1.0


@dataclass(frozen=True)
class ServingWorkload:
    """The request mix whose output tokens chapter 4 and the ledger price."""

    name: str
    model: str
    precision: str
    input_tokens: int
    output_tokens: int
    pretraining_tokens: float  # tokens the served model was pretrained on (the lifecycle view amortises them)


_STEP_FIELDS = ("prompts", "group_size", "input_tokens", "output_tokens_mean", "output_tokens_sigma",
                "max_output_tokens", "sandbox_cpu_s", "sandbox_cpus", "algorithm", "async_depth",
                "rollout_precision", "trainer_precision")
_CLASSES = {"training": TrainingWorkload, "rl": RLWorkload, "serving": ServingWorkload}
_TEXT = {"workload_type", "precision", "reference_accelerator", "candidate_accelerator", "active_params_assumption",
         "claim_regime",
         "policy", "accelerators", "rollout_precision", "trainer_precision", "vera_cpu_accelerators", "algorithm",
         "model"}
_INT = {"seq_len", "fleet_gpus", "prompts", "group_size", "input_tokens", "max_output_tokens", "sandbox_cpus",
        "async_depth", "campaign_steps", "output_tokens"}


def _positive(v: float) -> bool:
    return v > 0


def _fraction(v: float) -> bool:
    return 0 < v < 1


def _count(v: float) -> bool:
    return v >= 0 and v == int(v)


_NUMERIC = {"total_params": _positive, "tokens": _positive, "pretraining_tokens": _positive, "days": _positive, "claimed_gpu_ratio": _positive,
            "claim_tolerance": _fraction, "rollout_fraction": _fraction, "output_tokens_mean": _positive,
            "output_tokens_sigma": lambda v: 0 <= v <= 3, "sandbox_cpu_s": lambda v: v >= 0,
            "cpu_speed_factor": _positive, **{f: _count for f in _INT}}


def _allowed(path, row: int, field: str, value: str, allowed) -> None:
    if value not in allowed:
        raise io.DataError(f"{path}, row {row}, column 'value': {field}={value!r} is not allowed; "
                           f"allowed: {', '.join(allowed)}")


def _typed(path, field: str, sv: io.SourcedValue):
    """One value converted to its record type and checked against the catalogues it names."""
    v = sv.value
    if field in _INT:
        return int(v)
    if field in ("accelerators", "vera_cpu_accelerators", "reference_accelerator", "candidate_accelerator"):
        ids = tuple(str(v).split())
        for a in ids:
            _allowed(path, sv.row, field, a, tuple(hardware.accelerators()))
        return ids if field in ("accelerators", "vera_cpu_accelerators") else ids[0]
    if field in ("precision", "rollout_precision", "trainer_precision"):
        _allowed(path, sv.row, field, v, hardware.PRECISIONS)
    elif field in ("policy", "model"):
        _allowed(path, sv.row, field, v, models.names())
    elif field == "algorithm":
        _allowed(path, sv.row, field, v, RL_ALGORITHMS)
    elif field == "claim_regime":
        _allowed(path, sv.row, field, v, SIZING_REGIMES)
    return v


def _record(path, name: str, fields: Mapping[str, list[io.SourcedValue]]):
    kind_sv = fields["workload_type"][0]
    _allowed(path, kind_sv.row, "workload_type", kind_sv.value, WORKLOAD_TYPES)
    cls = _CLASSES[kind_sv.value]
    wanted = [f.name for f in dataclasses.fields(cls) if f.name != "name"]
    missing = [f for f in wanted if f not in fields]
    extra = [f for f in fields if f not in wanted and f != "workload_type"]
    if missing or extra:
        rows = ", ".join(str(v[0].row) for v in fields.values())
        raise io.DataError(f"{path}, rows {rows}: {kind_sv.value} workload '{name}' "
                           + (f"lacks field(s) {', '.join(missing)}" if missing else
                              f"has field(s) {', '.join(extra)} that a {kind_sv.value} workload does not take"))
    return cls(name=name, **{f: _typed(path, f, fields[f][0]) for f in wanted})


@functools.lru_cache(maxsize=4)
def _catalogue(data_dir: str) -> tuple[Mapping[str, object], Mapping[str, Mapping[str, io.SourcedValue]]]:
    """(records, provenance) of every workload in ``data_dir``/workloads/workloads.csv."""
    path = io.data_path("workloads", "workloads.csv")
    raw = io.read_long_catalogue(path, "workload", _NUMERIC, _TEXT)
    records, prov = {}, {}
    for name, fields in raw.items():
        if "workload_type" not in fields:
            raise io.DataError(f"{path}: workload '{name}' lacks field workload_type "
                               f"(one of {', '.join(WORKLOAD_TYPES)})")
        records[name] = _record(path, name, fields)
        prov[name] = {f: v[0] for f, v in fields.items()}
    for name, rec in records.items():
        if isinstance(rec, RLWorkload) and rec.output_tokens_mean > rec.max_output_tokens:
            row = raw[name]["output_tokens_mean"][0].row
            raise io.DataError(f"{path}, row {row}, column 'value': output_tokens_mean={rec.output_tokens_mean!r} "
                               f"exceeds max_output_tokens={rec.max_output_tokens}")
    return records, prov


def _get(name: str, workload_type: str):
    records = _catalogue(str(io.data_dir()))[0]
    allowed = names(workload_type)
    if name not in allowed:
        raise ValueError(f"parameter workload={name!r} is not allowed; allowed: {', '.join(allowed)}")
    return records[name]


def names(workload_type: str | None = None) -> tuple[str, ...]:
    """Ids of the catalogued workloads (of one ``workload_type``: training, rl or serving), in file order."""
    if workload_type is not None and workload_type not in WORKLOAD_TYPES:
        raise ValueError(f"parameter workload_type={workload_type!r} is not allowed; "
                         f"allowed: {', '.join(WORKLOAD_TYPES)}")
    records = _catalogue(str(io.data_dir()))[0]
    return tuple(n for n, r in records.items()
                 if workload_type is None or isinstance(r, _CLASSES[workload_type]))


def training(name: str = "pretrain-10t") -> TrainingWorkload:
    """A pretraining workload (default: NVIDIA's 10T / 100T tokens / 30 days target)."""
    return _get(name, "training")


def rl(name: str = "rl-step") -> RLWorkload:
    """An RL post-training workload (default: chapter 3's step)."""
    return _get(name, "rl")


def serving(name: str = "agent-serving") -> ServingWorkload:
    """A serving workload (default: the chapter 4 / ledger mix)."""
    return _get(name, "serving")


def provenance(name: str) -> Mapping[str, io.SourcedValue]:
    """``{field: SourcedValue}`` (the used row of each field) of one workload."""
    prov = _catalogue(str(io.data_dir()))[1]
    if name not in prov:
        raise ValueError(f"parameter workload={name!r} is not allowed; allowed: {', '.join(prov)}")
    return dict(prov[name])


# ---------------------------------------------------------------------------------------------
# per-sample length files of public benchmark datasets (data/workloads/lengths/)
# ---------------------------------------------------------------------------------------------

def length_sample_names() -> tuple[str, ...]:
    """Datasets with a per-sample length file in ``data/workloads/lengths/`` (file stem)."""
    return tuple(sorted(p.stem for p in io.data_path("workloads", "lengths").glob("*.csv")))


@functools.lru_cache(maxsize=8)
def _length_sample(data_dir: str, name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    path = io.data_path("workloads", "lengths", f"{name}.csv")
    rows = io.read_rows(path, ("input_length", "output_length"))
    if not rows:
        raise io.DataError(f"{path}: no samples")
    ins = tuple(int(io.parse_float(path, r, "input_length", rec["input_length"], positive=True)) for r, rec in rows)
    outs = tuple(int(io.parse_float(path, r, "output_length", rec["output_length"], positive=True)) for r, rec in rows)
    return ins, outs


def check_length_sample(name, param: str = "dataset", optional: bool = False) -> str | None:
    """``name`` if it names a per-request length file in ``data/workloads/lengths/`` (None too when ``optional``);
    else a ``ValueError`` naming ``param``, the value and the files there."""
    if optional and name is None:
        return None
    allowed = length_sample_names()
    if not isinstance(name, str) or name not in allowed:
        opts = ("None, " if optional else "") + ", ".join(allowed)
        raise ValueError(f"{param}={name!r} must name a per-request length file in data/workloads/lengths/; "
                         f"allowed: {opts}")
    return name


def length_sample(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(input lengths, output lengths) in tokens, one per sample, of a dataset in ``data/workloads/lengths/``
    (provenance in the file's header comments)."""
    return _length_sample(str(io.data_dir()), check_length_sample(name))
