"""Measured runs the models are validated against (``data/runs/*.csv``): typed, validated cases.

* :func:`inference_runs` -- serving throughput, prefill and GEMM timings
  (``inference_runs.csv``), checked by :mod:`intelligence_per_dollar.analysis.validation_inference`;
* :func:`training_runs` -- published and measured training iterations (``training_runs.csv``),
  checked by :mod:`intelligence_per_dollar.analysis.validation`;
* :func:`training_memory` -- the per-GPU memory the sources report for some of those runs
  (``training_memory.csv``), checked by :func:`intelligence_per_dollar.analysis.validation.memory_table`;
* :func:`weight_sync_runs` -- published weight-sync times (``weight_sync_runs.csv``), checked by
  :func:`intelligence_per_dollar.analysis.validation_weight_sync.weight_sync_table`;
* :func:`operating_points` -- MLPerf Server / Interactive runs' mean load and mean iteration read from their logs
  (``mlperf_operating_points.csv``), checked by
  :func:`intelligence_per_dollar.analysis.validation_inference.operating_point_table`;
* :func:`held_out_sets` -- the blind errors of the held-out sets (``held_out_sets.csv``, data/runs/HELD_OUT.md),
  compared with the same groups' error now by :func:`intelligence_per_dollar.analysis.validation.held_out_sets_table`.

Each case is a dict with its provenance; every problem raises :class:`io.DataError` naming file,
row and column. The names a column may take that the model defines (software stacks, sync
schedules) are passed in by the caller, so this layer does not import the model.
"""

from __future__ import annotations

import functools
from pathlib import Path

from intelligence_per_dollar.sources import io, workloads

__all__ = ["INFERENCE_UNITS", "TRAINING_UNITS", "FLOP_CONVENTIONS", "HELD_OUT_TABLES", "MEMORY_METRICS",
           "inference_runs", "training_runs", "training_memory", "weight_sync_runs", "held_out_sets", "operating_points", "is_latency_limited"]

# ---------------------------------------------------------------------------------------------
# inference (data/runs/inference_runs.csv)
# ---------------------------------------------------------------------------------------------

#: Units a measured serving case may be given in.
INFERENCE_UNITS = ("output_tokens_per_s_per_gpu", "input_tokens_per_s_per_gpu", "gemm_s")
_INF_MODEL_INT = ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab", "experts", "top_k", "expert_d_ff",
                  "shared_experts", "dense_layers", "head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim")
#: Optional model columns (absent or empty: the spec's default).
_INF_MODEL_OPTIONAL = ("local_attention_window", "local_attention_layers", "expert_weight_precision",
                       "release_precision")
_INF_COLUMNS = ("id", "group", "citation", "source_url", "date_read", "kind", "model_name", *_INF_MODEL_INT,
                "gated_ffn", "hardware", "gpus", "precision", "kv_precision", "mode", "input_tokens", "output_tokens",
                "tp", "dp", "ep", "concurrency", "comm_overlap", "implementation", "measured", "unit", "note")
#: Optional serving-run columns (engine, benchmark and workload details; absent or empty: the defaults).
_INF_OPTIONAL = (*_INF_MODEL_OPTIONAL, "scheduler", "requests", "max_batch_size", "max_num_tokens", "ttft_limit_s",
                 "tpot_limit_s", "output_tokens_cv", "output_tokens_max", "output_dataset", "kv_allocation",
                 "speculative_tokens", "accepted_tokens", "request_rate_per_s")
#: ``kv_allocation`` values (the model's ``serving_schedulers.KV_ALLOCATIONS``; a test keeps the two equal).
KV_ALLOCATIONS = ("reserve", "on-demand")


def _measured_provenance(path: Path, row: int, rec: dict) -> io.Provenance:
    prov = io.check_provenance(path, row, rec)
    if prov.kind != "measured":
        raise io.DataError(f"{path}, row {row}, column 'kind': validation cases must be 'measured'")
    return prov


def _positive_int(path: Path, row: int, rec: dict, column: str) -> int:
    return int(io.parse_float(path, row, column, rec[column], positive=True))


def _whole_count(path: Path, row: int, rec: dict, column: str) -> int:
    """A positive whole number (a count of GPUs), refused with the file, row and column otherwise."""
    v = io.parse_float(path, row, column, rec[column], positive=True, allow_zero=False)
    if v != int(v):
        raise io.DataError(f"{path}, row {row}, column '{column}': {rec[column]!r} is not a whole number of GPUs")
    return int(v)


def _kv_allocation(path: Path, row: int, rec: dict) -> str | None:
    """``kv_allocation``: empty (the scheduler's own) or one of :data:`KV_ALLOCATIONS`."""
    value = rec.get("kv_allocation") or None
    if value is not None and value not in KV_ALLOCATIONS:
        raise io.DataError(f"{path}, row {row}, column 'kv_allocation': '{value}' is not one of "
                           f"{', '.join(KV_ALLOCATIONS)} (or empty)")
    return value


def _output_dataset(path: Path, row: int, rec: dict) -> str | None:
    """``output_dataset``: empty, or a dataset with a per-request length file; it fixes the spread, so
    ``output_tokens_cv`` stays empty."""
    name = rec.get("output_dataset") or None
    if name is None:
        return None
    try:
        workloads.check_length_sample(name, "output_dataset")
    except ValueError as err:
        raise io.DataError(f"{path}, row {row}, column 'output_dataset': {err} (or empty)") from None
    if rec.get("output_tokens_cv"):
        raise io.DataError(f"{path}, row {row}, column 'output_tokens_cv': '{rec['output_tokens_cv']}' cannot go with "
                           f"output_dataset '{name}' (the dataset's own lengths fix the spread); allowed: empty")
    return name


def _inference_case(path: Path, row: int, rec: dict) -> dict:
    prov = _measured_provenance(path, row, rec)
    if rec["unit"] not in INFERENCE_UNITS:
        raise io.DataError(f"{path}, row {row}, column 'unit': '{rec['unit']}' not in {', '.join(INFERENCE_UNITS)}")
    model = {k: int(io.parse_float(path, row, k, rec[k] or "0", positive=True)) for k in _INF_MODEL_INT}
    model["gated_ffn"] = io.parse_bool(path, row, "gated_ffn", rec["gated_ffn"])
    for k in _INF_MODEL_OPTIONAL:     # optional columns: local attention, checkpoint expert precision
        if rec.get(k):
            model[k] = rec[k] if k.endswith("_precision") else int(io.parse_float(path, row, k, rec[k],
                                                                                          positive=True))
    par = {k: _positive_int(path, row, rec, k) for k in ("tp", "dp", "ep") if rec[k]}
    concurrency = (io.parse_float(path, row, "concurrency", rec["concurrency"], positive=True)
                   if rec["concurrency"] else None)
    return {"id": rec["id"], "group": rec["group"], "citation": rec["citation"], "provenance": prov,
            "model_name": rec["model_name"], "model": model, "accelerator": rec["hardware"],
            "gpus": _positive_int(path, row, rec, "gpus"),
            "precision": rec["precision"], "kv_precision": rec["kv_precision"] or None,
            "mode": rec["mode"] or "aggregated",
            "input_tokens": _positive_int(path, row, rec, "input_tokens"),
            "output_tokens": _positive_int(path, row, rec, "output_tokens"),
            "parallelism": par, "concurrency": concurrency,
            "comm_overlap": io.parse_bool(path, row, "comm_overlap", rec["comm_overlap"] or "false"),
            "implementation": rec["implementation"] or "engine",
            "scheduler": rec.get("scheduler") or "physics",
            # optional: requests of a finite offline benchmark's dataset (empty: the steady state) and the
            # scheduler limits the run set (empty: the engine's default or trtllm-bench's heuristic)
            **{k: _positive_int(path, row, rec, k) if rec.get(k) else None
               for k in ("requests", "max_batch_size", "max_num_tokens")},
            # optional: the rate at which a finite run's requests arrive (a Poisson stream, the serving benchmarks'
            # --request-rate; empty: all at once)
            "request_rate_per_s": _request_rate(path, row, rec),
            # optional: how the dataset's output lengths vary (coefficient of variation, cap; empty: one length)
            "output_tokens_cv": (io.parse_float(path, row, "output_tokens_cv", rec["output_tokens_cv"])
                                 if rec.get("output_tokens_cv") else 0.0),
            "output_tokens_max": _positive_int(path, row, rec, "output_tokens_max") if rec.get("output_tokens_max")
            else None,
            # optional: a dataset whose per-request lengths (data/workloads/lengths/) give the spread instead
            "output_dataset": _output_dataset(path, row, rec),
            # optional: when the engine takes KV blocks (reserve / on-demand; empty: the scheduler's own)
            "kv_allocation": _kv_allocation(path, row, rec),
            # optional: speculative decoding (draft tokens per iteration; the mean tokens a sequence emits per
            # iteration where the source states it; empty: none / the model's measured MTP acceptance)
            "speculative_tokens": (int(io.parse_float(path, row, "speculative_tokens", rec["speculative_tokens"],
                                                      positive=True)) if rec.get("speculative_tokens") else 0),
            "accepted_tokens": (io.parse_float(path, row, "accepted_tokens", rec["accepted_tokens"], positive=True)
                                if rec.get("accepted_tokens") else None),
            # optional: the latency limits a run was held to (MLPerf Server: p99 TTFT and TPOT; empty: max load)
            **{k: io.parse_float(path, row, k, rec[k], positive=True) if rec.get(k) else None
               for k in ("ttft_limit_s", "tpot_limit_s")},
            "measured": io.parse_float(path, row, "measured", rec["measured"], positive=True),
            "unit": rec["unit"], "note": rec["note"]}


def _request_rate(path: Path, row: int, rec: dict) -> float | None:
    """``request_rate_per_s``: empty (the run's requests all sent at once, or a steady state) or a positive rate,
    which only a finite run (``requests`` set) has."""
    if not rec.get("request_rate_per_s"):
        return None
    if not rec.get("requests"):
        raise io.DataError(f"{path}, row {row}, column 'request_rate_per_s': '{rec['request_rate_per_s']}' needs the "
                           f"finite run's request count; allowed: requests set, or request_rate_per_s empty")
    return io.parse_float(path, row, "request_rate_per_s", rec["request_rate_per_s"], positive=True,
                          allow_zero=False)


def is_latency_limited(case: dict) -> bool:
    """Whether a serving case was held to latency limits (``ttft_limit_s`` / ``tpot_limit_s``), not run at max load."""
    return bool(case.get("ttft_limit_s") or case.get("tpot_limit_s"))


def _check_latency_limits(path: Path, row: int, case: dict) -> dict:
    """A latency-limited run is an output-throughput run at a searched load: no stated concurrency or dataset."""
    if is_latency_limited(case):
        for col, bad in (("unit", case["unit"] != "output_tokens_per_s_per_gpu"), ("concurrency", case["concurrency"]),
                         ("requests", case["requests"])):
            if bad:
                raise io.DataError(f"{path}, row {row}, column '{col}': '{case[col]}' cannot go with ttft_limit_s / "
                                   f"tpot_limit_s (a latency-limited run is read at the best load that meets them); "
                                   f"allowed: unit output_tokens_per_s_per_gpu, concurrency and requests empty")
    return case


@functools.lru_cache(maxsize=4)
def _inference_runs(data_dir: str, path: str | None) -> tuple[dict, ...]:
    p = Path(path) if path else io.data_path("runs", "inference_runs.csv")
    return tuple(_check_latency_limits(p, row, _inference_case(p, row, rec)) for row, rec in io.read_rows(p, _INF_COLUMNS, _INF_OPTIONAL))


def inference_runs(path: str | Path | None = None) -> tuple[dict, ...]:
    """The measured inference cases, validated and typed (the accelerator id under ``accelerator``).

    ``path``: another file with the same columns (e.g. held-out runs); default ``data/runs/inference_runs.csv``.
    """
    return _inference_runs(str(io.data_dir()), str(path) if path else None)


# ---------------------------------------------------------------------------------------------
# training (data/runs/training_runs.csv)
# ---------------------------------------------------------------------------------------------

#: Units a measured training case may be given in.
TRAINING_UNITS = ("iteration_s", "tflops_per_gpu", "tokens_per_s_per_gpu")
#: FLOP-counting conventions of the sources (how their TFLOP/s per GPU were computed).
FLOP_CONVENTIONS = ("none", "narayanan-eq3")
_TR_MODEL_INT = ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab", "experts", "top_k", "expert_d_ff",
                 "shared_experts", "dense_layers", "head_dim", "q_lora_rank", "kv_lora_rank")
_TR_PAR_INT = ("tp", "pp", "dp", "cp", "ep", "microbatch", "interleave", "zero")
_TR_COLUMNS = ("id", "group", "citation", "source_url", "date_read", "kind", *_TR_MODEL_INT, "gated_ffn",
               "tied_embeddings", "hardware", "gpus", "precision", "seq_len", "global_batch_seqs", *_TR_PAR_INT,
               "recompute", "stack", "measured", "unit", "flop_convention", "note")
#: Optional training-run columns: a variant of the catalogue part and the cluster it ran on, and the length of the
#: documents packed into each sequence where attention is masked to each one (``training.estimate``'s
#: ``document_tokens``).
_TR_OPTIONAL = ("power_cap_w", "hbm_bytes", "hbm_bytes_per_s", "scaleup_domain_gpus", "scaleout_bytes_per_s",
                "document_tokens")


def _training_case(path: Path, row: int, rec: dict, stacks: tuple[str, ...]) -> dict:
    prov = _measured_provenance(path, row, rec)
    model = {k: _positive_int(path, row, rec, k) for k in _TR_MODEL_INT}
    model["gated_ffn"] = io.parse_bool(path, row, "gated_ffn", rec["gated_ffn"])
    model["tied_embeddings"] = io.parse_bool(path, row, "tied_embeddings", rec["tied_embeddings"])
    par = {k: _positive_int(path, row, rec, k) for k in _TR_PAR_INT if rec[k]}
    if rec["recompute"]:
        par["recompute"] = rec["recompute"]
    for col, allowed in (("unit", TRAINING_UNITS), ("flop_convention", FLOP_CONVENTIONS), ("stack", stacks)):
        if rec[col] not in allowed:
            raise io.DataError(f"{path}, row {row}, column '{col}': '{rec[col]}' not in {', '.join(allowed)}")
    return {"id": rec["id"], "group": rec["group"], "citation": rec["citation"], "provenance": prov,
            "model": model, "accelerator": rec["hardware"],
            "gpus": _positive_int(path, row, rec, "gpus"),
            "precision": rec["precision"],
            "seq_len": _positive_int(path, row, rec, "seq_len"),
            "global_batch_seqs": _positive_int(path, row, rec, "global_batch_seqs"),
            "parallelism": par, "stack": rec["stack"],
            "measured": io.parse_float(path, row, "measured", rec["measured"], positive=True),
            "unit": rec["unit"], "flop_convention": rec["flop_convention"], "note": rec["note"],
            # optional columns: the board power limit and HBM of a variant of the catalogue part, the cluster it ran
            # on where it differs from the catalogue's (GPUs per NVLink node, NIC bytes/s per GPU), and the packed
            # documents' length
            **{k: io.parse_float(path, row, k, rec[k], positive=True, allow_zero=False)
               for k in _TR_OPTIONAL if k != "scaleup_domain_gpus" and rec.get(k)},
            **({"scaleup_domain_gpus": _whole_count(path, row, rec, "scaleup_domain_gpus")}
               if rec.get("scaleup_domain_gpus") else {})}


@functools.lru_cache(maxsize=4)
def _training_runs(data_dir: str, stacks: tuple[str, ...], path: str | None) -> tuple[dict, ...]:
    p = Path(path) if path else io.data_path("runs", "training_runs.csv")
    return tuple(_training_case(p, row, rec, stacks) for row, rec in io.read_rows(p, _TR_COLUMNS, _TR_OPTIONAL))


def training_runs(stacks: tuple[str, ...], path: str | Path | None = None) -> tuple[dict, ...]:
    """The measured training cases, validated and typed; ``stack`` must be one of ``stacks``
    (the software stacks the caller models). The accelerator id is under ``accelerator``.
    ``path``: another file with the same columns (e.g. held-out runs); default ``data/runs/training_runs.csv``."""
    return _training_runs(str(io.data_dir()), tuple(stacks), str(path) if path else None)


# ---------------------------------------------------------------------------------------------
# measured memory of training runs (data/runs/training_memory.csv)
# ---------------------------------------------------------------------------------------------

#: What a source's per-GPU memory figure measures: PyTorch's peak allocated bytes
#: (``torch.cuda.max_memory_allocated``), the caching allocator's peak reserved bytes (``max_memory_reserved``:
#: allocated plus its cached free blocks), the device's used memory (nvidia-smi / NVML: reserved plus the CUDA
#: context and NCCL buffers), or not said.
MEMORY_METRICS = ("allocated", "reserved", "device_used", "unstated")
_MEM_COLUMNS = ("run_id", "memory_bytes", "metric", "source_url", "date_read", "kind", "note")


def _memory_case(path: Path, row: int, rec: dict) -> dict:
    prov = _measured_provenance(path, row, rec)
    if rec["metric"] not in MEMORY_METRICS:
        raise io.DataError(f"{path}, row {row}, column 'metric': '{rec['metric']}' not in {', '.join(MEMORY_METRICS)}")
    return {"run_id": rec["run_id"], "provenance": prov, "metric": rec["metric"], "note": rec["note"],
            "memory_bytes": io.parse_float(path, row, "memory_bytes", rec["memory_bytes"], positive=True)}


@functools.lru_cache(maxsize=4)
def _training_memory(data_dir: str, path: str | None) -> tuple[dict, ...]:
    p = Path(path) if path else io.data_path("runs", "training_memory.csv")
    cases = tuple(_memory_case(p, row, rec) for row, rec in io.read_rows(p, _MEM_COLUMNS))
    seen: set[str] = set()
    for c in cases:
        if c["run_id"] in seen:
            raise io.DataError(f"{p}: run_id '{c['run_id']}' appears twice (one measured memory per run)")
        seen.add(c["run_id"])
    return cases


def training_memory(path: str | Path | None = None) -> tuple[dict, ...]:
    """Per-GPU memory the sources report for runs of ``training_runs.csv`` (``run_id``), validated and typed:
    ``memory_bytes``, ``metric`` (one of :data:`MEMORY_METRICS`) and the provenance. ``path``: another file with the
    same columns; default ``data/runs/training_memory.csv``. That every ``run_id`` names a training run is checked
    where both are read (:func:`intelligence_per_dollar.analysis.validation.memory_table`)."""
    return _training_memory(str(io.data_dir()), str(path) if path else None)


# ---------------------------------------------------------------------------------------------
# weight sync (data/runs/weight_sync_runs.csv)
# ---------------------------------------------------------------------------------------------

_WS_COLUMNS = ("id", "group", "citation", "source_url", "date_read", "kind", "model_name", "params",
               "src_bytes_per_param", "dst_bytes_per_param", "senders", "receivers", "receiver_shard_gpus",
               "schedule", "link_bytes_per_s", "host_link_bytes_per_s", "measured_s", "note")
_WS_FLOAT = ("params", "src_bytes_per_param", "dst_bytes_per_param", "senders", "receivers", "receiver_shard_gpus",
             "link_bytes_per_s", "measured_s")


def _weight_sync_case(path: Path, row: int, rec: dict, schedules: tuple[str, ...]) -> dict:
    prov = io.check_provenance(path, row, rec)
    if rec["schedule"] not in schedules:
        raise io.DataError(f"{path}, row {row}, column 'schedule': '{rec['schedule']}' not in {', '.join(schedules)}")
    f = {k: io.parse_float(path, row, k, rec[k], positive=True) for k in _WS_FLOAT}
    host = io.parse_float(path, row, "host_link_bytes_per_s", rec["host_link_bytes_per_s"], positive=True) \
        if rec["host_link_bytes_per_s"] else None
    return {"id": rec["id"], "group": rec["group"], "citation": rec["citation"], "provenance": prov,
            "model_name": rec["model_name"], "schedule": rec["schedule"], "host_link_bytes_per_s": host,
            "note": rec["note"], **f}


@functools.lru_cache(maxsize=4)
def _weight_sync_runs(data_dir: str, schedules: tuple[str, ...]) -> tuple[dict, ...]:
    path = io.data_path("runs", "weight_sync_runs.csv")
    return tuple(_weight_sync_case(path, row, rec, schedules) for row, rec in io.read_rows(path, _WS_COLUMNS, ()))


def weight_sync_runs(schedules: tuple[str, ...]) -> tuple[dict, ...]:
    """The published weight-sync figures, validated and typed; ``schedule`` must be one of ``schedules``."""
    return _weight_sync_runs(str(io.data_dir()), tuple(schedules))


# ---------------------------------------------------------------------------------------------
# held-out sets (data/runs/held_out_sets.csv)
# ---------------------------------------------------------------------------------------------

#: The validation tables a held-out set's blind error refers to: training and serving cases at their stated layouts,
#: and max-load serving cases called as a user would (``inference.frontier`` with defaults).
HELD_OUT_TABLES = ("training", "serving", "serving-user")
_HO_COLUMNS = ("set", "table", "groups", "cases", "blind_median", "blind_max", "blind_commit", "source_url",
               "date_read", "kind", "note")


def _held_out_set(path: Path, row: int, rec: dict) -> dict:
    prov = io.check_provenance(path, row, rec)
    if rec["table"] not in HELD_OUT_TABLES:
        raise io.DataError(f"{path}, row {row}, column 'table': '{rec['table']}' not in {', '.join(HELD_OUT_TABLES)}")
    groups = tuple(rec["groups"].split())
    if not groups:
        raise io.DataError(f"{path}, row {row}, column 'groups': empty; expected group names or prefixes ending in *")
    median = io.parse_float(path, row, "blind_median", rec["blind_median"], positive=True)
    worst = io.parse_float(path, row, "blind_max", rec["blind_max"], positive=True)
    if worst < median:
        raise io.DataError(f"{path}, row {row}, column 'blind_max': {worst} is below blind_median {median}")
    return {"set": _positive_int(path, row, rec, "set"), "table": rec["table"], "groups": groups,
            "cases": _positive_int(path, row, rec, "cases"), "blind_median": median, "blind_max": worst,
            "blind_commit": rec["blind_commit"], "provenance": prov}


@functools.lru_cache(maxsize=4)
def _held_out_sets(data_dir: str) -> tuple[dict, ...]:
    path = io.data_path("runs", "held_out_sets.csv")
    return tuple(_held_out_set(path, row, rec) for row, rec in io.read_rows(path, _HO_COLUMNS, ()))


def held_out_sets() -> tuple[dict, ...]:
    """Each held-out set's blind error per validation table (``set``, ``table`` in :data:`HELD_OUT_TABLES`,
    ``groups`` (names; a trailing ``*`` matches a prefix), ``cases`` predicted then, ``blind_median`` /
    ``blind_max`` of |predicted / measured - 1|, ``blind_commit``), validated and typed."""
    return _held_out_sets(str(io.data_dir()))


# ---------------------------------------------------------------------------------------------
# operating points of latency-bounded runs (data/runs/mlperf_operating_points.csv)
# ---------------------------------------------------------------------------------------------

_OP_COLUMNS = ("id", "template_case", "scenario", "source_url", "date_read", "kind", "accelerator", "gpus", "tp",
               "dp", "samples_per_s", "mean_latency_s", "mean_tpot_s", "note")
#: MLPerf Inference scenarios an operating point comes from (Interactive: the Server scenario at tighter limits).
OPERATING_POINT_SCENARIOS = ("Server", "Interactive")


def _operating_point(path: Path, row: int, rec: dict, templates: dict) -> dict:
    prov = _measured_provenance(path, row, rec)
    if rec["template_case"] not in templates:
        raise io.DataError(f"{path}, row {row}, column 'template_case': '{rec['template_case']}' is not an id of "
                           f"data/runs/inference_runs.csv")
    if rec["scenario"] not in OPERATING_POINT_SCENARIOS:
        raise io.DataError(f"{path}, row {row}, column 'scenario': '{rec['scenario']}' not in "
                           f"{', '.join(OPERATING_POINT_SCENARIOS)}")
    gpus, tp, dp = (_whole_count(path, row, rec, c) for c in ("gpus", "tp", "dp"))
    if gpus % (tp * dp):
        raise io.DataError(f"{path}, row {row}, columns 'tp', 'dp': tp x dp = {tp * dp} must divide gpus={gpus}")
    rate, latency, tpot = (io.parse_float(path, row, c, rec[c], positive=True)
                           for c in ("samples_per_s", "mean_latency_s", "mean_tpot_s"))
    if tpot >= latency:
        raise io.DataError(f"{path}, row {row}, column 'mean_tpot_s': {tpot} s is not below the mean latency "
                           f"{latency} s of a query of many tokens")
    return {"id": rec["id"], "template": templates[rec["template_case"]], "scenario": rec["scenario"],
            "accelerator": rec["accelerator"],
            "gpus": gpus, "tp": tp, "dp": dp, "samples_per_s": rate, "mean_latency_s": latency,
            "mean_tpot_s": tpot, "in_flight": rate * latency, "provenance": prov}


@functools.lru_cache(maxsize=4)
def _operating_points(data_dir: str, path: str | None) -> tuple[dict, ...]:
    p = Path(path) if path else io.data_path("runs", "mlperf_operating_points.csv")
    templates = {c["id"]: c for c in inference_runs()}
    return tuple(_operating_point(p, row, rec, templates) for row, rec in io.read_rows(p, _OP_COLUMNS, ()))


def operating_points(path: str | Path | None = None) -> tuple[dict, ...]:
    """MLPerf Server / Interactive runs read at their mean load (``mlperf_operating_points.csv``): ``template``
    (the :func:`inference_runs` case of the same run or system and benchmark), ``scenario`` (Server or
    Interactive), ``accelerator``, ``gpus``, ``tp``,
    ``dp``, ``samples_per_s``, ``mean_latency_s``, ``mean_tpot_s`` and ``in_flight`` (Little's law: completed
    samples/s x mean latency, the mean number of queries in flight over all GPUs), validated and typed."""
    return _operating_points(str(io.data_dir()), None if path is None else str(path))
