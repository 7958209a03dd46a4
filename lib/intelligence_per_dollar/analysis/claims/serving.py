"""Serving cost from chapter 3's throughput-interactivity frontier: USD per million output tokens
of a catalogue model on a system, at an interactivity, and the reference/candidate comparison
behind NVIDIA's "up to 10x lower cost per million tokens".

The model is a name of ``data/models/models.csv`` (:func:`models.get`); precision and tokens per
request come from the serving workload (:func:`workloads.serving`); the system's GPUs serve it.
"""

from __future__ import annotations

import functools
from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, REFERENCE_SYSTEM
from intelligence_per_dollar.model import economics, inference
from intelligence_per_dollar.sources import hardware, models, runs, workloads

#: The model of NVIDIA's serving comparison (blog section 7, Fig. 39: Kimi-K2-Thinking, a 1T MoE).
BLOG_SERVING_MODEL = workloads.serving("blog-serving").model


@functools.lru_cache(maxsize=32)
def _frontier(model: str, accelerator: str, gpus: int, precision: str, input_tokens: int,
              output_tokens: int) -> pd.DataFrame:
    return inference.frontier(models.get(model), accelerator, gpus, precision, input_tokens, output_tokens)


def serving_frontier(model: str, system: str) -> pd.DataFrame:
    """Chapter 3's :func:`inference.frontier` for catalogue ``model`` on all GPUs of ``system`` (cached).

    Columns include ``output_tokens_per_s_per_gpu`` and ``tokens_per_s_per_user``.
    """
    w = workloads.serving()
    system_spec = hardware.get_system(system)
    return _frontier(model, system_spec.accelerator, int(system_spec.gpus), w.precision, int(w.input_tokens),
                     int(w.output_tokens)).copy()


def throughput_at_interactivity(frontier: pd.DataFrame, tokens_per_s_per_user) -> np.ndarray:
    """Best output tokens/s per GPU among frontier points at least as interactive as asked (0 if none).

    Vectorised over ``tokens_per_s_per_user``.
    """
    u = np.asarray(frontier["tokens_per_s_per_user"], dtype=float)
    t = np.asarray(frontier["output_tokens_per_s_per_gpu"], dtype=float)
    want = economics._arr("tokens_per_s_per_user", tokens_per_s_per_user, low=0.0)
    ok = u[None, :] >= want.reshape(-1, 1)
    best = np.where(ok, t[None, :], 0.0).max(axis=1)
    return best.reshape(want.shape)


def usd_per_mtok(usd_per_gpu_hour, output_tokens_per_s_per_gpu) -> np.ndarray:
    """Chapter 3's :func:`inference.usd_per_mtok`, with +inf where a system has no throughput."""
    tps = np.asarray(output_tokens_per_s_per_gpu, dtype=float)
    shape = np.broadcast_shapes(tps.shape, np.shape(usd_per_gpu_hour))
    c = np.broadcast_to(np.asarray(usd_per_gpu_hour, dtype=float), shape)
    tps = np.broadcast_to(tps, shape)
    ok = tps > 0
    return np.where(ok, inference.usd_per_mtok(np.where(ok, tps, 1.0), c), np.inf)


def serving_usd_per_mtok(values: Mapping[str, object], model: str, system: str) -> np.ndarray:
    """USD per million output tokens of ``model`` on ``system`` at ``values``' interactivity (vectorised).

    Where the system cannot reach that interactivity (the asked tokens/s per user lie beyond its
    frontier), tokens are priced at its most interactive point: the agent is served as fast as the
    system can, not refused.
    """
    fr = serving_frontier(model, system)
    asked = np.asarray(values["serving_interactivity_tokens_per_s_per_user"], dtype=float)
    tps = throughput_at_interactivity(fr, np.minimum(asked, float(fr["tokens_per_s_per_user"].max())))
    return usd_per_mtok(economics.system_usd_per_gpu_hour(values, system), tps)


def serving_cost_ratio_curve(values: Mapping[str, object], model: str = BLOG_SERVING_MODEL, *,
                             reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM,
                             interactivity=None) -> pd.DataFrame:
    """USD per million output tokens on both systems across interactivity levels (long table).

    Cost per Mtok = :func:`usd_per_mtok` of each system's USD/GPU-hour (central ``values``) and its
    frontier throughput at that interactivity; ``interactivity`` defaults to 40 levels up to the
    highest both systems reach.
    """
    fr = {s: serving_frontier(model, s) for s in (reference, candidate)}
    if interactivity is None:
        hi = float(min(f["tokens_per_s_per_user"].max() for f in fr.values()))
        interactivity = np.geomspace(max(1.0, hi / 100), hi, 40)
    x = np.asarray(interactivity, dtype=float)
    rows = []
    for system, f in fr.items():
        c = float(economics.system_usd_per_gpu_hour(values, system))
        tps = throughput_at_interactivity(f, x)
        rows.append(pd.DataFrame({"system": system, "tokens_per_s_per_user": x, "output_tokens_per_s_per_gpu": tps,
                                  "usd_per_gpu_hour": c, "usd_per_mtok": usd_per_mtok(c, tps)}))
    return pd.concat(rows, ignore_index=True)


def serving_throughput_ratio(values: Mapping[str, object], model: str = BLOG_SERVING_MODEL, *,
                             reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM) -> float:
    """Candidate over reference output tokens/s per GPU at ``values``' interactivity (+inf if the reference has none)."""
    u = float(np.asarray(values["serving_interactivity_tokens_per_s_per_user"]).ravel()[0])
    ref = float(throughput_at_interactivity(serving_frontier(model, reference), u))
    cand = float(throughput_at_interactivity(serving_frontier(model, candidate), u))
    return cand / ref if ref > 0 else float("inf")


#: MLPerf Inference v6.1's closed division holds the one published measurement of a Vera Rubin NVL72 rack beside GB200
#: and GB300 NVL72 racks: NVIDIA's own DeepSeek-R1 cells of the same round, benchmark and harness (``data/runs/
#: inference_runs.csv``, this group; set 38 of ``data/runs/HELD_OUT.md``).
MLPERF_RACK_GROUP = "heldout38-mlperf61-nvidia"
#: The MLPerf scenario of a DeepSeek-R1 cell by its p99 TPOT limit (MLPerf Inference rules: Server 80 ms,
#: Interactive 15 ms; Offline has none).
INTERACTIVE_TPOT_S = 0.03


def _scenario(case: dict) -> str:
    if not case.get("tpot_limit_s"):
        return "Offline"
    return "Interactive" if case["tpot_limit_s"] <= INTERACTIVE_TPOT_S else "Server"


def mlperf_rack_comparison(values: Mapping[str, object], *, reference: str = REFERENCE_SYSTEM,
                           candidate: str = CANDIDATE_SYSTEM, model: str = "DeepSeek-R1") -> pd.DataFrame:
    """Measured output tokens/s per GPU of ``model`` on whole racks of the ``reference`` and ``candidate`` systems
    in NVIDIA's MLPerf Inference v6.1 submissions (:data:`MLPERF_RACK_GROUP`), one row per scenario both ran:
    each system's tokens/s per GPU and per GPU watt (the catalogue's ``power_w``), its USD per million output tokens
    at the system's USD per GPU-hour under ``values`` (:func:`economics.system_usd_per_gpu_hour`), and the candidate
    over the reference for each (``throughput_ratio``, ``per_watt_ratio``, ``cost_ratio`` = reference cost / candidate
    cost, the form of NVIDIA's "x lower cost per million tokens"). ``speculative_tokens`` says which cells state drafts
    (the rest may have run some the stored files do not state)."""
    rows = {}
    for system in (reference, candidate):
        spec = hardware.get_system(system)
        acc = hardware.get(spec.accelerator)
        cost = float(economics.system_usd_per_gpu_hour(values, system))
        for c in runs.inference_runs():
            if (c["group"] == MLPERF_RACK_GROUP and c["model_name"] == model and c["accelerator"] == spec.accelerator
                    and c["gpus"] == int(spec.gpus)):
                rows.setdefault(_scenario(c), {})[system] = {
                    "tps": c["measured"], "per_w": c["measured"] / acc.power_w, "usd_per_mtok": float(
                        usd_per_mtok(cost, c["measured"])), "drafts": c["speculative_tokens"]}
    out = []
    for scenario in ("Offline", "Server", "Interactive"):
        got = rows.get(scenario, {})
        if len(got) < 2:
            continue
        r, k = got[reference], got[candidate]
        out.append({"scenario": scenario, f"{reference} tokens/s/GPU": r["tps"], f"{candidate} tokens/s/GPU": k["tps"],
                    "throughput_ratio": k["tps"] / r["tps"], "per_watt_ratio": k["per_w"] / r["per_w"],
                    f"{reference} USD/Mtok": r["usd_per_mtok"], f"{candidate} USD/Mtok": k["usd_per_mtok"],
                    "cost_ratio": r["usd_per_mtok"] / k["usd_per_mtok"],
                    "speculative_tokens": f"{r['drafts'] or 'none stated'} / {k['drafts'] or 'none stated'}"})
    return pd.DataFrame(out)
