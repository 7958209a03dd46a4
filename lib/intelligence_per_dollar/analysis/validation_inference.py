"""Validation of the serving model against measured runs (``data/runs/inference_runs.csv``).

Each case is a measured serving throughput, prefill rate or single (grouped) GEMM time with its
citation (:func:`intelligence_per_dollar.sources.runs.inference_runs`). :func:`predict` runs the
same case through :func:`intelligence_per_dollar.model.inference.estimate` (or, for a GEMM, the
same roofline curve the serving model uses); :func:`validation_table` lists every case with its
signed error ``predicted / measured - 1``; :func:`validation_summary` gives the error per group.

**Validation notes.** Our own H200 measurements (dense decode and prefill, grouped GEMMs, whole MoE
decode steps at batch 1-512 that run 1.7-4.5x slower than their byte roofline) are within a few
per cent (MoE decode median 4%, max 10%; the grouped-GEMM constants come from a kernel profile of
the same run, so that group checks the decomposition, while the kernel floor was set on the dense
step only). Over all 207 cases the median |error| is ~13% (grouped expert GEMMs near their ridge point take
DeepGEMM's published efficiency, ``grouped_gemm_overlap_norm``; the two SGLang GB200 prefill instances that ran
with expert weights in Grace memory are predicted with host offload, :mod:`serving_offload`; capacity is the
driver's device memory, 6-8% above the datasheet, which raised the max-load batches and with them the MoE
over-prediction below). **Known gaps**: MoE serving at max load
(TensorRT-LLM Qwen3-235B, DeepSeek-R1, SGLang large-EP decode) is still over-predicted by up to
~2x at short ISL/OSL (+33-64% at 1000/1000 for Qwen3-235B on Blackwell and DeepSeek-R1 on H200; group
medians 11-14%) and Blackwell FP4 dense Llama-70B by 20-26%; the error shrinks as ISL or OSL grows. At max load the step is
compute- and attention-bound, where the kernel floor and the weight-stream efficiency matter
little. Not modelled and could explain the rest: attention-DP imbalance of whole-prompt prefill (no
chunked prefill in trtllm-bench), the compute efficiency of grouped GEMMs with ragged groups
(measured here only on the memory roof), sustained NVFP4 clocks under the power cap, and
trtllm-bench's own max-batch heuristic. Offline benchmarks with a ``requests`` column (TensorRT-LLM's
perf-overview datasets, the DeepSeek-R1 blog commands) are timed as the finite runs they are (ramp,
batch, drain: :mod:`intelligence_per_dollar.model.serving_benchmarks`), which removes most of the
over-prediction of MoE runs whose dataset is not much larger than one batch. Runs that set
``--max_batch_size`` / ``--max_num_tokens`` (the DeepSeek-R1 blog) carry them in optional columns. What is
left is GPU time, not scheduling: at the blog's batches the measured iteration (output tokens/s per GPU over
sequences per rank) is 1.5-2.5x the modelled one, and the same large-batch MoE gap shows in Qwen3-30B-A3B
on B200 (there hidden because the host time binds).
MLPerf's DeepSeek-R1 rows carry their dataset's output-length spread (``output_tokens_cv`` 1.114 at the 20,000-token
cap, from the per-sample reference lengths in ``data/workloads/lengths/``): a full batch holds long reasoning outputs
in proportion to their length (:mod:`serving_lengths`), which took those runs from +104-152% (Offline) to +25-65%.
NVFP4 expert GEMMs run at the FP8 tensor rate (``grouped_fp4_speedup``: published fused NVFP4 MoE kernels on B200
and B300 reach ~3 PFLOP/s, the FP8 burst rate of both), which took the stated cases' median from 13.1% to 10.7%.
On Blackwell the same fused kernels stream the touched experts at 0.69-0.71 of datasheet HBM at decode sizes
(``grouped_gemm_hbm_efficiency`` 1.1 there, FlashInfer PR 5301), and NVIDIA's NVFP4 MoE checkpoints keep attention in
the release precision (FP8 for DeepSeek-R1, BF16 otherwise: :func:`serving_context.attention_weight_precision`), which
together moved the DeepSeek-R1 1k/32k cells from -32% / -24% (B200 / GB200) to -20% / -17% and the 1k/1k ones from
-3% to +2% to +3% to +6%.
Flash attention runs at its head dimension's rate with the softmax (SFU exp) share of each generation (FlashAttention-3
Figs 5-6 on Hopper, NVIDIA's Blackwell Ultra softmax blog, NVIDIA's SM100 kernels at 0.49 of peak fwd+bwd) and
forward-only kernels faster than fwd+bwd: MLA's absorbed decode is within 6% of FlashMLA's 660 TFLOP/s on H800, the
32k-token prefill cells on Blackwell moved toward their measurements, and the DeepSeek-R1 Server runs (p99 limits)
further over. Serving engines' one-shot all-reduce brought SGLang's batch-1 GPT-OSS decode from -32% / -42% to
-16% / -35% (set 8 of data/runs/HELD_OUT.md). SemiAnalysis InferenceX's DeepSeek-R1 points at 16-128 users (set 9)
run 13-32% faster than predicted although the expert GEMMs agree with published fused-MoE kernel timings at those
sizes (SGLang PRs 11816 and 11730): moderate-batch MoE decode is slower in the model than in current engines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis import outliers
from intelligence_per_dollar.model import efficiency, inference, peaks, serving_context, serving_slo
from intelligence_per_dollar.sources import hardware, runs

__all__ = ["predict", "predict_as_user", "predict_as_user_with_requests", "is_max_load", "is_paced", "PACED_SHARE",
           "validation_table", "user_table", "user_error_by_run_length", "operating_point_table", "speculative_table",
           "validation_summary", "beyond_factor"]


def _predict_gemm(case: dict, scenario: str) -> float:
    """A single measured (grouped) GEMM through the same curve as the serving model (one fixed shape, so its rows
    pad to the next whole tile: ``dense_tile_rows``, smaller autotuned tiles for fewer rows).

    m = ``concurrency`` rows (tokens per expert for a grouped GEMM), n = ``d_ff``, k = ``d_model``,
    ``experts`` > 0: that many equal GEMMs in one batched kernel (``torch.bmm``), each reading its
    own weights, so few tokens per expert fall on the memory roof (the weight re-read per expert).
    These are eager PyTorch timings of back-to-back calls: a kernel shorter than the host's
    dispatch time (``eager_dispatch_s`` in ``data/assumptions/inference.csv``) is timed at the
    dispatch rate, so the prediction is ``max(kernel, dispatch)``. CUDA-graph serving does not pay
    it, and :func:`inference.evaluate` never adds it.
    """
    acc = hardware.get(case["accelerator"])
    ceil = efficiency.ceilings(acc, scenario)
    m, n, k = case["concurrency"], case["model"]["d_ff"], case["model"]["d_model"]
    groups = max(case["model"]["experts"], 1)
    p = case["precision"]
    t = float(efficiency.gemm_time_s(m, n, k, peak_flop_per_s=peaks.dense_flop_per_s(acc, p),
                                     hbm_bytes_per_s=acc.hbm_bytes_per_s, ceil=ceil, precision=p,
                                     operand_bytes=hardware.BYTES_PER_ELEMENT[p], output_bytes=2.0, groups=groups,
                                     m_tile=serving_context.assumed("dense_tile_rows", scenario), small_tiles=True))
    return max(t, serving_context.assumed("eager_dispatch_s", scenario))


def _engine_kwargs(case: dict, scenario: str) -> dict:
    """The keyword arguments of :func:`inference.estimate` / ``frontier`` a case states (KV precision, mode,
    overlap, implementation, scheduler, its limits and its KV block policy, speculative decoding, the spread of its
    output lengths)."""
    return dict(kv_precision=case["kv_precision"], mode=case["mode"], scenario=scenario,
                comm_overlap=case["comm_overlap"], implementation=case["implementation"],
                scheduler=case.get("scheduler") or "physics", max_batch_size=case.get("max_batch_size"),
                max_num_tokens=case.get("max_num_tokens"), kv_allocation=case.get("kv_allocation"),
                speculative_tokens=case.get("speculative_tokens") or 0, accepted_tokens=case.get("accepted_tokens"),
                **_length_kwargs(case))


def _length_kwargs(case: dict) -> dict:
    """``output_tokens_cv`` / ``output_tokens_max`` / ``output_dataset`` of a case's dataset (0 / None / None: one
    output length)."""
    return dict(output_tokens_cv=case.get("output_tokens_cv") or 0.0, output_tokens_max=case.get("output_tokens_max"),
                output_dataset=case.get("output_dataset"))


#: A finite run whose requests arrive over more than this share of its measured length was held to its client's pace
#: (:func:`is_paced`): the load, not the hardware, set its throughput. Below it the arrivals are a burst the engine
#: queues at once (dstack's 1,000 requests at 1,000 per second in a 100-second run: 1%), a shift smaller than half
#: the model's median error.
PACED_SHARE = 0.05


def is_paced(case: dict) -> bool:
    """Whether a finite run's client held it to a pace (``request_rate_per_s``): its ``requests`` took
    ``requests / rate`` seconds to arrive, more than :data:`PACED_SHARE` of the run's measured length, ``requests x
    output_tokens`` over the measured output tokens/s of all its GPUs. Measured quantities only, no model output."""
    rate = case.get("request_rate_per_s")
    if not rate or case["unit"] != "output_tokens_per_s_per_gpu":
        return False
    run_s = case["requests"] * case["output_tokens"] / (case["measured"] * case["gpus"])
    return case["requests"] / rate > PACED_SHARE * run_s


def is_max_load(case: dict) -> bool:
    """Whether a case is an aggregated max-load throughput run (no stated concurrency, no latency limits, not held to
    its client's pace, :func:`is_paced`): the cases :func:`predict_as_user` reads. A stated arrival rate limits the
    load as a stated concurrency does; a run whose requests still arrive as a burst is max load."""
    return (case["unit"] == "output_tokens_per_s_per_gpu" and case["mode"] == "aggregated"
            and not case["concurrency"] and not runs.is_latency_limited(case) and not is_paced(case))


#: How a run held to latency limits is read: every such row of data/runs/inference_runs.csv is an MLPerf Inference
#: Server or Interactive run, whose queries arrive as a Poisson stream and whose limits bound the 99th percentile of
#: each query's TTFT and TPOT (MLPerf Inference rules; :mod:`serving_arrivals`). NVIDIA's harness, which every one of
#: them ran, sends each query to the engine instance with the fewest outstanding requests (:data:`SLO_DISPATCH`:
#: :func:`serving_arrivals.arrival_times`).
SLO_ARRIVALS, SLO_PERCENTILE, SLO_DISPATCH = "poisson", 0.99, "balanced"


def _predict_under_slo(case: dict, scenario: str) -> tuple[float, inference.Estimate]:
    """A run held to latency limits (``ttft_limit_s`` / ``tpot_limit_s``): the highest output rate that meets them
    under Poisson arrivals at the 99th percentile (:func:`serving_slo.best_under_slo`, :data:`SLO_ARRIVALS`), with the
    steady state at its layout and mean concurrency for the time and memory breakdown."""
    kw = _engine_kwargs(case, scenario)
    row = serving_slo.best_under_slo(case["model"], case["accelerator"], case["gpus"], case["precision"],
                                   case["input_tokens"], case["output_tokens"], max_tpot_s=case.get("tpot_limit_s"),
                                   max_ttft_s=case.get("ttft_limit_s"), parallelism=case["parallelism"] or None,
                                   arrivals=SLO_ARRIVALS, percentile=SLO_PERCENTILE, dispatch=SLO_DISPATCH, **kw)
    layout = {k: int(row[k]) for k in inference.PARALLELISM_KEYS}
    share = float(row["offload"])                 # the row's own host-offload share, held fixed
    conc = max(float(np.round(row["concurrency"])), float(row["replicas"] * row["dp"] * row["pp"]))
    e = inference.estimate(case["model"], case["accelerator"], case["gpus"], case["precision"], case["input_tokens"],
                           case["output_tokens"], conc, layout, weight_offload=share if share > 0 else False, **kw)
    return float(row["output_tokens_per_s_per_gpu"]), e


def predict(case: dict, scenario: str = "central") -> tuple[float, inference.Estimate | None]:
    """The model's prediction for one case, in the case's unit. A run held to latency limits is read at the
    best point that meets them (:func:`_predict_under_slo`); others at their stated concurrency or max load."""
    if case["unit"] == "gemm_s":
        return _predict_gemm(case, scenario), None
    if runs.is_latency_limited(case):
        return _predict_under_slo(case, scenario)
    e = inference.estimate(case["model"], case["accelerator"], case["gpus"], case["precision"], case["input_tokens"],
                           case["output_tokens"], case["concurrency"], case["parallelism"] or None,
                           requests=case.get("requests"), request_rate_per_s=case.get("request_rate_per_s"),
                           **_engine_kwargs(case, scenario))
    if case["unit"] == "input_tokens_per_s_per_gpu":
        return e.input_tokens_per_s_per_gpu, e
    return e.output_tokens_per_s_per_gpu, e


def validation_table(scenario: str = "central") -> pd.DataFrame:
    """case, group, model, accelerator, citation, unit, measured, predicted, error (signed fraction),
    parallelism, concurrency, refused, latency_limited (held to TTFT/TPOT limits): one row per case of
    ``data/runs/inference_runs.csv``. A case the model refuses (weights or KV cache that do not fit, even with the
    host offload :mod:`serving_offload` allows) keeps NaN prediction and error and the reason under ``refused``."""
    recs = []
    for case in runs.inference_runs():
        try:
            pred, e = predict(case, scenario)
        except ValueError as exc:
            recs.append({"case": case["id"], "group": case["group"], "model": case["model_name"],
                         "accelerator": case["accelerator"], "citation": case["citation"], "unit": case["unit"],
                         "measured": case["measured"], "predicted": float("nan"), "error": float("nan"),
                         "parallelism": {}, "concurrency": case["concurrency"], "refused": str(exc),
                         "latency_limited": runs.is_latency_limited(case)})
            continue
        recs.append({"case": case["id"], "group": case["group"], "model": case["model_name"],
                     "accelerator": case["accelerator"], "citation": case["citation"], "unit": case["unit"],
                     "measured": case["measured"], "predicted": pred, "error": pred / case["measured"] - 1.0,
                     "parallelism": dict(e.parallelism) if e else {},
                     "concurrency": e.concurrency if e else case["concurrency"], "refused": "",
                     "latency_limited": runs.is_latency_limited(case)})
    return pd.DataFrame.from_records(recs)


def predict_as_user(case: dict, scenario: str = "central") -> float:
    """A max-load case predicted as a user calls the model: :func:`inference.frontier` with the
    case's model, accelerator, GPU count, precision and lengths and every other argument at its
    default (layouts searched, the default KV precision, the engine-default batch limits, steady
    state rather than the benchmark's finite dataset), taking the largest output tokens/s per GPU. The lengths
    include how the dataset's output lengths vary (``output_tokens_cv``, ``output_tokens_max``, or the dataset's own
    per-request lengths, ``output_dataset``) where the case states it."""
    f = inference.frontier(case["model"], case["accelerator"], case["gpus"], case["precision"], case["input_tokens"],
                           case["output_tokens"], mode=case["mode"], scenario=scenario, **_length_kwargs(case))
    return float(f["output_tokens_per_s_per_gpu"].max())


def predict_as_user_with_requests(case: dict, scenario: str = "central") -> float:
    """A max-load case of a finite benchmark (its ``requests`` stated) predicted as a user who also states the request
    count: :func:`inference.estimate` with the case's model, accelerator, GPU count, precision, lengths,
    ``requests`` and the rate they arrive at where the run states one (``request_rate_per_s``), every other argument
    at its default (layouts searched, the run's ramp, full batch and drain timed by :mod:`serving_benchmarks`). NaN
    for a case without a request count."""
    if not case.get("requests"):
        return float("nan")
    e = inference.estimate(case["model"], case["accelerator"], case["gpus"], case["precision"], case["input_tokens"],
                           case["output_tokens"], requests=case["requests"],
                           request_rate_per_s=case.get("request_rate_per_s"), mode=case["mode"], scenario=scenario,
                           **_length_kwargs(case))
    return float(e.output_tokens_per_s_per_gpu)


def user_table(scenario: str = "central") -> pd.DataFrame:
    """case, group, model, accelerator, measured, predicted, error, refused for every aggregated
    max-load case (no concurrency stated, output tokens/s) predicted by :func:`predict_as_user`; ``requests`` (the
    benchmark's request count, NaN for a steady-state run), ``predicted_with_requests`` / ``error_with_requests``
    (:func:`predict_as_user_with_requests`)."""
    recs = []
    for case in runs.inference_runs():
        if not is_max_load(case):
            continue
        rec = {"case": case["id"], "group": case["group"], "model": case["model_name"],
               "accelerator": case["accelerator"], "measured": case["measured"],
               "requests": float(case["requests"]) if case.get("requests") else float("nan")}
        try:
            pred = predict_as_user(case, scenario)
            with_req = predict_as_user_with_requests(case, scenario)
            recs.append({**rec, "predicted": pred, "error": pred / case["measured"] - 1.0, "refused": "",
                         "predicted_with_requests": with_req, "error_with_requests": with_req / case["measured"] - 1.0})
        except ValueError as exc:
            recs.append({**rec, "predicted": float("nan"), "error": float("nan"), "refused": str(exc),
                         "predicted_with_requests": float("nan"), "error_with_requests": float("nan")})
    return pd.DataFrame.from_records(recs)


def user_error_by_run_length(vu: pd.DataFrame) -> pd.DataFrame:
    """How far a user's call lands by how the benchmark ran (``vu``: :func:`user_table`): ``runs`` (steady: no request
    count stated, e.g. MLPerf Offline's long runs; finite: a stated count of requests queued at once), ``call``
    (the frontier's steady state, or :func:`predict_as_user_with_requests`), ``cases``, ``median`` / ``max`` |error|
    and ``signed_median``. Refused cases are left out."""
    finite = vu["requests"].notna()
    rows = []
    for runs_, call, err in (("steady", "frontier (steady state)", vu.loc[~finite, "error"]),
                             ("finite", "frontier (steady state)", vu.loc[finite, "error"]),
                             ("finite", "estimate(requests=N)", vu.loc[finite, "error_with_requests"])):
        e = err.dropna()
        rows.append({"runs": runs_, "call": call, "cases": int(e.size),
                     "median": float(e.abs().median()) if e.size else float("nan"),
                     "max": float(e.abs().max()) if e.size else float("nan"),
                     "signed_median": float(e.median()) if e.size else float("nan")})
    return pd.DataFrame(rows)


def operating_point_table(scenario: str = "central") -> pd.DataFrame:
    """The model's iteration at a latency-bounded run's measured load (``data/runs/mlperf_operating_points.csv``,
    :func:`runs.operating_points`): case, scenario, model, accelerator, gpus, layout, in_flight_per_gpu (Little's law,
    completed samples/s x mean latency, per GPU), measured_tpot_s (the log's mean time per output token),
    predicted_step_s (the steady state of :func:`inference.estimate` at that concurrency and the run's layout, with
    the template case's precision, lengths and engine limits), error (predicted / measured - 1; negative: the model's
    iteration is too short) and ``refused``: the model's reason where the measured load does not fit its memory model
    (NaN prediction). It checks the iteration physics apart from the latency-percentile search :func:`predict` runs
    for these rows."""
    recs = []
    for op in runs.operating_points():
        c = op["template"]
        layout = {"tp": op["tp"], "dp": op["dp"]}
        reps = op["gpus"] // (op["tp"] * op["dp"])
        shape = f"tp {op['tp']} x dp {op['dp']}" + (f" x {reps} replicas" if reps > 1 else "")
        rec = {"case": op["id"], "scenario": op["scenario"], "model": c["model_name"], "accelerator": op["accelerator"],
               "gpus": op["gpus"], "layout": shape,
               "in_flight_per_gpu": op["in_flight"] / op["gpus"], "measured_tpot_s": op["mean_tpot_s"]}
        try:
            e = inference.estimate(c["model"], op["accelerator"], op["gpus"], c["precision"], c["input_tokens"],
                                   c["output_tokens"], op["in_flight"], layout, **_engine_kwargs(c, scenario))
        except ValueError as exc:
            recs.append({**rec, "predicted_step_s": float("nan"), "error": float("nan"), "refused": str(exc)})
            continue
        recs.append({**rec, "predicted_step_s": e.step_time_s, "error": e.step_time_s / op["mean_tpot_s"] - 1.0,
                     "refused": ""})
    return pd.DataFrame.from_records(recs)


#: Columns of :func:`speculative_table`.
SPECULATIVE_COLUMNS = ("case", "accelerator", "speculative_tokens", "accepted_tokens", "measured", "predicted", "error",
                       "measured_speedup", "predicted_speedup", "speedup_error")


def speculative_table(vt: pd.DataFrame) -> pd.DataFrame:
    """The validation cases that ran speculative decoding (``speculative_tokens`` stated) and, where the same source
    measured it beside them, the same run without drafts (same group, model, accelerator, GPUs, lengths, concurrency
    and latency limits, ``speculative_tokens`` 0: TensorRT-LLM tech blog 1's MTP table), read from the validation
    table ``vt`` (:func:`validation_table`). Columns: case, accelerator, speculative_tokens, accepted_tokens (what the
    model used: the case's, or the measured MTP default, :func:`serving_context.speculation`), measured, predicted,
    error, and for a drafted case with a no-draft twin its ``measured_speedup`` / ``predicted_speedup`` over that twin
    (the acceptance is an input, so the speedup checks what verifying and drafting cost) and ``speedup_error``."""
    cases = {c["id"]: c for c in runs.inference_runs()}

    def key(c):
        return (c["group"], c["model_name"], c["accelerator"], c["gpus"], c["input_tokens"], c["output_tokens"],
                c["concurrency"], c.get("ttft_limit_s"), c.get("tpot_limit_s"))

    drafted = [c for c in cases.values() if c["speculative_tokens"]]
    twins = {key(c): c["id"] for c in cases.values() if not c["speculative_tokens"]}
    keep = [c["id"] for c in drafted] + sorted({twins[key(c)] for c in drafted if key(c) in twins})
    t = vt[vt["case"].isin(keep)].set_index("case")
    rows = []
    for cid in keep:
        if cid not in t.index:
            continue
        c, r = cases[cid], t.loc[cid]
        k = c["speculative_tokens"]
        rec = {"case": cid, "accelerator": c["accelerator"], "speculative_tokens": k,
               "accepted_tokens": serving_context.speculation(k, c["accepted_tokens"])[1], "measured": r["measured"],
               "predicted": r["predicted"], "error": r["error"], "measured_speedup": np.nan,
               "predicted_speedup": np.nan, "speedup_error": np.nan}
        twin = twins.get(key(c)) if k else None
        if twin in t.index:
            rec["measured_speedup"] = r["measured"] / t.loc[twin, "measured"]
            rec["predicted_speedup"] = r["predicted"] / t.loc[twin, "predicted"]
            rec["speedup_error"] = rec["predicted_speedup"] / rec["measured_speedup"] - 1.0
        rows.append(rec)
    return pd.DataFrame(rows, columns=SPECULATIVE_COLUMNS).sort_values(["speculative_tokens", "case"],
                                                                       ignore_index=True)


def validation_summary(table: pd.DataFrame | None = None) -> pd.DataFrame:
    """count (predicted cases), mean, median and max |error| per group and over all cases;
    refused cases are left out of the statistics."""
    t = validation_table() if table is None else table
    a = t.assign(abs_error=t["error"].abs())
    g = a.groupby("group")["abs_error"].agg(["count", "mean", "median", "max"])
    g.loc["all"] = [a["abs_error"].count(), a["abs_error"].mean(), a["abs_error"].median(), a["abs_error"].max()]
    return g


def beyond_factor(vt: pd.DataFrame, vu: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The serving cases off by more than :data:`outliers.FACTOR` at their stated layouts (``vt``,
    :func:`validation_table`) and as a user calls the model (``vu``, :func:`user_table`), each with the evidence the
    measured data gives (:func:`outliers.beyond_factor_table`; the same workload is the same model on as many GPUs of
    the same accelerator at the same precision, lengths, latency limits, concurrency and request count)."""
    cases = runs.inference_runs()
    return {"at the stated layouts": outliers.beyond_factor_table(vt, cases, outliers.serving_workload_key),
            "as a user": outliers.beyond_factor_table(vu, cases, outliers.serving_workload_key)}
