"""Ledger rows from chapter 3: weight sync "in under two seconds", and what Vera's "+30% per CPU"
would change in an RL step."""

from __future__ import annotations

from intelligence_per_dollar.analysis.claims.definitions import CANDIDATE_SYSTEM, Claim
from intelligence_per_dollar.analysis.claims.intervals import interval_text
from intelligence_per_dollar.analysis.claims.rl import rl_fleet, rl_step, weight_sync_case, weight_sync_range
from intelligence_per_dollar.analysis.claims.row import Context, Row
from intelligence_per_dollar.analysis.claims.verdicts import decide
from intelligence_per_dollar.sources import hardware, workloads


def weight_sync_row(c: Claim, ctx: Context) -> Row:
    """Chapter 3's predicted time of the published case, over the weight-sync efficiency range."""
    rng = weight_sync_range().set_index("end")
    lo, cen, hi = (float(rng.loc[e, "efficiency"]) for e in ("low", "central", "high"))
    t = rng["seconds"]
    row = Row(c, deciding="weight_sync_efficiency (achieved fraction of the NIC line rate, chapter 3)")
    row.p5, row.p50, row.p95 = float(t.min()), float(t["central"]), float(t.max())
    row.interval = f"range over weight_sync_efficiency {lo:g}-{hi:g} (central {cen:g})"
    row.estimate = interval_text(row.p5, row.p50, row.p95) + " s"
    r = weight_sync_case()
    row.detail = (f"{r['model_name']}: {r['senders']:.0f} trainer GPUs to {r['receivers']:.0f} rollout GPUs (replicas "
                  f"of {r['receiver_shard_gpus']:.0f}), {r['schedule']} over {r['link_bytes_per_s'] * 8 / 1e9:g} Gb/s "
                  f"links; measured {r['measured_s']:g} s ({r['citation']})")
    row.verdict = decide(c.rule, c.claimed_value, row.p5, row.p50, row.p95, c.tolerance,
                         condition="the NICs sustain the high end of weight_sync_efficiency")
    return row


def vera_cpu_row(c: Claim, ctx: Context) -> Row:
    """Unverifiable; the estimate shows how much cheaper chapter 3's RL step gets if it were true."""
    accelerator = hardware.get_system(CANDIDATE_SYSTEM).accelerator
    base = rl_step(accelerator, cpu_speed_factor=1.0)
    fast = rl_step(accelerator, cpu_speed_factor=c.claimed_value)
    change = 1.0 - fast.cost_usd / base.cost_usd
    rollout, trainer = rl_fleet()
    row = Row(c, deciding="sandbox CPU-seconds per rollout and sandbox CPUs (chapter 3)")
    row.p5 = row.p50 = row.p95 = float(change)
    row.interval = "central assumptions only"
    row.estimate = f"{change:.1%} cheaper RL step if true"
    row.detail = (f"{workloads.rl().policy} RL step on {accelerator} ({rollout} rollout + {trainer} trainer GPUs): "
                  f"{base.step_time_s:.0f} s at x1.0 CPU speed, {fast.step_time_s:.0f} s at x{c.claimed_value:g}; "
                  f"environment share {base.shares['environment']:.1%}")
    row.verdict = decide("unverifiable", c.claimed_value, 0, 0, 0)
    return row
