"""What one serving estimate returns (:class:`Estimate`, built by :func:`inference.estimate`) and the per-token
cost and power of a throughput: dollars per million tokens and tokens per second per megawatt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from intelligence_per_dollar.sources import checks

__all__ = ["Estimate", "usd_per_mtok", "tokens_per_s_per_mw"]


def usd_per_mtok(output_tokens_per_s_per_gpu, usd_per_gpu_hour):
    """Cost per million output tokens: ``$/GPU-h / 3600 / (tokens/s per GPU) x 1e6``."""
    price = checks.array("usd_per_gpu_hour", usd_per_gpu_hour, low=0.0)
    tps = checks.array("output_tokens_per_s_per_gpu", output_tokens_per_s_per_gpu, low=0.0, low_open=True)
    return price / 3600.0 / tps * 1e6


def tokens_per_s_per_mw(output_tokens_per_s_per_gpu, power_w_per_gpu):
    """Output tokens per second per megawatt of (GPU or all-in) power."""
    p = checks.array("power_w_per_gpu", power_w_per_gpu, low=0.0, low_open=True)
    return checks.array("output_tokens_per_s_per_gpu", output_tokens_per_s_per_gpu, low=0.0) / p * 1e6


@dataclass(frozen=True)
class Estimate:
    """One serving configuration at one concurrency (SI units)."""

    output_tokens_per_s_per_gpu: float
    tokens_per_s_per_user: float
    ttft_s: float
    step_time_s: float
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: Mapping[str, float]
    time_breakdown_s: Mapping[str, float]
    parallelism: Mapping[str, int]
    concurrency: float
    max_concurrency: float
    gpus: int
    accelerator: str
    precision: str
    input_tokens: int
    output_tokens: int
    mode: str
    power_w_per_gpu: float
    weight_offload_fraction: float = 0.0    # share of the layer weights streamed from host memory (serving_offload)

    @property
    def input_tokens_per_s_per_gpu(self) -> float:
        """Prompt tokens processed per second per GPU (equal to output x ISL/OSL when aggregated)."""
        if self.mode == "prefill":
            return self.output_tokens_per_s_per_gpu * self.input_tokens
        return self.output_tokens_per_s_per_gpu * self.input_tokens / self.output_tokens

    def usd_per_mtok(self, usd_per_gpu_hour: float) -> float:
        """$ per million output tokens at ``usd_per_gpu_hour`` (prefill mode: per million input tokens)."""
        tps = self.input_tokens_per_s_per_gpu if self.mode == "prefill" else self.output_tokens_per_s_per_gpu
        return float(usd_per_mtok(tps, usd_per_gpu_hour))

    def tokens_per_s_per_mw(self, power_w_per_gpu: float | None = None) -> float:
        """Output tokens/s per MW; ``power_w_per_gpu`` defaults to the GPU's TDP (pass all-in power)."""
        return float(tokens_per_s_per_mw(self.output_tokens_per_s_per_gpu, power_w_per_gpu or self.power_w_per_gpu))
