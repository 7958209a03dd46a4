import numpy as np
import pytest

from intelligence_per_dollar.model import efficiency as ef
from intelligence_per_dollar.sources import hardware, measurements
from intelligence_per_dollar.sources.io import DataError


def test_calibration_reproduces_h200():
    cal = ef.calibration()
    assert 0.75 < cal["gemm_burst_fraction_bf16"] < 0.82
    assert cal["power_throttle"] == pytest.approx(673.4 / 786.6, rel=0.01)
    c = ef.ceilings("H200")
    # sustained BF16 fraction is the measured 673 TFLOP/s power-capped rate
    assert c.gemm_fraction("bf16") * 989e12 == pytest.approx(673.4e12, rel=0.01)


def test_gemm_curve_matches_measured_shapes():
    acc, c = hardware.get("H200"), ef.ceilings("H200", "high")
    g = measurements.gemm()
    g = g[(g.precision == "bf16") & (g.m >= 8)]
    t = ef.gemm_time_s(g.m, g.n, g.k, peak_flop_per_s=acc.bf16_dense_flop_per_s, hbm_bytes_per_s=acc.hbm_bytes_per_s,
                       ceil=ef.ceilings("H200"), precision="bf16", operand_bytes=2.0)
    err = np.abs(t / g.seconds.to_numpy() - 1)
    assert np.median(err) < 0.2
    assert c.scenario == "high"


def test_efficiency_saturates_and_rises_with_size():
    acc, c = hardware.get("H100-SXM"), ef.ceilings("H100-SXM")
    sizes = np.array([256, 1024, 4096, 16384])
    e = ef.gemm_efficiency(sizes, sizes, sizes, peak_flop_per_s=acc.bf16_dense_flop_per_s,
                           hbm_bytes_per_s=acc.hbm_bytes_per_s, ceil=c, precision="bf16", operand_bytes=2)
    assert np.all(np.diff(e) > 0) and e[-1] <= c.gemm_fraction("bf16") + 1e-12
    a = ef.attention_efficiency(np.array([1024, 8192, 65536]), c)
    assert np.all(np.diff(a) > 0)


def test_bad_scenario():
    with pytest.raises(ValueError, match="scenario"):
        ef.ceilings("H200", "optimistic")


def test_bad_ceilings_row_names_file_row_column(data_copy):
    path = data_copy / "efficiency" / "ceilings.csv"
    lines = path.read_text().splitlines()
    i = next(n for n, line in enumerate(lines) if ",hbm_fraction," in line and not line.startswith("#"))
    lines[i] = lines[i].replace(",hbm_fraction,", ",warp_fraction,")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=rf"ceilings.csv, row {i + 1}, column 'quantity': unknown 'warp_fraction'"):
        ef.ceilings("H200")


def test_ceilings_record_and_precision_fractions():
    c = ef.ceilings("H200", "low")
    assert c.accelerator == "H200" and c.scenario == "low"
    assert c.gemm_fraction("fp8") == pytest.approx(c.gemm_fraction("bf16") * c.precision_ratio_fp8)
    with pytest.raises(ValueError, match="precision='fp64' has no GEMM ceiling"):
        c.gemm_fraction("fp64")
