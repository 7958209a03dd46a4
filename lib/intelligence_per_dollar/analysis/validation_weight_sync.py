"""Validation of the weight-sync model against published figures (``data/runs/weight_sync_runs.csv``).

:func:`weight_sync_table` predicts every published trainer -> rollout weight update with
:func:`intelligence_per_dollar.model.post_training.weight_sync_time_s` (``error`` is
``predicted / measured - 1``, signed); :func:`nic_sweep_table` moves Perplexity's Kimi-K2 setup
(256 BF16 trainers -> 128 FP8 rollout GPUs, point-to-point; Perplexity Research 2025) across NIC
speeds and rollout replica sizes, with Kimi-K2's published parameter count from the models catalogue.
"""

from __future__ import annotations

import pandas as pd

from intelligence_per_dollar.model import post_training
from intelligence_per_dollar.sources import models, runs

__all__ = ["weight_sync_table", "nic_sweep_table"]


def _efficiency(efficiency: float | None) -> float:
    return efficiency if efficiency is not None else post_training.assumptions()["weight_sync_efficiency"].central


def weight_sync_table(efficiency: float | None = None) -> pd.DataFrame:
    """case, group, model, citation, schedule, measured, predicted, error, note for every published figure.

    ``efficiency`` (achieved fraction of the link rate) defaults to the central
    ``weight_sync_efficiency`` of ``data/assumptions/post_training.csv``.
    """
    eff = _efficiency(efficiency)
    recs = []
    for r in runs.weight_sync_runs(post_training.SCHEDULES):
        pred = post_training.weight_sync_time_s(
            r["params"], senders=int(r["senders"]), receivers=int(r["receivers"]),
            receiver_shard_gpus=int(r["receiver_shard_gpus"]), link_bytes_per_s=r["link_bytes_per_s"],
            efficiency=eff, src_bytes_per_param=r["src_bytes_per_param"], dst_bytes_per_param=r["dst_bytes_per_param"],
            schedule=r["schedule"], host_link_bytes_per_s=r["host_link_bytes_per_s"])
        recs.append({"case": r["id"], "group": r["group"], "model": r["model_name"], "citation": r["citation"],
                     "schedule": r["schedule"], "measured": r["measured_s"], "predicted": pred,
                     "error": pred / r["measured_s"] - 1.0, "note": r["note"]})
    return pd.DataFrame.from_records(recs)


def nic_sweep_table(efficiency: float | None = None, gbps=(200, 400, 800, 1600),
                    shard_gpus=(8, 16, 32, 64), model: str = "Kimi-K2") -> pd.DataFrame:
    """Seconds to push ``model`` (published total parameters, FP8) from 256 BF16 trainers to 128 rollout
    GPUs over the p2p schedule, per NIC speed (Gb/s per GPU) and rollout replica size.

    Columns: network (label), gbps, shard_gpus, seconds.
    """
    eff = _efficiency(efficiency)
    params = models.published(model).total_params
    rows = [{"network": f"{g} Gb/s per GPU", "gbps": g, "shard_gpus": sh,
             "seconds": post_training.weight_sync_time_s(params, senders=256, receivers=128, receiver_shard_gpus=sh,
                                                         link_bytes_per_s=g / 8 * 1e9, efficiency=eff)}
            for g in gbps for sh in shard_gpus]
    return pd.DataFrame(rows)
