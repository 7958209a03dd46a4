import numpy as np
import pytest

from intelligence_per_dollar.model import efficiency as ef
from intelligence_per_dollar.sources import hardware, measurements


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


def test_every_catalogue_accelerator_has_ceilings():
    for acc in hardware.accelerators():
        c = ef.ceilings(acc)
        assert 0 < c.gemm_fraction("bf16") <= 1


def test_bad_scenario():
    with pytest.raises(ValueError, match="scenario"):
        ef.ceilings("H200", "optimistic")
