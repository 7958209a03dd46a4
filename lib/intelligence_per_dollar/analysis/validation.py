"""Validation of the training model against measured runs (``data/runs/training_runs.csv``).

Each row is one measured case with its citation, the source's FLOP convention and the unit of
the measured quantity. :func:`training_table` predicts each case with
:func:`intelligence_per_dollar.model.training.estimate` (parallelism cells the source gives are fixed;
empty cells are searched) and converts the prediction to the source's convention:

* ``iteration_s``: seconds per iteration, compared directly.
* ``tflops_per_gpu`` with ``narayanan-eq3``: the paper's per-iteration count
  ``F = 96 B s l h^2 (1 + s/6h + V/16lh)`` (Narayanan et al. 2021, Eq. 3; it includes the
  forward pass that full recomputation repeats) divided by the predicted iteration time and GPUs.
* ``tokens_per_s_per_gpu``: tokens per second per GPU (no FLOP convention needed).

``error`` is ``predicted / measured - 1`` (signed fraction).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import outliers
from intelligence_per_dollar.sources import hardware, models
from intelligence_per_dollar.sources import runs as run_files
from intelligence_per_dollar.model import architecture, training

from intelligence_per_dollar.analysis.validation_stacks import (AUTOMODEL_BF16, CORRECTED_STACKS,  # noqa: F401
                                                                MBRIDGE_PERF, MEGATRON_LM_2024, MEGATRON_LM_FA2,
                                                                STACK_FAMILIES, STACKS)


#: Accelerator generations of :func:`bias_table`, named by the narrowest format their tensor cores run natively.
GENERATIONS = (("fp4", "Blackwell or later (FP4)"), ("fp8", "Hopper (FP8)"), ("bf16", "Ampere (BF16)"))


def generation(acc: hardware.Accelerator) -> str:
    """The accelerator's generation label (:data:`GENERATIONS`): the first format of FP4, FP8, BF16 it supports."""
    for precision, label in GENERATIONS:
        if acc.supports(precision):
            return label
    raise ValueError(f"accelerator {acc.id!r} runs none of {', '.join(p for p, _ in GENERATIONS)} natively")


def runs() -> tuple[dict, ...]:
    """The validation cases, validated and typed (loaded by :func:`sources.runs.training_runs`)."""
    return run_files.training_runs(tuple(STACKS))


def narayanan_flops_per_iteration(batch_seqs: float, seq_len: float, layers: float, d_model: float,
                                  vocab: float) -> float:
    """Narayanan et al. 2021, Eq. 3: ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` (with recompute)."""
    B, s, l, h, V = batch_seqs, seq_len, layers, d_model, vocab
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h))


#: Row columns that replace the catalogue accelerator's fields (:func:`accelerator`).
ACCELERATOR_OVERRIDES = ("hbm_bytes", "hbm_bytes_per_s", "scaleup_domain_gpus", "scaleout_bytes_per_s")


def accelerator(case: dict) -> hardware.Accelerator:
    """The case's catalogue accelerator, with the HBM capacity and bandwidth of the variant that
    ran where the row gives them (``hbm_bytes``, ``hbm_bytes_per_s``; e.g. torchtitan's Grand Teton
    H100s: 96 GB HBM2e at 2.4 TB/s instead of the catalogue H100-SXM's 80 GB HBM3 at 3.35 TB/s; the row's
    ``hbm_bytes`` is then the capacity, not the catalogue part's driver-reported total), and
    the cluster it ran on where that differs from the catalogue system: GPUs per NVLink node
    (``scaleup_domain_gpus``; e.g. 4-GPU H200 nodes where the catalogue H200 sits in 8-GPU HGX boards)
    and scale-out NIC bandwidth per GPU, one direction (``scaleout_bytes_per_s``; e.g. IBM's A100 nodes
    with one 400 Gb/s link per 8 GPUs: 6.25e9 instead of 25e9)."""
    acc = hardware.get(case["accelerator"])
    over = {k: case[k] for k in ACCELERATOR_OVERRIDES if k in case}
    if "hbm_bytes" in over:
        # the variant's capacity: the catalogue part's driver-reported total (device_memory_bytes, which capacity
        # models read first) describes the catalogue part, not this one
        over["device_memory_bytes"] = None
    return replace(acc, **over)


def predict(case: dict, scenario: str = "central") -> tuple[float, training.Estimate]:
    """The model's prediction for one case, in the case's unit and FLOP convention."""
    est = training.estimate(model=case["model"], accelerator=accelerator(case), gpus=case["gpus"],
                            precision=case["precision"], seq_len=case["seq_len"],
                            global_batch_tokens=case["global_batch_seqs"] * case["seq_len"],
                            parallelism=case["parallelism"], stack=STACKS[case["stack"]], scenario=scenario,
                            power_cap_w=case.get("power_cap_w"), document_tokens=case.get("document_tokens"))
    if case["unit"] == "iteration_s":
        return est.step_time_s, est
    if case["unit"] == "tokens_per_s_per_gpu":
        return est.tokens_per_s_per_gpu, est
    m = case["model"]
    if case["flop_convention"] == "narayanan-eq3":
        f = narayanan_flops_per_iteration(case["global_batch_seqs"], case["seq_len"], m["layers"], m["d_model"],
                                          m["vocab"])
    else:
        f = est.model_flops_per_token * case["global_batch_seqs"] * case["seq_len"]
    return f / est.step_time_s / case["gpus"] / 1e12, est


def training_table(scenario: str = "central") -> pd.DataFrame:
    """case, group, family (the stack's framework family), architecture (dense / MoE), generation
    (:func:`generation`), citation, unit, measured, predicted, error (signed fraction), chosen parallelism,
    and ``refused``: the model's reason where it refuses a run that really ran (e.g. "does not fit
    in memory"; predicted and error are then NaN), else empty."""
    recs = []
    for case in runs():
        rec = {"case": case["id"], "group": case["group"], "family": STACK_FAMILIES[case["stack"]],
               "architecture": "MoE" if architecture.is_moe(models.spec(case["model"])) else "dense",
               "generation": generation(hardware.get(case["accelerator"])),
               "citation": case["citation"], "unit": case["unit"],
               "flop_convention": case["flop_convention"], "measured": case["measured"]}
        try:
            pred, est = predict(case, scenario)
        except ValueError as exc:
            recs.append({**rec, "predicted": float("nan"), "error": float("nan"), "mfu": float("nan"),
                         "parallelism": {}, "memory_fits": False, "refused": str(exc)})
            continue
        recs.append({**rec, "predicted": pred, "error": pred / case["measured"] - 1.0, "mfu": est.mfu,
                     "parallelism": dict(est.parallelism), "memory_fits": est.memory_fits, "refused": ""})
    return pd.DataFrame.from_records(recs)


def summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cases predicted, mean, median and max |error| per group (and over all cases), and the
    cases the model refused (``refused``)."""
    t = training_table() if table is None else table
    a = t.assign(abs_error=t["error"].abs())
    g = a.groupby("group")["abs_error"].agg(["count", "mean", "median", "max"])
    g["refused"] = a["abs_error"].isna().groupby(a["group"]).sum().astype(int)
    g.loc["all"] = [a["abs_error"].count(), a["abs_error"].mean(), a["abs_error"].median(), a["abs_error"].max(),
                    int(a["abs_error"].isna().sum())]
    return g


def speed_error(table: pd.DataFrame) -> pd.Series:
    """Signed error in speed: the model's throughput over the measured one, less 1 (positive: the model is
    optimistic). Throughput units (tokens/s, TFLOP/s per GPU) are ``predicted / measured - 1``; an iteration time
    inverts, ``measured / predicted - 1``. NaN where the model refused the case."""
    ratio = table["predicted"] / table["measured"]
    return pd.Series(np.where(table["unit"] == "iteration_s", 1.0 / ratio, ratio) - 1.0, index=table.index,
                     name="speed_error")


def bias_table(table: pd.DataFrame, within: float = 0.10) -> pd.DataFrame:
    """Where the model leans: per framework family, architecture and generation (``table``:
    :func:`training_table`), the cases predicted, the signed median of :func:`speed_error` (``lean``: positive means
    the model predicts the runs faster than they ran), the share of cases within ``within`` of the measured value
    (column ``share_within_10%`` at the default) and the median |error|. Refused cases are left out; rows by cases,
    most first."""
    if not 0.0 < within < 1.0:
        raise ValueError(f"within={within!r} is not allowed; allowed: a fraction between 0 and 1 (exclusive)")
    t = table.assign(speed_error=speed_error(table)).dropna(subset=["speed_error"])
    g = t.groupby(["family", "architecture", "generation"])
    out = pd.DataFrame({"cases": g.size(), "lean": g["speed_error"].median(),
                        f"share_within_{within:.0%}": g["error"].apply(lambda e: float((e.abs() <= within).mean())),
                        "median_abs_error": g["error"].apply(lambda e: float(e.abs().median()))})
    return out.reset_index().sort_values(["cases", "family"], ascending=[False, True]).reset_index(drop=True)


def beyond_factor(table: pd.DataFrame) -> pd.DataFrame:
    """The training cases of ``table`` (:func:`training_table`) off by more than :data:`outliers.FACTOR` in speed, each
    with the evidence the measured data gives (:func:`outliers.beyond_factor_table`: the same workload is the same
    model shape on as many GPUs of the same accelerator at the same precision and sequence length)."""
    return outliers.beyond_factor_table(table, runs(), outliers.training_workload_key, outliers.training_speed)


def in_groups(group, patterns) -> bool:
    """Whether a case's ``group`` is one of ``patterns`` (names; a trailing ``*`` matches a prefix)."""
    return any(group.startswith(p[:-1]) if p.endswith("*") else group == p for p in patterns)


def held_out_groups(groups, sets=None) -> tuple[str, ...]:
    """The groups among ``groups`` that a training held-out set names: runs predicted blind before they joined the
    table (``data/runs/HELD_OUT.md``). ``sets``: :func:`sources.runs.held_out_sets` rows (read from
    ``data/runs/held_out_sets.csv`` when None), whose ``groups`` patterns are the one list of them."""
    sets = run_files.held_out_sets() if sets is None else sets
    patterns = [s["groups"] for s in sets if s["table"] == "training"]
    return tuple(sorted({g for g in groups if any(in_groups(g, p) for p in patterns)}))


def held_out_sets_table(sets, tables) -> pd.DataFrame:
    """Each held-out set's blind error (``data/runs/held_out_sets.csv``) beside the same groups' error now.

    ``sets``: :func:`sources.runs.held_out_sets` rows; ``tables``: validation table per table name (``training``,
    ``serving``, ``serving-user``), each with ``group`` and ``error`` columns (NaN error: refused, not counted).
    Sets whose table is not given are left out. Columns: set, table, cases (blind), blind median / max,
    cases now, median / max now (|error|). A set whose cases have all left its table while its groups are still in
    another one given (a serving run no longer read as max load, so not in ``serving-user``) has 0 cases now and NaN
    errors; a set whose groups are in none of the tables given is refused (a misspelt pattern)."""
    all_groups = {g for t in tables.values() for g in t["group"]}
    recs = []
    for s in sets:
        t = tables.get(s["table"])
        if t is None:
            continue
        err = t.loc[[in_groups(g, s["groups"]) for g in t["group"]], "error"].abs().dropna()
        if err.empty and not any(in_groups(g, s["groups"]) for g in all_groups):
            raise ValueError(f"held-out set {s['set']} ({s['table']}): no case of groups {' '.join(s['groups'])} "
                             f"in the {s['table']} validation table")
        recs.append({"set": s["set"], "table": s["table"], "cases_blind": s["cases"],
                     "blind_median": s["blind_median"], "blind_max": s["blind_max"], "cases_now": len(err),
                     "median_now": float(err.median()) if len(err) else float("nan"),
                     "max_now": float(err.max()) if len(err) else float("nan")})
    return pd.DataFrame.from_records(recs, columns=["set", "table", "cases_blind", "blind_median", "blind_max",
                                                    "cases_now", "median_now", "max_now"])


def held_out_sets_now(tables) -> pd.DataFrame:
    """:func:`held_out_sets_table` of ``data/runs/held_out_sets.csv`` against ``tables`` (see there)."""
    return held_out_sets_table(run_files.held_out_sets(), tables)


#: Parallelism keys a run must state for its measured memory to be judged against the model's memory at that very
#: layout (:func:`memory_table`); a key left for the model to choose could pick another layout than the one measured.
MEMORY_LAYOUT_KEYS = ("tp", "pp", "dp", "microbatch", "recompute")


def memory_table(scenario: str = "central", memory=None) -> pd.DataFrame:
    """The per-GPU memory the sources report for training runs (``data/runs/training_memory.csv``) beside the
    memory model's at the run's stated layout: case, group, family, accelerator, metric (what the source's figure
    measures: ``sources.runs.MEMORY_METRICS``), measured_bytes, predicted_bytes (:attr:`training.Estimate.
    memory_per_gpu_bytes`, the model-state and activation bytes the run needs), the parts of the prediction
    (weights / gradients / optimizer / activations ``_bytes``), error (signed, predicted / measured - 1), ``layout_stated``
    (the run states every key of :data:`MEMORY_LAYOUT_KEYS`: only then is the prediction the measured layout's) and
    ``fits`` (the model puts the layout within the usable HBM). The allocator's reserved and the device's used
    memory exceed the bytes the run allocates (cached free blocks; the CUDA context and NCCL buffers), so an
    accurate model sits a few per cent under those metrics; each row's ``metric`` says which.

    ``memory``: memory cases (default :func:`sources.runs.training_memory`); a ``run_id`` naming no training run
    raises :class:`ValueError`."""
    cases = {c["id"]: c for c in runs()}
    recs = []
    for m in (run_files.training_memory() if memory is None else memory):
        case = cases.get(m["run_id"])
        if case is None:
            raise ValueError(f"training_memory run_id={m['run_id']!r} names no run of data/runs/training_runs.csv")
        _, est = predict(case, scenario)
        b = est.memory_breakdown_bytes
        recs.append({"case": case["id"], "group": case["group"], "family": STACK_FAMILIES[case["stack"]],
                     "accelerator": case["accelerator"], "metric": m["metric"],
                     "measured_bytes": m["memory_bytes"], "predicted_bytes": est.memory_per_gpu_bytes,
                     **{f"{k}_bytes": b[k] for k in ("weights", "gradients", "optimizer", "activations")},
                     "error": est.memory_per_gpu_bytes / m["memory_bytes"] - 1.0,
                     "layout_stated": all(k in case["parallelism"] for k in MEMORY_LAYOUT_KEYS),
                     "fits": bool(est.memory_fits)})
    return pd.DataFrame.from_records(recs)
