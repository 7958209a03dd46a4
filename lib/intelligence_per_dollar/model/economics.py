"""Cost of ownership, cost per successful agentic task, and the break-even rack price.

Every model function here is pure and vectorised: arguments broadcast like numpy arrays (one
call can price a million configurations), results are ``float64`` arrays (0-d for scalar
input), and nothing reads a file. Assumptions live in ``data/assumptions/*.csv`` and reach the
functions through :mod:`intelligence_per_dollar.sources.assumptions` (validated, frozen records)
and the caller.

Conventions: money in USD, power in W, energy in kWh, time in s or named hours/years, rates per
year, fractions in [0, 1]. A year is the Julian year, :data:`HOURS_PER_YEAR` = 8766 h.

The pieces, and where each formula comes from:

* :func:`capital_recovery_factor` -- the level annual payment that repays 1 USD of capital over
  ``life_years`` at ``wacc`` (standard engineering-economics annuity; e.g. Brealey, Myers & Allen,
  *Principles of Corporate Finance*, ch. 2; NREL's "fixed charge rate" for energy LCOE).
* :func:`depreciation_schedule_usd` -- straight-line and declining-balance (with the usual switch
  to straight line) accounting schedules.
* :func:`usd_per_gpu_hour_breakdown` / :func:`usd_per_gpu_hour` -- levelised cost of a utilised
  GPU-hour from first principles, the same build-up as SemiAnalysis's AI Cloud TCO model
  (capital + facility + power + operations, divided by utilised hours).
* :func:`agentic_task_cost` / :func:`cost_per_successful_task` -- k steps each succeeding with
  probability p, so an attempt succeeds with p**k; retry policies; context growth; expected
  cost / P(success).
* :func:`break_even_price_usd` -- the system price at which a candidate system costs the same
  as a reference system for one workload; closed form because cost is linear in price.
* :func:`lifecycle_usd_per_success` -- train/post-train once, serve many: a campaign amortised
  over the tasks served in the model's life.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.sources import checks, hardware
from intelligence_per_dollar.sources.assumptions import Assumption

#: Hours in a (Julian) year: 365.25 days x 24 h.
HOURS_PER_YEAR = 8766.0
#: Seconds in an hour.
S_PER_HOUR = 3600.0
#: Tokens in a million (prices are quoted per million tokens).
TOKENS_PER_MTOK = 1.0e6

#: Retry policies understood by :func:`agentic_task_cost`.
RETRY_POLICIES = ("none", "task", "step")
#: Most steps (tool calls) in one agentic task: a billion.
MAX_STEPS = 10**9
#: Capital-charge methods understood by :func:`capital_charge_usd_per_year`.
CAPITAL_METHODS = ("annuity", "straight_line")
#: Depreciation methods understood by :func:`depreciation_schedule_usd`.
DEPRECIATION_METHODS = ("straight_line", "declining_balance")


# --------------------------------------------------------------------------------------------
# argument checks: one clear ValueError naming the parameter, its value and what is allowed
# --------------------------------------------------------------------------------------------

#: Every numeric argument: a number or array of numbers, checked element-wise (shared checks).
_arr = checks.array


def _finite(what: str, result: np.ndarray) -> np.ndarray:
    """``result``, or a ``ValueError`` where extreme inputs (a subnormal life or utilisation, a
    price near the float64 limit) made it overflow to infinity."""
    if not np.all(np.isfinite(result)):
        raise ValueError(f"{what} overflows to infinity for these inputs (a life or utilisation next to 0, or "
                         f"values near 1e308); allowed: inputs whose {what} is a finite number")
    return result


def _prob(name: str, value) -> np.ndarray:
    return _arr(name, value, low=0.0, high=1.0)


# --------------------------------------------------------------------------------------------
# cost of capital and depreciation
# --------------------------------------------------------------------------------------------

def capital_recovery_factor(wacc, life_years) -> np.ndarray:
    """Capital recovery factor CRF = r (1+r)^n / ((1+r)^n - 1), per year.

    The level annual payment that repays 1 USD invested today over ``life_years`` at the cost of
    capital ``wacc`` (per year); the limit at r = 0 is 1/n. Textbook annuity (Brealey, Myers &
    Allen, *Principles of Corporate Finance*, ch. 2). Example: 5 years at 10% -> 0.263797.
    Computed as r / (1 - (1+r)^-n) with ``expm1``/``log1p`` so it stays accurate as r -> 0.
    """
    r = _arr("wacc", wacc, low=0.0, high=1.0)
    n = _arr("life_years", life_years, low=0.0, low_open=True)
    r, n = np.broadcast_arrays(r, n)
    denom = -np.expm1(-n * np.log1p(r))          # 1 - (1+r)^-n; underflows to 0 for subnormal r
    usable = denom > 0                           # where it does, r -> 0 and the limit 1/n is exact
    with np.errstate(over="ignore", divide="ignore"):
        crf = np.where(usable, r / np.where(usable, denom, 1.0), 1.0 / n)
    return _finite("the capital recovery factor", crf)


def annuity_factor(wacc, life_years) -> np.ndarray:
    """Present value of 1 USD a year for ``life_years`` at ``wacc``: (1 - (1+r)^-n) / r = 1/CRF.

    Example: 5 years at 10% -> 3.790787. Same source as :func:`capital_recovery_factor`.
    """
    return 1.0 / capital_recovery_factor(wacc, life_years)


def capital_charge_usd_per_year(capex_usd, wacc, life_years, method: str = "annuity") -> np.ndarray:
    """Annual cost of owning ``capex_usd`` of equipment, USD per year.

    ``annuity`` (default): capex x CRF, the level charge whose present value equals the capex
    (economic cost: depreciation plus return on capital, levelised). ``straight_line``: the
    accounting view averaged over life: capex/n of depreciation plus ``wacc`` on the average
    book value, capex (n+1)/(2n) (a common approximation that slightly overstates the annuity).
    """
    checks.choice("method", method, CAPITAL_METHODS)
    capex = _arr("capex_usd", capex_usd, low=0.0)
    if method == "annuity":
        return capex * capital_recovery_factor(wacc, life_years)
    r = _arr("wacc", wacc, low=0.0, high=1.0)
    n = _arr("life_years", life_years, low=0.0, low_open=True)
    return capex / n + r * capex * (n + 1.0) / (2.0 * n)


def depreciation_schedule_usd(capex_usd, life_years: int, method: str = "straight_line",
                              factor: float = 2.0, salvage_usd=0.0) -> np.ndarray:
    """Depreciation charged in each year 1..life_years, USD; years on the last axis.

    ``straight_line``: (capex - salvage)/n each year. ``declining_balance``: each year charges
    ``factor``/n of the opening book value (factor 2 = double-declining balance), switching to
    straight line over the remaining years when that charges more, and never depreciating below
    salvage (the textbook method; e.g. 10,000 USD over 5 years -> 4000, 2400, 1440, 1080, 1080).
    ``capex_usd`` and ``salvage_usd`` broadcast; ``life_years`` is one whole number of years.
    """
    checks.choice("method", method, DEPRECIATION_METHODS)
    n = int(_arr("life_years", life_years, low=1.0, integer=True))
    if np.ndim(life_years) != 0:
        raise ValueError(f"parameter life_years={life_years!r} must be a single whole number of years")
    capex = _arr("capex_usd", capex_usd, low=0.0)
    salvage = _arr("salvage_usd", salvage_usd, low=0.0)
    if np.any(salvage > capex):
        raise ValueError(f"parameter salvage_usd={salvage_usd!r} is not allowed; expected <= capex_usd")
    capex, salvage = np.broadcast_arrays(capex, salvage)
    if method == "straight_line":
        return np.repeat(((capex - salvage) / n)[..., None], n, axis=-1)
    f = float(_arr("factor", factor, low=0.0, low_open=True))
    book = capex.astype(float).copy()
    out = np.empty(capex.shape + (n,))
    for t in range(n):
        remaining = book - salvage
        charge = np.maximum(book * f / n, remaining / (n - t))
        charge = np.minimum(charge, remaining)
        out[..., t] = charge
        book = book - charge
    return out


# --------------------------------------------------------------------------------------------
# $/GPU-hour from first principles
# --------------------------------------------------------------------------------------------

def usd_per_gpu_hour_breakdown(system_price_usd_per_gpu, all_in_power_w_per_gpu, *,
                               networking_capex_fraction, storage_capex_fraction,
                               facility_capex_usd_per_w, facility_life_years,
                               useful_life_years, wacc, pue, electricity_usd_per_kwh,
                               operations_fraction_of_capex_per_year, utilisation,
                               colocation_usd_per_kw_month=0.0, average_power_fraction=1.0,
                               capital_method: str = "annuity") -> dict[str, np.ndarray]:
    """Levelised cost of one *utilised* GPU-hour, split into its parts (USD per GPU-hour).

    Per GPU and per year (the build-up of SemiAnalysis's AI Cloud TCO model, from first
    principles):

    * ``it_capital``: IT capex = system price per GPU x (1 + networking + storage fractions),
      charged by :func:`capital_charge_usd_per_year` over ``useful_life_years`` at ``wacc``;
    * ``facility_capital``: facility build-out ``facility_capex_usd_per_w`` x all-in IT watts,
      charged over ``facility_life_years`` at ``wacc`` (set it to 0 when renting colocation);
    * ``colocation``: rent, ``colocation_usd_per_kw_month`` x IT kW x 12 (0 when owning);
    * ``power``: IT kW x ``average_power_fraction`` x PUE x 8766 h x USD/kWh;
    * ``operations``: ``operations_fraction_of_capex_per_year`` x IT capex.

    Each is divided by the utilised hours, 8766 h x ``utilisation``. ``system_price_usd_per_gpu``
    is a rack price / GPUs per rack (or a server price / 8); ``all_in_power_w_per_gpu`` includes
    the GPU's share of host CPU, NICs and switches. Returns a dict of arrays (same broadcast
    shape) with a ``total`` key; ``pandas.DataFrame(result)`` gives a chart-ready table.
    """
    price = _arr("system_price_usd_per_gpu", system_price_usd_per_gpu, low=0.0)
    power_w = _arr("all_in_power_w_per_gpu", all_in_power_w_per_gpu, low=0.0)
    net = _arr("networking_capex_fraction", networking_capex_fraction, low=0.0)
    sto = _arr("storage_capex_fraction", storage_capex_fraction, low=0.0)
    fac = _arr("facility_capex_usd_per_w", facility_capex_usd_per_w, low=0.0)
    pue_ = _arr("pue", pue, low=1.0)
    kwh = _arr("electricity_usd_per_kwh", electricity_usd_per_kwh, low=0.0)
    ops = _arr("operations_fraction_of_capex_per_year", operations_fraction_of_capex_per_year, low=0.0)
    util = _arr("utilisation", utilisation, low=0.0, high=1.0, low_open=True)
    colo = _arr("colocation_usd_per_kw_month", colocation_usd_per_kw_month, low=0.0)
    load = _arr("average_power_fraction", average_power_fraction, low=0.0, high=1.0)
    _arr("wacc", wacc, low=0.0, high=1.0)
    _arr("useful_life_years", useful_life_years, low=0.0, low_open=True)
    _arr("facility_life_years", facility_life_years, low=0.0, low_open=True)

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):   # extremes: checked below
        it_capex = price * (1.0 + net + sto)
        kw = power_w / 1000.0
        per_year = {
            "it_capital": capital_charge_usd_per_year(it_capex, wacc, useful_life_years, capital_method),
            "facility_capital": capital_charge_usd_per_year(fac * power_w, wacc, facility_life_years,
                                                            capital_method),
            "colocation": colo * kw * 12.0,
            "power": kw * load * pue_ * HOURS_PER_YEAR * kwh,
            "operations": ops * it_capex,
        }
        hours = HOURS_PER_YEAR * util
        shape = np.broadcast_shapes(*(np.shape(v) for v in per_year.values()), np.shape(hours))
        out = {k: np.broadcast_to(v / hours, shape).astype(float) for k, v in per_year.items()}
        out["total"] = sum(out.values())
    _finite("the cost per GPU-hour", out["total"])
    return out


def usd_per_gpu_hour(system_price_usd_per_gpu, all_in_power_w_per_gpu, **cost) -> np.ndarray:
    """Total levelised USD per utilised GPU-hour; see :func:`usd_per_gpu_hour_breakdown`."""
    return usd_per_gpu_hour_breakdown(system_price_usd_per_gpu, all_in_power_w_per_gpu, **cost)["total"]


#: Names in ``data/assumptions/economics.csv`` that map one-to-one onto cost keyword arguments.
COST_ASSUMPTIONS = ("networking_capex_fraction", "storage_capex_fraction", "facility_capex_usd_per_w",
                    "facility_life_years", "useful_life_years", "wacc", "pue",
                    "electricity_usd_per_kwh", "operations_fraction_of_capex_per_year", "utilisation")


def cost_kwargs(values: Mapping[str, object], accelerator: str | None = None) -> dict[str, object]:
    """Keyword arguments for :func:`usd_per_gpu_hour` from a mapping of assumption values.

    ``values`` maps assumption names to numbers or arrays (e.g. ``sources.assumptions.centrals``
    or a Monte Carlo sample). With ``accelerator`` (e.g. ``"GB200"``) it also sets
    ``all_in_power_w_per_gpu`` from ``all_in_power_w_per_gpu_<accelerator>``.
    """
    missing = [k for k in COST_ASSUMPTIONS if k not in values]
    if missing:
        raise ValueError(f"parameter values is missing assumption(s) {', '.join(missing)}")
    out = {k: values[k] for k in COST_ASSUMPTIONS}
    if accelerator is not None:
        key = f"all_in_power_w_per_gpu_{accelerator}"
        if key not in values:
            known = sorted(k.removeprefix("all_in_power_w_per_gpu_") for k in values
                           if k.startswith("all_in_power_w_per_gpu_"))
            raise ValueError(f"parameter accelerator={accelerator!r} has no power assumption; "
                             f"known: {', '.join(known)}")
        out["all_in_power_w_per_gpu"] = values[key]
    return out


# --------------------------------------------------------------------------------------------
# break-even price
# --------------------------------------------------------------------------------------------

def break_even_price_usd(reference_usd_per_gpu_hour, gpu_hour_ratio, gpus_per_system,
                         all_in_power_w_per_gpu, **cost) -> np.ndarray:
    """System (rack) price at which a candidate system costs the same as a reference for a workload.

    The workload needs H_ref GPU-hours on the reference (e.g. GB200 NVL72) and
    H_cand = H_ref / ``gpu_hour_ratio`` on the candidate (e.g. Vera Rubin NVL72; NVIDIA's claim
    of 1/4 the GPUs for the same month is a ratio of 4; for serving, the ratio of tokens/s per
    GPU). The candidate's cost per GPU-hour is linear in its price per GPU,
    c(P) = c0 + c1 P (:func:`usd_per_gpu_hour` at prices 0 and 1 gives c0 and c1), so equal
    workload cost H_ref c_ref = H_cand c(P) solves in closed form:

        P_system = gpus_per_system x (gpu_hour_ratio x c_ref - c0) / c1.

    Rises linearly with ``gpu_hour_ratio`` (the candidate's efficiency). A negative result means
    the candidate's non-capital costs alone exceed the reference: no price breaks even.
    ``**cost`` are the candidate's keyword arguments of :func:`usd_per_gpu_hour`.
    """
    ref = _arr("reference_usd_per_gpu_hour", reference_usd_per_gpu_hour, low=0.0)
    ratio = _arr("gpu_hour_ratio", gpu_hour_ratio, low=0.0, low_open=True)
    gps = _arr("gpus_per_system", gpus_per_system, low=0.0, low_open=True)
    c0 = usd_per_gpu_hour(0.0, all_in_power_w_per_gpu, **cost)
    c1 = usd_per_gpu_hour(1.0, all_in_power_w_per_gpu, **cost) - c0
    return gps * (ratio * ref - c0) / c1


def workload_cost_usd(gpu_hours, usd_per_gpu_hour_) -> np.ndarray:
    """Cost of a workload, USD: GPU-hours x USD per GPU-hour."""
    return _arr("gpu_hours", gpu_hours, low=0.0) * _arr("usd_per_gpu_hour", usd_per_gpu_hour_, low=0.0)


def campaign_cost_usd(gpus, duration_s, usd_per_gpu_hour_) -> np.ndarray:
    """Cost of a training or post-training campaign, USD: GPUs x duration (s -> h) x USD/GPU-hour."""
    gpus_ = _arr("gpus", gpus, low=0.0)
    dur = _arr("duration_s", duration_s, low=0.0)
    return workload_cost_usd(gpus_ * dur / S_PER_HOUR, usd_per_gpu_hour_)


# --------------------------------------------------------------------------------------------
# cost per successful agentic task
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskCost:
    """Expected economics of one agentic task under a retry policy (arrays broadcast together).

    ``success_probability``: P(the task ends in success) after retries.
    ``usd_per_task``: expected spend per task started (successes and failures).
    ``usd_per_success``: expected spend per successful task (inf where success is impossible).
    ``input_tokens_per_task`` / ``output_tokens_per_task``: expected tokens per task started.
    """

    success_probability: np.ndarray
    usd_per_task: np.ndarray
    usd_per_success: np.ndarray
    input_tokens_per_task: np.ndarray
    output_tokens_per_task: np.ndarray


def _geometric_sums(x, k) -> tuple[np.ndarray, np.ndarray]:
    """``(sum_{j<k} x**j, sum_{j<k} j x**j)`` for ``x`` in [0, 1] and whole ``k >= 1``, in closed form
    (no array of length ``k``: a billion steps costs what five do).

    ``S0 = (1 - x**k) / (1 - x)`` and ``S1 = (S0 - 1 - (k - 1) x**k) / (1 - x)`` (differentiate the
    geometric series). Where ``k u`` is small (``u = -ln x``) the second cancels, so there
    ``S1 = sum_j j e^{-j u}`` is expanded to third order in ``u`` with the power sums of ``j``
    (Faulhaber): relative error below 1e-12 on both sides of the switch.
    """
    x, k = np.broadcast_arrays(np.asarray(x, float), np.asarray(k, float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d = 1.0 - x
        u = -np.log(x)                                      # inf at x = 0, 0 at x = 1
        xk = np.power(x, k)
        s0 = np.where(d > 0, -np.expm1(-k * u) / np.where(d > 0, d, 1.0), k)
        general = (s0 - 1.0 - (k - 1.0) * xk) / np.where(d > 0, d, 1.0)
        a1 = k * (k - 1.0) / 2.0
        a2 = (k - 1.0) * k * (2.0 * k - 1.0) / 6.0
        a3 = a1 * a1
        a4 = (k - 1.0) * k * (2.0 * k - 1.0) * (3.0 * k * k - 3.0 * k - 1.0) / 30.0
        series = a2 - u * a3 / 2.0 + u * u * a4 / 6.0
        series = a1 - u * series
        s1 = np.where(k * u < 1e-3, series, general)
    return s0, s1


def agentic_task_cost(step_success_probability, steps, *, prefix_tokens, output_tokens_per_step,
                      tool_result_tokens_per_step, input_usd_per_mtok, output_usd_per_mtok,
                      context_retention_fraction=1.0, retry_policy: str = "none", max_retries=0,
                      detect_failures: bool = False, tool_usd_per_step=0.0) -> TaskCost:
    """Expected cost of an agentic task of k steps (tool calls), each succeeding with probability p.

    Steps fail independently, so one pass succeeds with q = p**k. Step i (1-based) reads
    ``prefix_tokens + retention x (i-1) x (output + tool_result)`` input tokens (context growth:
    each step appends its output and the tool's result) and writes ``output_tokens_per_step``;
    it costs tokens x price / 1e6 plus ``tool_usd_per_step`` (e.g. sandbox CPU). Policies:

    * ``none``: one attempt. Without ``detect_failures`` every step runs and failure is only
      found at the end (by tests) -- the "expensive failure"; with it the attempt stops at the
      first failed step (step i runs with probability p**(i-1)).
    * ``task``: retry the whole task, up to ``max_retries`` extra attempts (``max_retries`` + 1
      in all). P(success) = 1 - (1-q)**A; expected attempts (1 - (1-q)**A)/q. Cost per success
      equals one attempt's cost / q whatever A: retries raise the success rate, not the price.
    * ``step``: the seed's "reliable rollback": a failed step is detected, rolled back (its
      tokens are not kept) and retried up to ``max_retries`` times; a step passes with
      s = 1 - (1-p)**(r+1) after s/p tries on average; the task fails when a step runs out.

    Expected cost per success = expected cost per task / P(success) (inf when P = 0, never NaN).
    It never falls as p falls: every term grows as p shrinks (see the tests).
    """
    p = _prob("step_success_probability", step_success_probability)
    k = _arr("steps", steps, low=1.0, high=MAX_STEPS, integer=True)
    checks.boolean("detect_failures", detect_failures)
    prefix = _arr("prefix_tokens", prefix_tokens, low=0.0)
    out_tok = _arr("output_tokens_per_step", output_tokens_per_step, low=0.0)
    tool_tok = _arr("tool_result_tokens_per_step", tool_result_tokens_per_step, low=0.0)
    keep = _prob("context_retention_fraction", context_retention_fraction)
    in_price = _arr("input_usd_per_mtok", input_usd_per_mtok, low=0.0)
    out_price = _arr("output_usd_per_mtok", output_usd_per_mtok, low=0.0)
    tool_usd = _arr("tool_usd_per_step", tool_usd_per_step, low=0.0)
    checks.choice("retry_policy", retry_policy, RETRY_POLICIES)
    r = _arr("max_retries", max_retries, low=0.0, integer=True)

    shape = np.broadcast_shapes(p.shape, k.shape, prefix.shape, out_tok.shape, tool_tok.shape,
                                keep.shape, in_price.shape, out_price.shape, tool_usd.shape, r.shape)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # step i = j + 1 runs with weight scale x**j (expected tries x P(reached)); sums in closed form
        if retry_policy == "step":
            tries_total = r + 1.0
            fail_all = np.power(1.0 - p, tries_total)
            s = 1.0 - fail_all                                  # P(step passes within r+1 tries)
            scale = np.where(p > 0, s / np.where(p > 0, p, 1.0), tries_total)
            x = s                                               # P(step i is reached) = s**j
            success = np.power(s, k)
            attempts = np.ones(shape)
        else:
            q = np.power(p, k)
            x = p if detect_failures else np.ones_like(p)       # detected: step i runs with p**j
            scale = np.ones_like(p)
            if retry_policy == "task":
                A = r + 1.0
                fail = np.power(1.0 - q, A)
                success = 1.0 - fail
                attempts = np.where(q > 0, success / np.where(q > 0, q, 1.0), A)
            else:
                success = q
                attempts = np.ones(shape)
        s0, s1 = _geometric_sums(x, k)
        in_per_pass = scale * (prefix * s0 + keep * (out_tok + tool_tok) * s1)
        out_per_pass = scale * out_tok * s0
        calls_per_pass = scale * s0
        in_tokens = in_per_pass * attempts
        out_tokens = out_per_pass * attempts
        usd = (in_tokens * in_price + out_tokens * out_price) / TOKENS_PER_MTOK \
            + calls_per_pass * attempts * tool_usd
        success = np.broadcast_to(success, shape)
        usd = _finite("the cost per task", np.broadcast_to(usd, shape))
        per_success = np.where(success > 0, usd / np.where(success > 0, success, 1.0), np.inf)
        # A task with zero cost that can succeed costs zero per success (0/q), never NaN.
        per_success = np.where((usd == 0) & (success > 0), 0.0, per_success)
    return TaskCost(success_probability=np.array(success, dtype=float),
                    usd_per_task=np.array(usd, dtype=float),
                    usd_per_success=np.array(per_success, dtype=float),
                    input_tokens_per_task=np.array(np.broadcast_to(in_tokens, shape), dtype=float),
                    output_tokens_per_task=np.array(np.broadcast_to(out_tokens, shape), dtype=float))


def cost_per_successful_task(step_success_probability, steps, **task) -> np.ndarray:
    """Expected USD per successful task; see :func:`agentic_task_cost` for the model."""
    return agentic_task_cost(step_success_probability, steps, **task).usd_per_success


def successful_tasks_per_usd(usd_per_success) -> np.ndarray:
    """Intelligence per dollar as the book defines it: successful tasks per USD (1 / cost per success)."""
    c = _arr("usd_per_success", usd_per_success, low=0.0, allow_inf=True)
    with np.errstate(divide="ignore", over="ignore"):   # a subnormal cost: inf tasks per USD, as at 0
        return np.where(c > 0, 1.0 / np.where(c > 0, c, 1.0), np.inf)


def implied_step_success_probability(task_success_probability, steps) -> np.ndarray:
    """Per-step reliability p that gives a task success rate P over k independent steps: P**(1/k)."""
    P = _prob("task_success_probability", task_success_probability)
    k = _arr("steps", steps, low=1.0, integer=True)
    return np.power(P, 1.0 / k)


# --------------------------------------------------------------------------------------------
# lifecycle: train once, post-train, serve
# --------------------------------------------------------------------------------------------

def lifecycle_usd_per_success(serving_usd_per_success, campaign_usd, lifetime_tasks_served,
                              success_probability) -> np.ndarray:
    """USD per successful task with the model's training/post-training campaign amortised in.

    serving cost per success + campaign / (tasks served x P(success per task)): the campaign is
    spread over the successes the model delivers in its life. Inf if no task can succeed.
    """
    serve = _arr("serving_usd_per_success", serving_usd_per_success, low=0.0, allow_inf=True)
    camp = _arr("campaign_usd", campaign_usd, low=0.0)
    tasks = _arr("lifetime_tasks_served", lifetime_tasks_served, low=0.0, low_open=True)
    P = _prob("success_probability", success_probability)
    successes = tasks * P
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tiny P: inf, as documented
        amortised = np.where(successes > 0, camp / np.where(successes > 0, successes, 1.0),
                             np.where(camp > 0, np.inf, 0.0))
    return serve + amortised


# --------------------------------------------------------------------------------------------
# systems: a system in the hardware catalogue priced with the assumption values
# --------------------------------------------------------------------------------------------

def price_key(system: str) -> str:
    """Name of a system's price in ``data/prices/prices.csv`` records: ``"<system>.system_price_usd"``."""
    return f"{system}.system_price_usd"


def accelerator_and_gpus(system: str) -> tuple[str, int]:
    """``(accelerator id, GPUs per system)`` of a system in the hardware catalogue (e.g. ``"GB200-NVL72"``)."""
    system_spec = hardware.get_system(system)
    return system_spec.accelerator, int(system_spec.gpus)


def system_cost_kwargs(values: Mapping[str, object], system: str,
                       system_price_usd=None) -> dict[str, object]:
    """Positional and keyword arguments of :func:`usd_per_gpu_hour_breakdown` for one system.

    The price per GPU is the system price (``system_price_usd``, else ``values[price_key(system)]``)
    over its GPUs; the all-in power is ``values["all_in_power_w_per_gpu_<accelerator>"]``.
    Returns a dict with ``system_price_usd_per_gpu`` plus :func:`cost_kwargs`.
    """
    accelerator, gpus = accelerator_and_gpus(system)
    if system_price_usd is None:
        key = price_key(system)
        if key not in values:
            known = sorted(k.removesuffix(".system_price_usd") for k in values if k.endswith(".system_price_usd"))
            raise ValueError(f"parameter system={system!r} has no price in the values; known: {', '.join(known)}")
        system_price_usd = values[key]
    price = _arr("system_price_usd", system_price_usd, low=0.0)
    out = {"system_price_usd_per_gpu": price / gpus}
    out.update(cost_kwargs(values, accelerator))
    return out


def system_usd_per_gpu_hour(values: Mapping[str, object], system: str, system_price_usd=None,
                            breakdown: bool = False):
    """USD per utilised GPU-hour of ``system`` (or its breakdown dict); see :func:`system_cost_kwargs`."""
    kw = system_cost_kwargs(values, system, system_price_usd)
    price = kw.pop("system_price_usd_per_gpu")
    power = kw.pop("all_in_power_w_per_gpu")
    b = usd_per_gpu_hour_breakdown(price, power, **kw)
    return b if breakdown else b["total"]


def system_break_even_price_usd(values: Mapping[str, object], candidate: str, reference: str,
                                gpu_hour_ratio) -> np.ndarray:
    """Candidate system price at which a workload costs the same as on the reference system.

    The reference is priced at ``values[price_key(reference)]``; ``gpu_hour_ratio`` is the
    reference's GPU-hours over the candidate's for the same work (see
    :func:`break_even_price_usd`, which holds the formula).
    """
    ref = system_usd_per_gpu_hour(values, reference)
    accelerator, gpus = accelerator_and_gpus(candidate)
    kw = cost_kwargs(values, accelerator)
    power = kw.pop("all_in_power_w_per_gpu")
    return break_even_price_usd(ref, gpu_hour_ratio, gpus, power, **kw)


def buildup_table(values: Mapping[str, object], systems) -> pd.DataFrame:
    """Long table of the $/GPU-hour build-up: one row per (system, component), central values."""
    rows = []
    for system in systems:
        b = system_usd_per_gpu_hour(values, system, breakdown=True)
        for comp in BUILDUP_COMPONENTS:
            rows.append({"system": system, "component": comp, "usd_per_gpu_hour": float(b[comp])})
    return pd.DataFrame(rows)


def market_table(records: Mapping[str, Assumption], systems) -> pd.DataFrame:
    """Market $/GPU-hour beside the build-up: rental rates and SemiAnalysis's owner TCO per system.

    Reads the ``<accelerator>.rental_usd_per_gpu_hour`` and ``<accelerator>.tco_usd_per_gpu_hour``
    records of ``data/prices/prices.csv`` (passed in as ``records``); systems without one are
    skipped. Columns: system, kind, low, central, high, source_url.
    """
    rows = []
    for system in systems:
        accelerator, _ = accelerator_and_gpus(system)
        for field_, kind in (("rental_usd_per_gpu_hour", "rental (on-demand)"),
                             ("tco_usd_per_gpu_hour", "owner TCO (SemiAnalysis)")):
            a = records.get(f"{accelerator}.{field_}")
            if a is not None:
                rows.append({"system": system, "kind": kind, "low": a.low, "central": a.central, "high": a.high,
                             "source_url": a.provenance.source_url})
    return pd.DataFrame(rows, columns=["system", "kind", "low", "central", "high", "source_url"])


def reliability_curves(p_grid, steps, *, series_label: str = "k = {k} steps", **task) -> pd.DataFrame:
    """Long table of cost per successful task against per-step reliability, one series per k.

    ``task``: keyword arguments of :func:`agentic_task_cost` (tokens, prices, retry policy).
    Columns: series, steps, p, usd_per_success, success_probability.
    """
    p = _prob("p_grid", p_grid).ravel()
    ks = _arr("steps", steps, low=1.0, integer=True).ravel()
    tc = agentic_task_cost(p[None, :], ks[:, None], **task)
    frames = []
    for i, k in enumerate(ks):
        frames.append(pd.DataFrame({"series": series_label.format(k=int(k)), "steps": int(k), "p": p,
                                    "usd_per_success": tc.usd_per_success[i],
                                    "success_probability": tc.success_probability[i]}))
    return pd.concat(frames, ignore_index=True)


#: Components of :func:`usd_per_gpu_hour_breakdown`, in stacking order.
BUILDUP_COMPONENTS = ("it_capital", "facility_capital", "colocation", "power", "operations")


__all__ = [
    "HOURS_PER_YEAR", "RETRY_POLICIES", "COST_ASSUMPTIONS", "BUILDUP_COMPONENTS", "TaskCost",
    "capital_recovery_factor", "annuity_factor", "capital_charge_usd_per_year", "depreciation_schedule_usd",
    "usd_per_gpu_hour_breakdown", "usd_per_gpu_hour", "cost_kwargs", "break_even_price_usd",
    "workload_cost_usd", "campaign_cost_usd", "agentic_task_cost", "cost_per_successful_task",
    "successful_tasks_per_usd", "implied_step_success_probability", "lifecycle_usd_per_success",
    "price_key", "accelerator_and_gpus", "system_cost_kwargs", "system_usd_per_gpu_hour",
    "system_break_even_price_usd", "buildup_table", "market_table", "reliability_curves",
]
