"""Hardware catalogue: loading, lookup, normalisation and load-time validation."""

import math

import pytest

from intelligence_per_dollar.sources import io, measurements
from intelligence_per_dollar.sources import hardware as hw
from intelligence_per_dollar.sources.io import DataError

REQUIRED_ACCELERATORS = ("A100-80GB", "H100-SXM", "H800", "H200", "B200", "GB200", "B300", "GB300", "VR200",
                         "Rubin-Ultra")
REQUIRED_SYSTEMS = ("HGX-H100", "HGX-H200", "GB200-NVL72", "GB300-NVL72", "Vera-Rubin-NVL72", "Rubin-Ultra-NVL576")


def test_catalogue_has_every_required_id():
    accs, syss = hw.catalogue()
    assert set(REQUIRED_ACCELERATORS) <= set(accs)
    assert set(REQUIRED_SYSTEMS) <= set(syss)


def test_every_used_value_has_provenance():
    for acc in hw.accelerators().values():
        for field, prov in acc.provenance.items():
            assert prov.source_url.startswith("http"), (acc.id, field)
            assert prov.kind in io.KINDS
            assert len(prov.date_read) == 10


@pytest.mark.parametrize("name,bf16,hbm_bw", [
    ("H100-SXM", 989e12, 3.35e12), ("H200", 989e12, 4.8e12), ("A100-80GB", 312e12, 2.0e12),
])
def test_hopper_ampere_datasheet_values(name, bf16, hbm_bw):
    a = hw.get(name)
    assert a.bf16_dense_flop_per_s == pytest.approx(bf16, rel=0.01)
    assert a.hbm_bytes_per_s == pytest.approx(hbm_bw, rel=0.03)


def test_rubin_dense_vs_headline():
    """Rubin: 35 PF NVFP4 dense training beside the 50 PF 'Transformer Engine' headline."""
    r = hw.get("VR200")
    assert r.fp4_dense_flop_per_s == pytest.approx(35e15, rel=0.01)
    assert r.headline_flop_per_s == pytest.approx(50e15, rel=0.01)
    assert hw.headline_to_dense_ratio(r) == pytest.approx(50 / 35, rel=0.01)


def test_hopper_headline_is_two_to_four_sparse():
    assert hw.headline_to_dense_ratio(hw.get("H100-SXM")) == pytest.approx(2.0, rel=0.01)


def test_reconciliation_dense_ratio_exceeds_headline_ratio():
    rec = hw.reconcile_headlines("VR200", "GB200").set_index("comparison")["ratio"]
    assert rec["headline vs headline"] == pytest.approx(2.5, rel=0.02)
    assert rec["dense vs dense"] == pytest.approx(3.5, rel=0.02)


def test_lookup_alias_and_case_and_system():
    assert hw.get("h100").id == "H100-SXM"
    assert hw.get("Rubin").id == "VR200"
    assert hw.get("GB200-NVL72").id == "GB200"


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError) as ex:
        hw.get("H300")
    msg = str(ex.value)
    assert "H300" in msg and "H100-SXM" in msg and "VR200" in msg


def test_unsupported_precision_names_precision_and_hardware():
    with pytest.raises(ValueError, match=r"fp4.*H100-SXM"):
        hw.dense_flop_per_s(hw.get("H100-SXM"), "fp4")
    assert hw.dense_flop_per_s(hw.get("H100-SXM"), "fp4", fallback=True) == hw.get("H100-SXM").fp8_dense_flop_per_s
    with pytest.raises(ValueError, match="precision='int3'"):
        hw.dense_flop_per_s(hw.get("H100-SXM"), "int3")


def test_ridge_point_h100_bf16_is_about_295():
    # 989 TFLOP/s / 3.35 TB/s (Williams et al. 2009 ridge point)
    assert hw.ridge_point_flop_per_byte(hw.get("H100-SXM"), "bf16") == pytest.approx(295, rel=0.03)


def test_rack_totals_scale_per_gpu_by_72():
    rk = hw.rack_table(["GB200-NVL72"], "fp4").iloc[0]
    assert rk["gpus"] == 72
    assert rk["dense_flop_per_s"] == pytest.approx(72 * hw.get("GB200").fp4_dense_flop_per_s)


def test_per_dollar_rejects_bad_price():
    with pytest.raises(ValueError, match="price_usd"):
        hw.flop_per_s_per_usd(hw.get("H100-SXM"), "bf16", -5)
    assert hw.flop_per_s_per_usd(hw.get("H100-SXM"), "bf16", 1e4) == pytest.approx(
        hw.get("H100-SXM").bf16_dense_flop_per_s / 1e4)


def test_one_way_is_half_of_bidirectional():
    a = hw.get("H100-SXM")
    assert a.scaleup_bytes_per_s_one_way * 2 == a.scaleup_bytes_per_s_bidirectional
    assert a.scaleup_bytes_per_s_one_way == pytest.approx(450e9, rel=0.01)


# ---- load-time validation: a bad file names the file, row and column ----------------------

def _rewrite(path, old, new, count=1):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))


def _first_row_with(path, needle):
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line and not line.startswith("#"):
            return i, line
    raise AssertionError(needle)


def test_bad_number_names_file_row_column(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    row, line = _first_row_with(path, ",hbm_bytes_per_s,")
    value = line.split(",")[2]
    _rewrite(path, line, line.replace(f",hbm_bytes_per_s,{value},", ",hbm_bytes_per_s,fast,"))
    with pytest.raises(DataError) as ex:
        hw.catalogue()
    msg = str(ex.value)
    assert "accelerators.csv" in msg and f"row {row}" in msg and "'value'" in msg and "fast" in msg


def test_bad_kind_is_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    row, line = _first_row_with(path, ",power_w,")
    parts = line.split(",")
    kind = parts[5]
    _rewrite(path, line, line.replace(f",{kind},", ",rumour,", 1))
    with pytest.raises(DataError, match=rf"row {row}, column 'kind'"):
        hw.catalogue()


def test_two_used_rows_for_one_value_are_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    _, line = _first_row_with(path, ",power_w,")
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(DataError, match="exactly one"):
        hw.catalogue()


def test_unknown_field_is_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    _, line = _first_row_with(path, ",power_w,")
    path.write_text(path.read_text() + line.replace(",power_w,", ",warp_drive,") + "\n")
    with pytest.raises(DataError, match="unknown field 'warp_drive'"):
        hw.catalogue()


def test_system_naming_unknown_accelerator_is_rejected(data_copy):
    path = data_copy / "hardware" / "systems.csv"
    _, line = _first_row_with(path, ",accelerator,GB200,")
    _rewrite(path, line, line.replace(",accelerator,GB200,", ",accelerator,GB999,"))
    with pytest.raises(DataError, match="GB999"):
        hw.catalogue()


def test_measured_gemm_bad_value(data_copy):
    path = data_copy / "measurements" / "h200-2026-11-29" / "gemm.csv"
    lines = path.read_text().splitlines()
    cells = lines[3].split(",")
    cells[4] = "-1"
    lines[3] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"gemm.csv, row 4, column 'seconds'"):
        measurements._gemm.cache_clear()
        measurements.gemm()
    measurements._gemm.cache_clear()


def test_measurements_in_si_units():
    g = measurements.gemm()
    big = g[(g.precision == "bf16") & (g.m == 4096) & (g.n == 4096)].iloc[0]
    assert big.flop_per_s == pytest.approx(2 * 4096**3 / big.seconds)
    assert 5e14 < big.flop_per_s < 9.89e14  # below the datasheet peak, above half of it
    hbm = measurements.hbm()
    assert (hbm.bytes_per_s < hw.get("H200").hbm_bytes_per_s).all()
    assert math.isclose(measurements.power_summary()["sustained_bf16_flop_per_s"], 673.39e12, rel_tol=1e-3)
