"""The claims ledger: every quantitative claim of the seed, checked by the book's own functions.

Nothing in the ledger is typed in. Each row's *claim* (the quote, its primary source, the number
it asserts and the rule that judges it) is a row of ``data/claims/claims.csv``; the *estimate*
is computed here by calling the chapters' functions (:mod:`.hardware`, :mod:`.training`,
:mod:`.inference`, :mod:`.post_training`, :mod:`.economics`), with an interval from
:mod:`.uncertainty` wherever an input has a low/central/high range; the *verdict* follows from
the estimate by the explicit rules of :func:`decide`. Change an assumption
(``ledger(assumption_overrides={"pue": 1.5})``) and the ledger changes with it.

Verdict rules (``rule`` column of the claims file; c = claimed value, t = tolerance, p5/p50/p95
the book's interval):

* ``at_least`` (the claim says the quantity is c or more): *supported* if p5 >= c(1-t);
  *contradicted* if p95 < c(1-t); otherwise *supported only if* the deciding assumption sits
  where the estimate reaches c.
* ``at_most``: *supported* if p95 <= c(1+t); *contradicted* if p5 > c(1+t); otherwise
  *supported only if* ...
* ``up_to`` ("up to c", a best case): judged on the best operating point: *supported* if its
  p50 >= c(1-t); *supported only if* if only p95 reaches it; *contradicted* if p95 < c(1-t).
* ``equals``: *supported* if every value of the interval is within t of c, else *contradicted*.
* ``headline``: a ratio of vendor headline figures. *Supported* if the catalogue's headline
  ratio is within t of c and the like-for-like (dense) ratio is too; *supported only if* the
  figures are read as headlines when the dense ratio differs; *contradicted* if the headline
  ratio itself differs.
* ``price_below``: the GPU saving is a procurement saving only if the rack costs less than the
  break-even price: *supported* if the analysts' high price < p5 of the break-even price;
  *contradicted* if their low price > p95; otherwise *supported only if* the rack costs less than
  the p50 break-even.
* ``unverifiable``: no primary source and nothing the book can measure: *cannot be checked*,
  whatever the estimate (which then shows what the claim would change).

A row whose chapter model is not available (e.g. chapter 3 not yet in the package) is also
*cannot be checked*, with the reason.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.model import economics, uncertainty
from intelligence_per_dollar.sources import hardware, io

VERDICTS = ("supported", "supported only if", "contradicted", "cannot be checked")
RULES = ("at_least", "at_most", "up_to", "equals", "headline", "price_below", "unverifiable")
#: Columns of :func:`ledger`, in order.
COLUMNS = ("id", "claim", "source", "claimed", "rule", "estimate", "p5", "p50", "p95", "unit", "interval", "verdict",
           "condition", "deciding_assumption", "section", "link", "detail")

#: Systems compared by the ledger: the claims are Vera Rubin NVL72 against GB200 NVL72.
REFERENCE_SYSTEM = "GB200-NVL72"
CANDIDATE_SYSTEM = "Vera-Rubin-NVL72"


class ChapterUnavailable(RuntimeError):
    """A chapter's model module is not (yet) part of the package."""


# --------------------------------------------------------------------------------------------
# claim definitions (data/claims/claims.csv)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """One quantitative claim as its source states it, and how the book judges it."""

    id: str
    claim: str
    claimed_value: float
    unit: str
    rule: str
    tolerance: float
    chapter: str
    section: str
    provenance: io.Provenance
    row: int = 0

    @property
    def link(self) -> str:
        """Relative link to the book's section that computes the estimate (Sphinx's anchor)."""
        return section_link(self.chapter, self.section)


def section_link(chapter: str, section: str = "") -> str:
    """``nbs/<chapter>.html#<anchor>``; the anchor is docutils' id of the heading text.

    Sphinx makes a section id with :func:`docutils.nodes.make_id` (lower case, runs of other
    characters to ``-``, leading digits and punctuation dropped), so the link is computed from
    the same heading text the notebook shows.
    """
    from docutils.nodes import make_id

    page = f"nbs/{chapter}.html"
    return f"{page}#{make_id(section)}" if section else page


def parse_claims(path: Path) -> Mapping[str, Claim]:
    """Read and validate a claims file; problems raise :class:`io.DataError` naming row and column."""
    path = Path(path)
    cols = ("id", "claim", "source_url", "date_read", "kind", "claimed_value", "unit", "rule", "tolerance",
            "chapter", "section", "note")
    out: dict[str, Claim] = {}
    for row, rec in io.read_rows(path, cols):
        cid = rec["id"]
        if not cid:
            raise io.DataError(f"{path}, row {row}, column 'id': empty")
        if cid in out:
            raise io.DataError(f"{path}, row {row}, column 'id': duplicate id '{cid}'")
        if not rec["claim"]:
            raise io.DataError(f"{path}, row {row}, column 'claim': empty")
        if rec["rule"] not in RULES:
            raise io.DataError(f"{path}, row {row}, column 'rule': '{rec['rule']}' is not one of {', '.join(RULES)}")
        value = io.parse_float(path, row, "claimed_value", rec["claimed_value"])
        tol = io.parse_float(path, row, "tolerance", rec["tolerance"], positive=True)
        prov = io.check_provenance(path, row, rec)
        out[cid] = Claim(cid, rec["claim"], value, rec["unit"], rec["rule"], tol, rec["chapter"], rec["section"],
                         prov, row)
    return MappingProxyType(out)


@functools.lru_cache(maxsize=4)
def _claims_cached(data_dir: str) -> Mapping[str, Claim]:
    return parse_claims(io.data_path("claims", "claims.csv"))


def claims() -> Mapping[str, Claim]:
    """The claims in ``data/claims/claims.csv`` keyed by id."""
    return _claims_cached(str(io.data_dir()))


def workload_assumptions() -> Mapping[str, economics.Assumption]:
    """``data/assumptions/workloads.csv``: what the claims leave unstated (active parameters ...)."""
    return economics.assumptions("workloads.csv")


def all_assumptions(overrides: Mapping[str, object] | None = None) -> dict[str, economics.Assumption]:
    """Every ranged input of the ledger and chapter 4 (economics, tasks, prices, workloads)."""
    recs = {**economics.book_assumptions(), **workload_assumptions()}
    return economics.with_overrides(recs, overrides)


# --------------------------------------------------------------------------------------------
# verdicts
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdict:
    verdict: str
    condition: str = ""


def decide(rule: str, claimed: float, p5: float, p50: float, p95: float, tolerance: float = 0.0, *,
           condition: str = "", dense_ratio: float | None = None, price_low: float | None = None,
           price_high: float | None = None) -> Verdict:
    """The verdict on a claim from the book's interval; the rules are in the module docstring.

    ``condition`` completes "supported only if ..." (the deciding assumption and where it must
    sit). ``dense_ratio`` is the like-for-like ratio for ``headline`` claims; ``price_low`` and
    ``price_high`` the analysts' price range for ``price_below`` claims.
    """
    if rule not in RULES:
        raise ValueError(f"parameter rule={rule!r} is not allowed; allowed: {', '.join(RULES)}")
    for name, v in (("p5", p5), ("p50", p50), ("p95", p95)):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return Verdict("cannot be checked", "the book has no estimate")
    if not p5 <= p50 <= p95:
        raise ValueError(f"interval p5={p5!r}, p50={p50!r}, p95={p95!r} is not ordered")
    t = float(tolerance)
    if rule == "unverifiable":
        return Verdict("cannot be checked", condition or "no primary source, and nothing the book can measure")
    if rule == "at_least":
        bar = claimed * (1 - t)
        if p5 >= bar:
            return Verdict("supported")
        if p95 < bar:
            return Verdict("contradicted")
        return Verdict("supported only if", condition)
    if rule == "at_most":
        bar = claimed * (1 + t)
        if p95 <= bar:
            return Verdict("supported")
        if p5 > bar:
            return Verdict("contradicted")
        return Verdict("supported only if", condition)
    if rule == "up_to":
        bar = claimed * (1 - t)
        if p50 >= bar:
            return Verdict("supported")
        if p95 >= bar:
            return Verdict("supported only if", condition)
        return Verdict("contradicted")
    if rule == "equals":
        ok = all(abs(v - claimed) <= t * abs(claimed) + 1e-12 for v in (p5, p50, p95))
        return Verdict("supported" if ok else "contradicted")
    if rule == "headline":
        if abs(p50 - claimed) > t * abs(claimed):
            return Verdict("contradicted")
        if dense_ratio is not None and abs(dense_ratio - claimed) > t * abs(claimed):
            return Verdict("supported only if", condition or
                           f"both figures are read as vendor headlines; like for like (dense) the ratio is "
                           f"{dense_ratio:.2f}x")
        return Verdict("supported")
    # price_below
    lo = claimed if price_low is None else price_low
    hi = claimed if price_high is None else price_high
    if hi < p5:
        return Verdict("supported")
    if lo > p95:
        return Verdict("contradicted")
    return Verdict("supported only if", condition or f"the rack costs less than ${p50 / 1e6:.1f}M")


# --------------------------------------------------------------------------------------------
# chapter 2: GPUs for the 10T target (cached: each search takes seconds)
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _deadline(active_params: float, accelerator: str, precision: str, total_params: float, tokens: float,
              days: float, seq_len: int):
    from intelligence_per_dollar.model import architecture, training

    model = architecture.from_total_active(total_params, active_params)
    return training.gpus_for_deadline(model=model, hardware=accelerator, precision=precision, tokens=tokens,
                                      days=days, seq_len=seq_len)


def training_gpus(active_params: float, system: str, *, precision: str = "fp4", total_params: float = 10e12,
                  tokens: float = 100e12, days: float = 30.0, seq_len: int = 8192):
    """Chapter 2's :func:`training.gpus_for_deadline` for the 10T target on ``system`` (cached)."""
    acc, _ = economics.platform(system)
    return _deadline(float(active_params), acc, precision, float(total_params), float(tokens), float(days),
                     int(seq_len))


def training_gpu_ratio(active_params: float, reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM,
                       **kw) -> tuple[float, object, object]:
    """``(reference GPUs / candidate GPUs, reference deadline, candidate deadline)`` for the 10T target.

    NaN (not an error) when the candidate cannot meet the deadline; +inf when only the
    reference cannot (no number of its racks up to chapter 2's search limit trains in time).
    """
    ref = training_gpus(active_params, reference, **kw)
    cand = training_gpus(active_params, candidate, **kw)
    if not cand.feasible:
        return float("nan"), ref, cand
    if not ref.feasible:       # only the candidate meets the deadline: no finite number of reference GPUs does
        return float("inf"), ref, cand
    return ref.gpus / cand.gpus, ref, cand


# --------------------------------------------------------------------------------------------
# chapter 3 adapters: serving and RL (the only places that know chapter 3's API)
# --------------------------------------------------------------------------------------------

def _module(name: str):
    import importlib

    try:
        return importlib.import_module(f"intelligence_per_dollar.model.{name}")
    except ModuleNotFoundError as ex:
        if ex.name and ex.name.endswith(name):
            raise ChapterUnavailable(f"chapter 3 module intelligence_per_dollar.{name} is not available yet") from None
        raise


#: Kimi-K2 (the blog's serving example, a 1T MoE), from its published config.json
#: (huggingface.co/moonshotai/Kimi-K2-Instruct): 61 layers, d_model 7168, 64 MLA heads,
#: 384 routed experts top-8 + 1 shared of width 2048, 1 dense layer (18432), vocab 163840.
KIMI_K2 = {"layers": 61, "d_model": 7168, "heads": 64, "kv_heads": 64, "d_ff": 18432, "vocab": 163840,
           "experts": 384, "top_k": 8, "expert_d_ff": 2048, "shared_experts": 1, "dense_layers": 1,
           "gated_ffn": True, "head_dim": 128, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64}


def serving_model(name: str):
    """A model for the serving examples: chapter 3's preset if it has one, else the built-in spec."""
    try:
        inf = _module("inference")
        presets = getattr(inf, "MODELS", None) or getattr(inf, "PRESETS", None)
        if presets and name in presets:
            return presets[name]
    except ChapterUnavailable:
        pass
    if name == "Kimi-K2":
        return dict(KIMI_K2)
    if name == "Nemotron-3-Ultra":
        from intelligence_per_dollar.model import architecture

        return architecture.from_total_active(550e9, 55e9, top_k=22)
    raise ValueError(f"parameter model={name!r} is not allowed; allowed: Kimi-K2, Nemotron-3-Ultra")


@functools.lru_cache(maxsize=32)
def _frontier(model_name: str, accelerator: str, gpus: int, precision: str, input_tokens: int,
              output_tokens: int) -> pd.DataFrame:
    inf = _module("inference")
    return inf.frontier(model=serving_model(model_name), hardware=accelerator, gpus=gpus, precision=precision,
                        input_tokens=input_tokens, output_tokens=output_tokens)


def serving_frontier(model: str, system: str, *, precision: str = "fp4", input_tokens: int = 2000,
                     output_tokens: int = 8000, gpus: int | None = None) -> pd.DataFrame:
    """Chapter 3's throughput-interactivity frontier for ``model`` on one ``system`` (cached).

    Columns include ``output_tokens_per_s_per_gpu`` and ``tokens_per_s_per_user``.
    """
    acc, n = economics.platform(system)
    return _frontier(model, acc, int(gpus or n), precision, int(input_tokens), int(output_tokens)).copy()


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


def usd_per_mtok(usd_per_gpu_hour_, output_tokens_per_s_per_gpu) -> np.ndarray:
    """Chapter 3's :func:`inference.usd_per_mtok`, with +inf where a platform has no throughput."""
    inf = _module("inference")
    tps = np.asarray(output_tokens_per_s_per_gpu, dtype=float)
    c = np.broadcast_to(np.asarray(usd_per_gpu_hour_, dtype=float), np.broadcast_shapes(tps.shape, np.shape(usd_per_gpu_hour_)))
    tps = np.broadcast_to(tps, c.shape)
    ok = tps > 0
    return np.where(ok, inf.usd_per_mtok(np.where(ok, tps, 1.0), c), np.inf)


def serving_cost_ratio_curve(values: Mapping[str, object], model: str = "Kimi-K2", *,
                             reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM,
                             precision: str = "fp4", input_tokens: int = 2000, output_tokens: int = 8000,
                             interactivity=None) -> pd.DataFrame:
    """USD per million output tokens on both systems, and their ratio, across interactivity levels.

    Cost per Mtok = :func:`usd_per_mtok` of each system's USD/GPU-hour (central
    ``values``) and its frontier throughput at that interactivity.
    """
    fr_ref = serving_frontier(model, reference, precision=precision, input_tokens=input_tokens,
                              output_tokens=output_tokens)
    fr_cand = serving_frontier(model, candidate, precision=precision, input_tokens=input_tokens,
                               output_tokens=output_tokens)
    if interactivity is None:
        hi = float(min(fr_ref["tokens_per_s_per_user"].max(), fr_cand["tokens_per_s_per_user"].max()))
        interactivity = np.geomspace(max(1.0, hi / 100), hi, 40)
    x = np.asarray(interactivity, dtype=float)
    rows = []
    for sys_, fr in ((reference, fr_ref), (candidate, fr_cand)):
        c = float(economics.platform_usd_per_gpu_hour(values, sys_))
        tps = throughput_at_interactivity(fr, x)
        rows.append(pd.DataFrame({"system": sys_, "tokens_per_s_per_user": x, "output_tokens_per_s_per_gpu": tps,
                                  "usd_per_gpu_hour": c, "usd_per_mtok": usd_per_mtok(c, tps)}))
    return pd.concat(rows, ignore_index=True)


def serving_usd_per_mtok(values: Mapping[str, object], model: str, system: str, *, precision: str = "fp4",
                         input_tokens: int = 2000, output_tokens: int = 8000) -> np.ndarray:
    """USD per million output tokens of ``model`` on ``system`` at ``values``' interactivity (vectorised)."""
    fr = serving_frontier(model, system, precision=precision, input_tokens=input_tokens, output_tokens=output_tokens)
    tps = throughput_at_interactivity(fr, values["serving_interactivity_tokens_per_s_per_user"])
    return usd_per_mtok(economics.platform_usd_per_gpu_hour(values, system), tps)


def weight_sync_s(efficiency: float | None = None, **kw) -> float:
    """Chapter 3's :func:`post_training.weight_sync_time_s` for Perplexity's published setup.

    Kimi-K2 (1T parameters) from 256 BF16 trainer GPUs to 128 FP8 rollout GPUs in replicas of 16,
    static point-to-point RDMA WRITE over each H100's 400 Gb/s NIC; ``efficiency`` defaults to
    chapter 3's central ``weight_sync_efficiency``. ``kw`` overrides any argument.
    """
    pt = _module("post_training")
    if efficiency is None:
        try:
            efficiency = pt.assumptions()["weight_sync_efficiency"].central
        except (io.DataError, KeyError):
            efficiency = 0.9
    args = dict(senders=256, receivers=128, receiver_shard_gpus=16,
                link_bytes_per_s=hardware.get("H100-SXM").scaleout_bytes_per_s or 50e9, efficiency=efficiency,
                src_bytes_per_param=2.0, dst_bytes_per_param=1.0, schedule="p2p")
    args.update(kw)
    return float(pt.weight_sync_time_s(kw.pop("params", 1.0e12), **{k: v for k, v in args.items() if k != "params"}))


def weight_sync_efficiency_range() -> tuple[float, float, float]:
    """(low, central, high) of chapter 3's achieved-NIC-bandwidth fraction for weight sync."""
    pt = _module("post_training")
    try:
        a = pt.assumptions()["weight_sync_efficiency"]
        return a.low, a.central, a.high
    except (io.DataError, KeyError):
        return 0.7, 0.9, 0.95


#: RL fleet used for the ledger's and chapter 4's RL comparisons: rollout and trainer GPUs (two racks).
RL_FLEET = (144, 144)


@functools.lru_cache(maxsize=32)
def _rl(model_name: str, accelerator: str, rollout: int, trainer: int, cpu_speed_factor: float):
    return _module("post_training").rl_step(serving_model(model_name), accelerator, rollout, trainer,
                                            cpu_speed_factor=cpu_speed_factor)


def rl_step(system: str, *, model: str = "Nemotron-3-Ultra", cpu_speed_factor: float = 1.0):
    """Chapter 3's :func:`post_training.rl_step` for ``model`` on ``system`` with :data:`RL_FLEET` (cached)."""
    acc, _ = economics.platform(system)
    return _rl(model, acc, RL_FLEET[0], RL_FLEET[1], float(cpu_speed_factor))


# --------------------------------------------------------------------------------------------
# chapter 4 headline functions (vectorised over a mapping of sampled values)
# --------------------------------------------------------------------------------------------

def swe_task_cost(values: Mapping[str, object], output_usd_per_mtok) -> economics.TaskCost:
    """A SWE-bench-Verified-like task: k steps, per-step p = resolve_rate**(1/k), tokens priced."""
    k = np.rint(np.asarray(values["swe_agent_steps"], dtype=float))
    p = economics.implied_step_success_probability(values["swe_bench_verified_resolve_rate"], k)
    return economics.agentic_task_cost(p, k, **task_kwargs(values, output_usd_per_mtok))


def engineer_usd_per_issue(values: Mapping[str, object]) -> np.ndarray:
    """Value of one resolved issue: an engineer's loaded cost per hour x hours per issue."""
    return (economics._arr("engineer_cost_usd_per_hour", values["engineer_cost_usd_per_hour"], low=0.0)
            * economics._arr("engineer_hours_per_issue", values["engineer_hours_per_issue"], low=0.0))


# --------------------------------------------------------------------------------------------
# chapter 4 tables (each headline with a Monte Carlo interval)
# --------------------------------------------------------------------------------------------

def mc_interval(fn: Callable, recs: Mapping[str, economics.Assumption], n: int, seed: int) -> dict:
    """``{p5, p50, p95, central, deciding}`` of a vectorised headline ``fn(values)``.

    ``deciding`` is the assumption with the largest tornado swing. Ranges spanning a decade or
    more are sampled log-uniformly (``uncertainty`` ``log_uniform="auto"``).
    """
    r, top = _mc(fn, recs, n, seed)
    return {"p5": r.p5, "p50": r.p50, "p95": r.p95, "central": float(np.asarray(fn(economics.centrals(recs)))),
            "deciding": top}


def gpu_hour_intervals(recs: Mapping[str, economics.Assumption], systems, n: int, seed: int) -> pd.DataFrame:
    """USD per utilised GPU-hour of each system from first principles, with its interval."""
    rows = []
    for sys_ in systems:
        d = mc_interval(lambda v, s_=sys_: economics.platform_usd_per_gpu_hour(v, s_), recs, n, seed)
        rows.append({"system": sys_, **d})
    return pd.DataFrame(rows)


def task_cost_by_platform(recs: Mapping[str, economics.Assumption], systems, n: int, seed: int,
                          model: str = "Nemotron-3-Ultra") -> pd.DataFrame:
    """Cost per resolved SWE task and successful tasks per USD for ``model`` served on each system.

    Token prices come from chapter 3's frontier at the assumed interactivity and each system's
    first-principles $/GPU-hour; systems whose frontier is unavailable are skipped.
    """
    rows = []
    for sys_ in systems:
        try:
            serving_frontier(model, sys_)
        except (ValueError, ChapterUnavailable):
            continue

        def cost(v, s_=sys_):
            return swe_task_cost(v, serving_usd_per_mtok(v, model, s_)).usd_per_success

        c = mc_interval(cost, recs, n, seed)
        price = float(serving_usd_per_mtok(economics.centrals(recs), model, sys_))
        rows.append({"system": sys_, "output_usd_per_mtok": price, **{f"usd_per_success_{k}": c[k] for k in
                                                                          ("p5", "p50", "p95", "central")},
                     "tasks_per_usd_p5": 1 / c["p95"], "tasks_per_usd_p50": 1 / c["p50"],
                     "tasks_per_usd_p95": 1 / c["p5"], "deciding": c["deciding"]})
    return pd.DataFrame(rows)


@functools.lru_cache(maxsize=16)
def _train_tput(model_name: str, accelerator: str, gpus: int, precision: str) -> float:
    from intelligence_per_dollar.model import training

    e = training.estimate(serving_model(model_name), accelerator, gpus, precision=precision, seq_len=8192,
                          global_batch_tokens=16 * 2**20)
    return float(e.tokens_per_s_per_gpu)


def training_tokens_per_s_per_gpu(model: str, system: str, *, racks: int = 8, precision: str = "bf16") -> float:
    """Chapter 2's training throughput per GPU of ``model`` on ``racks`` racks of ``system`` (cached)."""
    acc, g = economics.platform(system)
    return _train_tput(model, acc, int(racks * g), precision)


def serving_throughput_ratio(values: Mapping[str, object], model: str = "Kimi-K2", *,
                             reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM) -> float:
    """Candidate over reference output tokens/s per GPU at ``values``' interactivity (chapter 3)."""
    u = float(np.asarray(values["serving_interactivity_tokens_per_s_per_user"]).ravel()[0])
    ref = float(throughput_at_interactivity(serving_frontier(model, reference), u))
    cand = float(throughput_at_interactivity(serving_frontier(model, candidate), u))
    return cand / ref if ref > 0 else float("inf")


def rl_gpu_hour_ratio(values: Mapping[str, object], model: str = "Nemotron-3-Ultra", *,
                      reference: str = REFERENCE_SYSTEM, candidate: str = CANDIDATE_SYSTEM):
    """Reference over candidate GPU-hours of an RL campaign.

    With chapter 3's :mod:`.post_training`: the ratio of :func:`rl_step` times on the same fleet
    (:data:`RL_FLEET`). Fallback adapter while it is absent: an RL step is split into generation
    (share g = ``rl_generation_time_share`` of the reference's time, sped up by the serving
    throughput ratio) and training (the rest, sped up by chapter 2's training throughput ratio):
    ratio = 1 / (g / r_serve + (1 - g) / r_train), a harmonic mean weighted by time.
    """
    try:
        ref_step, cand_step = rl_step(reference, model=model), rl_step(candidate, model=model)
        return ref_step.step_time_s / cand_step.step_time_s   # same fleet on both: GPU-hours scale with step time
    except ChapterUnavailable:
        pass
    r_serve = serving_throughput_ratio(values, model, reference=reference, candidate=candidate)
    r_train = (training_tokens_per_s_per_gpu(model, candidate) / training_tokens_per_s_per_gpu(model, reference))
    g = np.asarray(values["rl_generation_time_share"], dtype=float)
    return 1.0 / (g / r_serve + (1.0 - g) / r_train)


def break_even_table(recs: Mapping[str, economics.Assumption], n: int, seed: int, *,
                     training_precision: str = "fp4") -> pd.DataFrame:
    """Vera Rubin NVL72 break-even rack price for three uses: the 10T training target, an RL
    campaign and serving, each with its GPU-hour ratio and a Monte Carlo interval."""
    cen = economics.centrals(recs)
    uses = []
    r_train, _, _ = training_gpu_ratio(cen["moe_10t_active_params"], precision=training_precision)
    uses.append(("10T training target (chapter 2)", r_train, "GB200 GPUs / VR GPUs for 100T tokens in 30 days"))
    try:
        r_serve = serving_throughput_ratio(cen)
        uses.append(("serving a 1T MoE (chapter 3)", r_serve,
                     f"output tokens/s per GPU at {cen['serving_interactivity_tokens_per_s_per_user']:g} tokens/s per user"))
    except ChapterUnavailable:
        r_serve = float("nan")
    try:
        r_rl = float(rl_gpu_hour_ratio(cen))
        uses.append(("RL campaign, 550B MoE (chapter 3)", r_rl,
                     f"RL step time on {RL_FLEET[0]} + {RL_FLEET[1]} GPUs"))
    except (ChapterUnavailable, ValueError):
        pass
    rows = []
    names = {k: a for k, a in recs.items() if not k.startswith(CANDIDATE_SYSTEM)}
    for use, ratio, how in uses:
        if not (math.isfinite(ratio) and ratio > 0):
            rows.append({"use": use, "gpu_hour_ratio": ratio, "p5": np.nan, "p50": np.nan, "p95": np.nan,
                         "central": np.nan, "deciding": "", "how": how + " (no finite ratio)"})
            continue
        d = mc_interval(lambda v, r_=ratio: economics.platform_break_even_price_usd(
            v, CANDIDATE_SYSTEM, REFERENCE_SYSTEM, r_), names, n, seed)
        rows.append({"use": use, "gpu_hour_ratio": ratio, **d, "how": how})
    return pd.DataFrame(rows)


def lifecycle_table(recs: Mapping[str, economics.Assumption], systems, n: int, seed: int,
                    model: str = "Nemotron-3-Ultra", pretraining_tokens: float = 20e12) -> pd.DataFrame:
    """Lifecycle USD per resolved task: serving + (pretraining + post-training) amortised over the
    successes of the model's life, per system (train, post-train and serve on the same platform).

    Pretraining GPU-hours = tokens / chapter 2's training tokens/s per GPU / 3600; post-training
    is ``post_training_over_pretraining_cost`` of that (fallback until chapter 3's campaign).
    """
    rows = []
    for sys_ in systems:
        try:
            serving_frontier(model, sys_)
            tput = training_tokens_per_s_per_gpu(model, sys_)
        except (ValueError, ChapterUnavailable):
            continue
        gpu_hours = pretraining_tokens / tput / economics.S_PER_HOUR

        def campaign(v, s_=sys_, h_=gpu_hours):
            return h_ * economics.platform_usd_per_gpu_hour(v, s_) * (1.0 + np.asarray(v["post_training_over_pretraining_cost"]))

        def per_success(v, s_=sys_):
            tc = swe_task_cost(v, serving_usd_per_mtok(v, model, s_))
            return economics.lifecycle_usd_per_success(tc.usd_per_success, campaign(v), v["lifetime_tasks_served"],
                                                       tc.success_probability)

        d = mc_interval(per_success, recs, n, seed)
        camp = mc_interval(campaign, recs, n, seed)
        rows.append({"system": sys_, "pretraining_gpu_hours": gpu_hours, "campaign_usd_p50": camp["p50"],
                     "campaign_usd_p5": camp["p5"], "campaign_usd_p95": camp["p95"], **d})
    return pd.DataFrame(rows)


def overrides(rack_prices_usd: Mapping[str, float] | None = None, **named) -> dict[str, object]:
    """Assumption overrides from chapter parameters: ``None`` keeps the data's range.

    ``rack_prices_usd`` maps a system (e.g. ``"Vera-Rubin-NVL72"``) to a fixed price; every other
    keyword is an assumption name (e.g. ``pue=1.3``).
    """
    out: dict[str, object] = {k: v for k, v in named.items() if v is not None}
    for system, price in dict(rack_prices_usd or {}).items():
        out[economics.price_key(system)] = price
    return out


def task_kwargs(values: Mapping[str, object], output_usd_per_mtok, **policy) -> dict:
    """Keyword arguments of :func:`economics.agentic_task_cost` from assumption values and a token price."""
    price = np.asarray(output_usd_per_mtok, dtype=float)
    kw = dict(prefix_tokens=values["prefix_tokens"], output_tokens_per_step=values["output_tokens_per_step"],
              tool_result_tokens_per_step=values["tool_result_tokens_per_step"],
              context_retention_fraction=values["context_retention_fraction"],
              input_usd_per_mtok=price * np.asarray(values["input_over_output_token_cost"], dtype=float),
              output_usd_per_mtok=price)
    kw.update(policy)
    return kw


def policy_table(values: Mapping[str, object], output_usd_per_mtok: float, p: float, k: int) -> pd.DataFrame:
    """The seed's five-tool-call workflow under each retry policy: success rate, cost per task and
    per success (central values)."""
    rows = []
    for label, pol in (("one attempt, failure found at the end", dict(retry_policy="none")),
                       ("one attempt, stop at the first failed step", dict(retry_policy="none", detect_failures=True)),
                       (f"retry the whole task (up to {int(values['max_task_attempts'])} attempts)",
                        dict(retry_policy="task", max_retries=int(values["max_task_attempts"]) - 1)),
                       (f"reliable rollback: retry a failed step (up to {int(values['max_step_retries'])} retries)",
                        dict(retry_policy="step", max_retries=int(values["max_step_retries"])))):
        tc = economics.agentic_task_cost(p, k, **task_kwargs(values, output_usd_per_mtok, **pol))
        rows.append({"policy": label, "success_probability": float(tc.success_probability),
                     "usd_per_task": float(tc.usd_per_task), "usd_per_success": float(tc.usd_per_success),
                     "tasks_per_usd": float(economics.successful_tasks_per_usd(tc.usd_per_success))})
    return pd.DataFrame(rows)


def task_cost_by_quality(recs: Mapping[str, economics.Assumption], system: str, resolve_rates, n: int, seed: int,
                         model: str = "Nemotron-3-Ultra") -> pd.DataFrame:
    """Cost per resolved SWE task on ``system`` at several resolve rates (model quality), with intervals."""
    rows = []
    for rate in resolve_rates:
        sub = economics.with_overrides(recs, {"swe_bench_verified_resolve_rate": float(rate)})
        d = mc_interval(lambda v: swe_task_cost(v, serving_usd_per_mtok(v, model, system)).usd_per_success,
                        sub, n, seed)
        rows.append({"resolve_rate": float(rate), **d})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# the ledger
# --------------------------------------------------------------------------------------------

@dataclass
class Row:
    claim: Claim
    p5: float = float("nan")
    p50: float = float("nan")
    p95: float = float("nan")
    interval: str = ""
    estimate: str = ""
    deciding: str = ""
    detail: str = ""
    verdict: Verdict = field(default_factory=lambda: Verdict("cannot be checked"))

    def as_dict(self) -> dict:
        c = self.claim
        return {"id": c.id, "claim": c.claim, "source": c.provenance.source_url, "claimed": c.claimed_value,
                "rule": c.rule, "estimate": self.estimate,
                "p5": self.p5, "p50": self.p50, "p95": self.p95, "unit": c.unit, "interval": self.interval,
                "verdict": self.verdict.verdict, "condition": self.verdict.condition,
                "deciding_assumption": self.deciding, "section": c.section, "link": c.link, "detail": self.detail}


def _fmt(v: float, unit: str = "") -> str:
    if v == math.inf:
        return "unbounded"
    if not math.isfinite(v):
        return "n/a"
    a = abs(v)
    if a >= 1e6 and "USD" in unit:
        return f"${v / 1e6:.2f}M"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def _interval_text(p5, p50, p95, unit="") -> str:
    return f"{_fmt(p50, unit)} ({_fmt(p5, unit)} to {_fmt(p95, unit)})"


def _mc(fn: Callable, recs, n: int, seed: int, names=None) -> tuple[uncertainty.Result, str]:
    """Monte Carlo interval of ``fn`` and the name of the assumption that swings it most."""
    r = uncertainty.run(fn, recs, n, seed, log_uniform="auto")
    tor = uncertainty.tornado(fn, recs, names=names)
    top = str(tor["name"].iloc[0]) if len(tor) else ""
    return r, top


@dataclass(frozen=True)
class Context:
    """Inputs shared by the rows of one ledger."""

    recs: Mapping[str, economics.Assumption]
    n: int
    seed: int
    training_precision: str
    training_range: bool


def _row_training(c: Claim, ctx: Context) -> Row:
    a = ctx.recs["moe_10t_active_params"]
    points = [a.low, a.central, a.high] if ctx.training_range else [a.central]
    ratios = {}
    for act in points:
        ratios[act], ref, cand = training_gpu_ratio(act, precision=ctx.training_precision)
    r_c, ref, cand = training_gpu_ratio(a.central, precision=ctx.training_precision)
    vals = np.array([v for v in ratios.values() if not math.isnan(v)])
    row = Row(c, deciding="moe_10t_active_params (NVIDIA states none)")
    if math.isnan(r_c) or vals.size == 0:
        row.detail = f"{ref.message}; {cand.message}"
        row.verdict = Verdict("cannot be checked", "Vera Rubin NVL72 cannot meet the deadline in chapter 2's model")
        return row
    row.p5, row.p50, row.p95 = float(vals.min()), float(r_c), float(vals.max())
    row.interval = (f"range over active parameters {a.low / 1e12:g}-{a.high / 1e12:g}T (central {a.central / 1e12:g}T)"
                    if ctx.training_range else "central assumptions only")
    row.estimate = _interval_text(row.p5, row.p50, row.p95) + "x"

    def side(d):
        if not d.feasible:
            return f"no feasible GPU count ({d.message})"
        return f"{d.gpus:,} GPUs ({d.racks} racks, MFU {d.estimate.mfu:.1%}, {d.days_needed:.1f} days)"
    row.detail = (f"{REFERENCE_SYSTEM}: {side(ref)}; {CANDIDATE_SYSTEM}: {side(cand)}; "
                  f"{ctx.training_precision}, 100T tokens, 30 days")
    # where does the ratio reach the claim?
    bar = c.claimed_value * (1 - c.tolerance)
    meets = [act for act, v in ratios.items() if math.isfinite(v) and v >= bar]
    cond = ""
    if meets:
        cond = (f"the model has {min(meets) / 1e12:g}-{max(meets) / 1e12:g}T active parameters "
                f"(the ratio reaches {c.claimed_value:g}x there)")
    row.verdict = decide(c.rule, c.claimed_value, row.p5, row.p50, row.p95, c.tolerance, condition=cond)
    return row


def _row_headline(c: Claim, ctx: Context, new: str, old: str) -> Row:
    rec = hardware.reconcile_headlines(new, old, "fp4")
    by = dict(zip(rec["comparison"], rec["ratio"]))
    head = float(by["headline vs headline"])
    dense = float(by["dense vs dense"]) if "dense vs dense" in by else None
    a, b = hardware.get(new), hardware.get(old)
    row = Row(c, p5=head, p50=head, p95=head, interval="catalogue values (no range)",
              deciding=f"what each headline counts: {new} '{a.headline_counts}', {old} '{b.headline_counts}'")
    row.estimate = f"{head:.2f}x headline; {dense:.2f}x dense" if dense else f"{head:.2f}x headline"
    row.detail = (f"{new} {a.headline_flop_per_s / 1e15:g} PF headline, {a.fp4_dense_flop_per_s / 1e15:g} PF dense; "
                  f"{old} {b.headline_flop_per_s / 1e15:g} PF headline, {b.fp4_dense_flop_per_s / 1e15:g} PF dense")
    row.verdict = decide(c.rule, c.claimed_value, head, head, head, c.tolerance, dense_ratio=dense)
    return row


def _row_rack(c: Claim, ctx: Context) -> Row:
    s = hardware.get_system(CANDIDATE_SYSTEM)
    gpus, cpus = float(s.gpus), float(s.cpus or 0)
    row = Row(c, p5=gpus, p50=gpus, p95=gpus, interval="catalogue values (no range)",
              deciding="none: a specification, checked against NVIDIA's page")
    row.estimate = f"{gpus:.0f} GPUs, {cpus:.0f} CPUs"
    row.detail = f"GPUs from {s.provenance['gpus'].source_url}; CPUs from {s.provenance['cpus'].source_url}"
    v = decide("equals", c.claimed_value, gpus, gpus, gpus, c.tolerance)
    if v.verdict == "supported" and abs(cpus - c.claimed_value / 2) > 1e-9:
        v = Verdict("contradicted")
    row.verdict = v
    return row


def _unavailable(row: Row, ex: Exception) -> Row:
    row.verdict = Verdict("cannot be checked", str(ex))
    row.detail = str(ex)
    return row


def _row_weight_sync(c: Claim, ctx: Context) -> Row:
    row = Row(c, deciding="weight_sync_efficiency (achieved fraction of the NIC line rate, chapter 3)")
    try:
        lo, cen, hi = weight_sync_efficiency_range()
        t = {e_: weight_sync_s(efficiency=e_) for e_ in (lo, cen, hi)}
    except ChapterUnavailable as ex:
        return _unavailable(row, ex)
    vals = np.array(list(t.values()), dtype=float)
    row.p5, row.p50, row.p95 = float(vals.min()), float(t[cen]), float(vals.max())
    row.interval = f"range over weight_sync_efficiency {lo:g}-{hi:g} (central {cen:g})"
    row.estimate = _interval_text(row.p5, row.p50, row.p95) + " s"
    row.detail = ("Kimi-K2, 1T parameters: 256 BF16 trainer GPUs to 128 FP8 rollout GPUs (replicas of 16), "
                  "static point-to-point RDMA WRITE over 400 Gb/s NICs; Perplexity measured 1.3 s")
    row.verdict = decide(c.rule, c.claimed_value, row.p5, row.p50, row.p95, c.tolerance,
                         condition="the NICs sustain the high end of weight_sync_efficiency")
    return row


def _row_vera_cpu(c: Claim, ctx: Context) -> Row:
    row = Row(c, deciding="sandbox CPU-seconds per rollout and sandbox CPUs (chapter 3)")
    try:
        base = rl_step(CANDIDATE_SYSTEM)
        fast = rl_step(CANDIDATE_SYSTEM, cpu_speed_factor=c.claimed_value)
        change = 1.0 - fast.cost_usd / base.cost_usd
        row.p5 = row.p50 = row.p95 = float(change)
        row.interval = "central assumptions only"
        row.estimate = f"{change:.1%} cheaper RL step if true"
        row.detail = (f"Nemotron-3-Ultra-class RL step on {CANDIDATE_SYSTEM} ({RL_FLEET[0]} rollout + {RL_FLEET[1]} "
                      f"trainer GPUs): {base.step_time_s:.0f} s at x1.0 CPU speed, {fast.step_time_s:.0f} s at "
                      f"x{c.claimed_value:g}; environment share {base.shares.get('environment', 0):.1%}")
    except ChapterUnavailable as ex:
        row.detail = str(ex)
    except ValueError as ex:
        row.detail = f"chapter 3 rl_step call failed: {ex}"
    row.verdict = decide("unverifiable", c.claimed_value, 0, 0, 0)
    return row


def _row_swe_rate(c: Claim, ctx: Context) -> Row:
    recs = ctx.recs

    def fn(v):
        return economics.implied_step_success_probability(v["swe_bench_verified_resolve_rate"],
                                                          np.rint(v["swe_agent_steps"]))

    names = ["swe_bench_verified_resolve_rate", "swe_agent_steps"]
    r, top = _mc(fn, {k: recs[k] for k in names}, ctx.n, ctx.seed)
    row = Row(c, p5=r.p5, p50=r.p50, p95=r.p95, interval=f"Monte Carlo p5/p50/p95 (n={ctx.n:,}, seed {ctx.seed})",
              deciding=top)
    row.estimate = f"implies per-step reliability {_interval_text(r.p5, r.p50, r.p95)}"
    row.detail = (f"p = 0.717^(1/k) over k = {recs['swe_agent_steps'].low:g}-{recs['swe_agent_steps'].high:g} "
                  f"agent steps; the 71.7% itself is an input")
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95)
    return row


def _row_swe_value(c: Claim, ctx: Context, serving_model_name: str = "Nemotron-3-Ultra") -> Row:
    recs = ctx.recs
    row = Row(c, interval=f"Monte Carlo p5/p50/p95 (n={ctx.n:,}, seed {ctx.seed})")
    try:
        serving_frontier(serving_model_name, REFERENCE_SYSTEM)
    except ChapterUnavailable as ex:
        return _unavailable(row, ex)

    def cost(v):
        price = serving_usd_per_mtok(v, serving_model_name, REFERENCE_SYSTEM)
        return swe_task_cost(v, price).usd_per_success

    def multiple(v):
        return engineer_usd_per_issue(v) / cost(v)

    r, top = _mc(multiple, recs, ctx.n, ctx.seed)
    rc = uncertainty.run(cost, recs, ctx.n, ctx.seed, log_uniform="auto")
    row.p5, row.p50, row.p95 = r.p5, r.p50, r.p95
    row.deciding = top
    row.estimate = f"{_interval_text(r.p5, r.p50, r.p95)}x the agent's cost"
    row.detail = (f"agent cost per resolved issue {_interval_text(rc.p5, rc.p50, rc.p95)} USD "
                  f"({serving_model_name}-class model served on {REFERENCE_SYSTEM}); engineer time per issue "
                  f"{recs['engineer_hours_per_issue'].central:g} h at ${recs['engineer_cost_usd_per_hour'].central:g}/h")
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95, c.tolerance,
                         condition=f"{top} is favourable")
    return row


def _row_inference(c: Claim, ctx: Context) -> Row:
    recs = ctx.recs
    row = Row(c, interval=f"Monte Carlo p5/p50/p95 of the best point (n={ctx.n:,}, seed {ctx.seed})")
    try:
        cur = serving_cost_ratio_curve(economics.centrals(recs))
    except ChapterUnavailable as ex:
        return _unavailable(row, ex)
    piv = cur.pivot(index="tokens_per_s_per_user", columns="system", values="usd_per_mtok")
    thr = cur.pivot(index="tokens_per_s_per_user", columns="system", values="output_tokens_per_s_per_gpu")
    ok = (thr[REFERENCE_SYSTEM] > 0) & (thr[CANDIDATE_SYSTEM] > 0)
    if not ok.any():
        row.detail = "no interactivity level that both platforms reach"
        return row
    tput_ratio = (thr[CANDIDATE_SYSTEM] / thr[REFERENCE_SYSTEM])[ok]
    best_u = float(tput_ratio.idxmax())
    best_tput = float(tput_ratio.max())

    def fn(v):
        return best_tput * economics.platform_usd_per_gpu_hour(v, REFERENCE_SYSTEM) \
            / economics.platform_usd_per_gpu_hour(v, CANDIDATE_SYSTEM)

    r, top = _mc(fn, recs, ctx.n, ctx.seed)
    row.p5, row.p50, row.p95 = r.p5, r.p50, r.p95
    row.deciding = top
    row.estimate = f"{_interval_text(r.p5, r.p50, r.p95)}x at best"
    row.detail = (f"Kimi-K2-class 1T MoE, fp4, 8,000 output tokens: Vera Rubin NVL72 serves {best_tput:.2f}x the "
                  f"tokens/s per GPU at {best_u:.0f} tokens/s per user (its best point), at "
                  f"{float(fn(economics.centrals(recs))) / best_tput:.2f}x the GB200 NVL72 cost per GPU-hour "
                  f"inverse; the throughput ratio comes from chapter 3's frontier, the interval from prices")
    row.verdict = decide(c.rule, c.claimed_value, r.p5, r.p50, r.p95, c.tolerance,
                         condition=f"{top} is at its favourable end")
    return row


def _row_break_even(c: Claim, ctx: Context) -> Row:
    recs = ctx.recs
    a = recs["moe_10t_active_params"]
    ratio, ref, cand = training_gpu_ratio(a.central, precision=ctx.training_precision)
    row = Row(c, interval=f"Monte Carlo p5/p50/p95 (n={ctx.n:,}, seed {ctx.seed})")
    if not math.isfinite(ratio):
        row.detail = ("chapter 2 finds no feasible configuration for "
                      + (CANDIDATE_SYSTEM if math.isnan(ratio) else REFERENCE_SYSTEM) + "; no finite GPU ratio to price")
        row.verdict = Verdict("cannot be checked", row.detail)
        return row

    def fn(v):
        return economics.platform_break_even_price_usd(v, CANDIDATE_SYSTEM, REFERENCE_SYSTEM, ratio)

    names = [k for k in recs if not k.startswith(CANDIDATE_SYSTEM)]
    sub = {k: recs[k] for k in names}
    r, top = _mc(fn, sub, ctx.n, ctx.seed)
    row.p5, row.p50, row.p95 = r.p5, r.p50, r.p95
    row.deciding = top
    row.estimate = f"break-even {_interval_text(r.p5, r.p50, r.p95, 'USD')} per rack"
    price = recs[economics.price_key(CANDIDATE_SYSTEM)]
    row.detail = (f"GPU ratio {ratio:.2f}x from chapter 2 (central active parameters), GB200 NVL72 at "
                  f"${recs[economics.price_key(REFERENCE_SYSTEM)].central / 1e6:.2f}M; analysts put the Vera Rubin "
                  f"NVL72 rack at ${price.low / 1e6:.1f}-{price.high / 1e6:.1f}M")
    row.verdict = decide(c.rule, price.central, r.p5, r.p50, r.p95, c.tolerance, price_low=price.low,
                         price_high=price.high)
    return row


_ROWS: dict[str, Callable[[Claim, Context], Row]] = {
    "train_quarter_gpus": _row_training,
    "rubin_50_vs_20_pf": lambda c, ctx: _row_headline(c, ctx, "VR200", "GB200"),
    "rubin_ultra_100_pf": lambda c, ctx: _row_headline(c, ctx, "Rubin-Ultra", "VR200"),
    "rack_72_gpus_36_cpus": _row_rack,
    "weight_sync_2s": _row_weight_sync,
    "vera_cpu_30pct": _row_vera_cpu,
    "swe_bench_717": _row_swe_rate,
    "swe_fix_value": _row_swe_value,
    "inference_10x_cost": _row_inference,
    "no_rack_price": _row_break_even,
}


def ledger(assumption_overrides: Mapping[str, object] | None = None, *, n: int = 20_000, seed: int = 2026,
           training_precision: str = "fp4", training_range: bool = True, only=None) -> pd.DataFrame:
    """The claims ledger: one row per claim of ``data/claims/claims.csv`` (columns :data:`COLUMNS`).

    ``assumption_overrides``: ``{name: value or (low, central, high)}`` replacing assumptions of
    :func:`all_assumptions` (a number fixes that input). ``n``/``seed``: Monte Carlo samples and
    seed (same seed, same ledger). ``training_range``: also run chapter 2 at the low and high
    active-parameter assumption (slower: two searches per platform). ``only``: ids to compute.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 100:
        raise ValueError(f"parameter n={n!r} is not allowed; expected an integer >= 100")
    if training_precision not in ("bf16", "fp8", "fp4"):
        raise ValueError(f"parameter training_precision={training_precision!r} is not allowed; allowed: bf16, fp8, fp4")
    recs = all_assumptions(assumption_overrides)
    ctx = Context(recs, int(n), int(seed), training_precision, bool(training_range))
    cl = claims()
    ids = list(cl) if only is None else list(only)
    unknown = [i for i in ids if i not in cl]
    if unknown:
        raise ValueError(f"parameter only has unknown claim id(s) {unknown}; known: {', '.join(cl)}")
    rows = []
    for cid in ids:
        c = cl[cid]
        fn = _ROWS.get(cid)
        if fn is None:
            row = Row(c, detail="no estimator for this claim id", verdict=Verdict("cannot be checked", "no estimator"))
        else:
            row = fn(c, ctx)
        rows.append(row.as_dict())
    return pd.DataFrame(rows, columns=list(COLUMNS))


def relative_to_claim(df: pd.DataFrame) -> pd.DataFrame:
    """The book's interval over the claimed value, for rows that have both (1 = exactly as claimed).

    Rows judged ``unverifiable``, without a finite interval, or whose claim is zero are left out.
    Columns: id, label (the claim's first words), p5, p50, p95, verdict.
    """
    ok = (df["rule"] != "unverifiable") & np.isfinite(df["p5"].astype(float)) \
        & np.isfinite(df["p95"].astype(float)) & (df["claimed"].astype(float) != 0)
    d = df[ok]
    out = pd.DataFrame({"id": d["id"], "label": d["id"].str.replace("_", " "),
                        "p5": d["p5"] / d["claimed"], "p50": d["p50"] / d["claimed"], "p95": d["p95"] / d["claimed"],
                        "verdict": d["verdict"]})
    return out.reset_index(drop=True)


def verdict_counts(df: pd.DataFrame) -> dict[str, int]:
    """How many claims got each verdict (every verdict listed, zeros included)."""
    return {v: int((df["verdict"] == v).sum()) for v in VERDICTS}


def clear_cache() -> None:
    """Forget cached chapter results and the claims file."""
    _claims_cached.cache_clear()
    _deadline.cache_clear()
    _frontier.cache_clear()
    _train_tput.cache_clear()
    _rl.cache_clear()


__all__ = ["VERDICTS", "RULES", "COLUMNS", "Claim", "Verdict", "ChapterUnavailable", "claims", "parse_claims",
           "section_link", "decide", "ledger", "verdict_counts", "all_assumptions", "workload_assumptions",
           "training_gpus", "training_gpu_ratio", "serving_frontier", "serving_cost_ratio_curve",
           "serving_usd_per_mtok", "throughput_at_interactivity", "weight_sync_s", "rl_step", "swe_task_cost",
           "engineer_usd_per_issue", "clear_cache", "mc_interval", "gpu_hour_intervals", "task_cost_by_platform",
           "break_even_table", "lifecycle_table", "rl_gpu_hour_ratio", "serving_throughput_ratio",
           "training_tokens_per_s_per_gpu", "usd_per_mtok", "overrides", "task_kwargs", "policy_table",
           "task_cost_by_quality", "weight_sync_efficiency_range", "RL_FLEET", "relative_to_claim"]


def ledger_view(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger as the book shows it: source and section as links, conditions in the verdict.

    Links are relative to the chapter pages (``nbs/``), so the opening chapter can link to them.
    """
    return ledger.assign(
        link=[f'<a href="{lnk.removeprefix("nbs/")}">{sec or "chapter"}</a>'
              for lnk, sec in zip(ledger["link"], ledger["section"])],
        source=[f'<a href="{u}">{u.split("/")[2] if u.startswith("http") else u}</a>' for u in ledger["source"]],
        verdict=[v + (f" {c}" if v == "supported only if" else "") for v, c in zip(ledger["verdict"], ledger["condition"])],
    )[["claim", "source", "estimate", "verdict", "deciding_assumption", "link"]]
