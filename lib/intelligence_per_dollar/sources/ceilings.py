"""Efficiency ceilings per accelerator (``data/efficiency/ceilings.csv``): typed, validated rows.

One row per (accelerator, quantity) with a low/central/high value, the measured run it is
calibrated on (if any) and its provenance; accelerator ``*`` is the default for every other one.
:mod:`intelligence_per_dollar.model.efficiency` turns the rows into :class:`Ceilings`.
"""

from __future__ import annotations

import functools

from intelligence_per_dollar.sources import io

__all__ = ["rows", "grouped_gemm_h800", "dense_fp4_gemm_b200"]

_COLUMNS = ("accelerator", "quantity", "low", "central", "high", "calibration_run", "source_url", "date_read",
            "kind", "note")


@functools.lru_cache(maxsize=4)
def _rows(data_dir: str, quantities: tuple[str, ...]) -> tuple[dict, ...]:
    path = io.data_path("efficiency", "ceilings.csv")
    out = []
    for row, rec in io.read_rows(path, _COLUMNS):
        prov = io.check_provenance(path, row, rec)
        if rec["quantity"] not in quantities:
            raise io.DataError(f"{path}, row {row}, column 'quantity': unknown '{rec['quantity']}'; "
                               f"allowed: {', '.join(quantities)}")
        vals = {s: io.parse_float(path, row, s, rec[s], positive=True, allow_zero=False)
                for s in ("low", "central", "high")}
        if not vals["low"] <= vals["central"] <= vals["high"]:
            raise io.DataError(f"{path}, row {row}: low <= central <= high is violated ({vals})")
        out.append({"accelerator": rec["accelerator"], "quantity": rec["quantity"], **vals,
                    "calibration_run": rec["calibration_run"], "provenance": prov})
    return tuple(out)


def rows(quantities: tuple[str, ...]) -> tuple[dict, ...]:
    """Every row of ``data/efficiency/ceilings.csv``; ``quantity`` must be one of ``quantities``.

    Each row: accelerator, quantity, low, central, high, calibration_run, provenance.
    """
    return _rows(str(io.data_dir()), tuple(quantities))


_PROVENANCE = ("source_url", "date_read", "kind")
_GROUPED_LAYOUTS = ("contiguous", "masked")


@functools.lru_cache(maxsize=8)
def _kernel_table(data_dir: str, name: str, label: str, numbers: tuple[str, ...],
                  labels: tuple[str, ...] | None,
                  texts: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> tuple[dict, ...]:
    """Rows of a published-kernel file of ``data/efficiency/``: a text column ``label`` (one of ``labels``, or any
    non-empty text when None), further text columns ``texts`` (name, allowed values), the positive ``numbers`` and
    the provenance columns."""
    path = io.data_path("efficiency", name)
    checks_ = ((label, labels), *texts)
    out = []
    for row, rec in io.read_rows(path, (*(c for c, _ in checks_), *numbers, *_PROVENANCE)):
        io.check_provenance(path, row, rec)
        for col, allowed_values in checks_:
            text = rec[col]
            if (allowed_values is not None and text not in allowed_values) or not text:
                allowed = ", ".join(allowed_values) if allowed_values is not None else "a non-empty name"
                raise io.DataError(f"{path}, row {row}, column '{col}': '{text}' is not allowed; allowed: {allowed}")
        vals = {c: io.parse_float(path, row, c, rec[c], positive=True, allow_zero=False) for c in numbers}
        out.append({**{c: rec[c] for c, _ in checks_}, **vals})
    return tuple(out)


def grouped_gemm_h800() -> tuple[dict, ...]:
    """DeepGEMM's published grouped FP8 GEMMs on H800 (``data/efficiency/grouped_gemm_h800.csv``): layout,
    groups, m_per_group, n, k, tflop_per_s per kernel; the measurements behind ``grouped_gemm_overlap_norm``."""
    return _kernel_table(str(io.data_dir()), "grouped_gemm_h800.csv", "layout",
                         ("groups", "m_per_group", "n", "k", "tflop_per_s"), _GROUPED_LAYOUTS)


def dense_fp4_gemm_b200() -> tuple[dict, ...]:
    """Published dense block-scaled FP4 GEMMs on B200 (``data/efficiency/dense_fp4_gemm_b200.csv``: DeepGEMM PR 348's
    MXF4 kernel and cuBLASLt, vLLM PR 20578's CUTLASS NVFP4 sweep): kernel, m, n, k, output_bytes, tflop_per_s per
    kernel; the measurements behind ``dense_fp4_overlap_norm`` and ``dense_fp4_kernel_s``."""
    return _kernel_table(str(io.data_dir()), "dense_fp4_gemm_b200.csv", "kernel",
                         ("m", "n", "k", "output_bytes", "tflop_per_s"), None)


_CE_PROVIDERS = ("torch", "liger")


def cross_entropy_h100nvl() -> tuple[dict, ...]:
    """PyTorch's and Liger-Kernel's cross entropy timed on one H100 NVL by Liger-Kernel's benchmark suite
    (``data/efficiency/cross_entropy_h100nvl.csv``): provider, mode (``forward`` or ``full``), vocab, tokens,
    logit_bytes, time_ms per kernel; the measurement behind the loss traffic of the training model
    (:data:`~intelligence_per_dollar.model.training.compute.LOSS_TRAFFIC_BYTES`)."""
    return _kernel_table(str(io.data_dir()), "cross_entropy_h100nvl.csv", "provider",
                         ("vocab", "tokens", "logit_bytes", "time_ms"), _CE_PROVIDERS,
                         (("mode", ("forward", "full")),))
