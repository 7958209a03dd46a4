"""Hardware: catalogue loading, lookup and load-time validation (sources.hardware), like-for-like
peaks (model.peaks) and chapter 1's tables (analysis.hardware_tables). What the catalogue files
contain (required ids, provenance, datasheet values) is checked in tests/data/test_data_files.py."""

import math

import pytest

import pandas as pd

from intelligence_per_dollar.analysis import hardware_tables as tables
from intelligence_per_dollar.model import peaks
from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.sources import measurements
from intelligence_per_dollar.sources.io import DataError


def test_rubin_dense_vs_headline():
    """Rubin: 35 PF NVFP4 dense training beside the 50 PF 'Transformer Engine' headline."""
    r = hardware.get("VR200")
    assert r.fp4_dense_flop_per_s == pytest.approx(35e15, rel=0.01)
    assert r.headline_flop_per_s == pytest.approx(50e15, rel=0.01)
    assert peaks.headline_to_dense_ratio(r) == pytest.approx(50 / 35, rel=0.01)


def test_hopper_headline_is_two_to_four_sparse():
    assert peaks.headline_to_dense_ratio(hardware.get("H100-SXM")) == pytest.approx(2.0, rel=0.01)


def test_reconciliation_dense_ratio_exceeds_headline_ratio():
    rec = tables.reconcile_headlines("VR200", "GB200").set_index("comparison")["ratio"]
    assert rec["headline vs headline"] == pytest.approx(2.5, rel=0.02)
    assert rec["dense vs dense"] == pytest.approx(3.5, rel=0.02)


def test_lookup_alias_and_case_and_system():
    assert hardware.get("h100").id == "H100-SXM"
    assert hardware.get("Rubin").id == "VR200"
    assert hardware.get("GB200-NVL72").id == "GB200"


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError) as ex:
        hardware.get("H300")
    msg = str(ex.value)
    assert "H300" in msg and "H100-SXM" in msg and "VR200" in msg


def test_unsupported_precision_names_precision_and_accelerator():
    with pytest.raises(ValueError, match=r"fp4.*H100-SXM"):
        peaks.dense_flop_per_s(hardware.get("H100-SXM"), "fp4")
    assert peaks.dense_flop_per_s(hardware.get("H100-SXM"), "fp4", fallback=True) == hardware.get("H100-SXM").fp8_dense_flop_per_s
    with pytest.raises(ValueError, match="precision='int3'"):
        peaks.dense_flop_per_s(hardware.get("H100-SXM"), "int3")


def test_ridge_point_h100_bf16_is_about_295():
    # 989 TFLOP/s / 3.35 TB/s (Williams et al. 2009 ridge point)
    assert peaks.ridge_point_flop_per_byte(hardware.get("H100-SXM"), "bf16") == pytest.approx(295, rel=0.03)


def test_rack_totals_scale_per_gpu_by_72():
    rk = tables.rack_table(["GB200-NVL72"], "fp4").iloc[0]
    assert rk["gpus"] == 72
    assert rk["dense_flop_per_s"] == pytest.approx(72 * hardware.get("GB200").fp4_dense_flop_per_s)


def test_per_dollar_rejects_bad_price():
    with pytest.raises(ValueError, match="price_usd"):
        peaks.flop_per_s_per_usd(hardware.get("H100-SXM"), "bf16", -5)
    assert peaks.flop_per_s_per_usd(hardware.get("H100-SXM"), "bf16", 1e4) == pytest.approx(
        hardware.get("H100-SXM").bf16_dense_flop_per_s / 1e4)


def test_comparison_table_ratios_against_baseline():
    cmp = tables.comparison_table(["H100-SXM", "GB200", "VR200"], "fp4", "GB200").set_index("accelerator")
    gb, h100 = hardware.get("GB200"), hardware.get("H100-SXM")
    assert cmp.loc["GB200", "dense_x_baseline"] == 1.0 and cmp.loc["GB200", "per_w_x_baseline"] == 1.0
    assert not cmp.loc["H100-SXM", "native"]         # FP4 falls back to FP8 on Hopper
    assert cmp.loc["H100-SXM", "dense_flop_per_s"] == h100.fp8_dense_flop_per_s
    assert cmp.loc["H100-SXM", "ridge_flop_per_byte"] == pytest.approx(h100.fp8_dense_flop_per_s / h100.hbm_bytes_per_s)
    assert cmp.loc["VR200", "dense_x_baseline"] == pytest.approx(hardware.get("VR200").fp4_dense_flop_per_s
                                                                 / gb.fp4_dense_flop_per_s)
    assert cmp.loc["VR200", "flop_per_s_per_w"] == pytest.approx(peaks.flop_per_s_per_w(hardware.get("VR200"), "fp4"))


def test_roofline_curves_bend_at_the_ridge_point():
    acc = hardware.get("H200")
    ridge = peaks.ridge_point_flop_per_byte(acc, "bf16")
    df = tables.roofline_curves(["H200"], "bf16", [ridge / 10, ridge * 10])
    assert list(df["accelerator"]) == ["H200", "H200"]
    assert df["flop_per_s"].tolist() == pytest.approx([acc.bf16_dense_flop_per_s / 10, acc.bf16_dense_flop_per_s])


def test_per_dollar_table_without_a_priced_system_keeps_its_columns():
    # chapter 1 with systems=['Rubin-Ultra-NVL576'] (no analyst price) failed at its per-dollar cell with a KeyError
    # on 'system' (found by test_scenario's drawn scenarios): the table is empty but keeps its columns
    df = tables.per_dollar_table(["Rubin-Ultra-NVL576"], "fp4", {"GB200-NVL72": (2e6, 3e6, 4e6)})
    assert df.empty and {"system", "flop_per_s_per_usd", "price_usd"} <= set(df.columns)


def test_per_dollar_table_range_and_bad_price():
    df = tables.per_dollar_table(["GB200-NVL72", "HGX-H100"], "fp4", {"GB200-NVL72": (2e6, 3e6, 4e6)})
    assert list(df["system"]) == ["GB200-NVL72"]              # systems without a price are left out
    r = df.iloc[0]
    assert r.flop_per_s_per_usd_low < r.flop_per_s_per_usd < r.flop_per_s_per_usd_high
    assert r.flop_per_s_per_usd == pytest.approx(72 * hardware.get("GB200").fp4_dense_flop_per_s / 3e6)
    with pytest.raises(ValueError, match="low <= central <= high"):
        tables.per_dollar_table(["GB200-NVL72"], "fp4", {"GB200-NVL72": (4e6, 3e6, 5e6)})


def test_measured_vs_datasheet_and_gemm_efficiency():
    gemm = pd.DataFrame({"precision": ["bf16", "bf16"], "m": [1, 4096], "n": [4096, 4096], "k": [4096, 4096],
                         "flop_per_s": [1e12, 7e14], "bytes_per_s": [4e12, 1e12],
                         "arithmetic_intensity_flop_per_byte": [1.0, 1000.0]})
    hbm = pd.DataFrame({"op": ["copy"], "gib": [8.0], "bytes_per_s": [4.4e12]})
    acc = hardware.get("H200")
    mvd = tables.measured_vs_datasheet(gemm, hbm, 6.7e14, "H200").set_index("unit")
    assert mvd.loc["B/s", "ratio"] == pytest.approx(4.4e12 / acc.hbm_bytes_per_s)
    eff = tables.gemm_efficiency(gemm, "H200")
    assert eff["compute_efficiency"].tolist() == pytest.approx([1e12 / 989e12, 7e14 / 989e12], rel=0.01)
    assert eff["of_roofline"].iloc[0] == pytest.approx(1e12 / acc.hbm_bytes_per_s)   # memory roof at 1 FLOP/B
    assert list(eff["shape"]) == ["1x4096x4096", "4096x4096x4096"]


def test_provenance_table_lists_used_and_alternative_values():
    prov = tables.provenance_table(["VR200"])
    assert {"accelerator", "field", "value", "used", "kind", "source_url"} <= set(prov.columns)
    assert prov["used"].sum() == len(hardware.get("VR200").provenance)


def test_one_way_is_half_of_bidirectional():
    a = hardware.get("H100-SXM")
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
        hardware.catalogue()
    msg = str(ex.value)
    assert "accelerators.csv" in msg and f"row {row}" in msg and "'value'" in msg and "fast" in msg


def test_bad_kind_is_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    row, line = _first_row_with(path, ",power_w,")
    parts = line.split(",")
    kind = parts[5]
    _rewrite(path, line, line.replace(f",{kind},", ",rumour,", 1))
    with pytest.raises(DataError, match=rf"row {row}, column 'kind'"):
        hardware.catalogue()


def test_two_used_rows_for_one_value_are_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    _, line = _first_row_with(path, ",power_w,")
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(DataError, match="exactly one"):
        hardware.catalogue()


def test_unknown_field_is_rejected(data_copy):
    path = data_copy / "hardware" / "accelerators.csv"
    _, line = _first_row_with(path, ",power_w,")
    path.write_text(path.read_text() + line.replace(",power_w,", ",warp_drive,") + "\n")
    with pytest.raises(DataError, match="unknown field 'warp_drive'"):
        hardware.catalogue()


@pytest.mark.parametrize("row, old, new, message", [
    (",accelerator,GB200,", ",accelerator,GB200,", ",accelerator,GB999,", "GB999"),
    (",scaleup_topology,mesh,", ",scaleup_topology,mesh,", ",scaleup_topology,torus,",
     r"HGX-H100-4GPU.*torus.*switch, mesh"),
    ("HGX-H100-4GPU,scaleup_domain_gpus,4,", ",scaleup_domain_gpus,4,", ",scaleup_domain_gpus,16,",
     r"HGX-H100-4GPU.*16.*H100-SXM"),
], ids=["unknown accelerator", "topology outside switch and mesh", "domain larger than the accelerator's"])
def test_a_bad_system_row_is_rejected(data_copy, row, old, new, message):
    path = data_copy / "hardware" / "systems.csv"
    _, line = _first_row_with(path, row)
    _rewrite(path, line, line.replace(old, new))
    with pytest.raises(DataError, match=message):
        hardware.catalogue()


def test_system_named_tells_a_system_from_an_accelerator():
    """A system's name carries its NVLink domain and topology to the serving model; an accelerator's does not."""
    board = hardware.system_named("HGX-H100-4GPU")
    assert board.scaleup_domain_gpus == 4 and board.scaleup_topology == "mesh" and board.accelerator == "H100-SXM"
    assert hardware.get("HGX-H100-4GPU").id == "H100-SXM"
    assert hardware.system_named("GB200 NVL72").id == "GB200-NVL72"
    assert hardware.system_named("HGX-H100").scaleup_topology == "switch"
    for name in ("H100", "h100-sxm", "GB200", "B200"):
        assert hardware.system_named(name) is None, name
    assert hardware.system_named(None) is None


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
    assert (hbm.bytes_per_s < hardware.get("H200").hbm_bytes_per_s).all()
    assert math.isclose(measurements.power_summary()["sustained_bf16_flop_per_s"], 673.39e12, rel_tol=1e-3)


@pytest.mark.parametrize("spelling,expected", [
    ("NVIDIA H100 SXM5 80GB", "H100-SXM"), ("h200-sxm", "H200"), ("H200 141GB", "H200"),
    ("A100-SXM4-80GB", "A100-80GB"), ("GB200 NVL72", "GB200"), ("HGX H100", "H100-SXM"),
    ("Vera Rubin NVL72", "VR200"), ("gb300", "GB300"), ("H200 141 GB", "H200"), ("B200 (180GB)", "B200"),
    ("A100-SXM4-40GB", "A100-40GB"), ("A100 40GB", "A100-40GB"), ("A100", "A100-80GB"), ("NVIDIA A100 80GB", "A100-80GB"),
    ("NVIDIA H20", "H20"), ("H20 96GB", "H20"),
    ("H100 PCIe", "H100-PCIe"), ("NVIDIA H100 PCIe 80GB", "H100-PCIe"), ("H100 NVL", "H100-NVL"),
    ("H100-NVL-94GB", "H100-NVL"), ("H200 NVL", "H200-NVL"), ("GH200", "GH200-96GB"), ("GH200 96GB", "GH200-96GB"),
    ("GH200-144GB", "GH200-144GB"), ("GH200 144GB HBM3e", "GH200-144GB"),
])
def test_accelerator_lookup_accepts_common_spellings(spelling, expected):
    assert hardware.get(spelling).id == expected


@pytest.mark.parametrize("spelling", ["H100 PCIe 40GB", "H800 PCIe", "A100 120GB", "H100-94GB", "GH200 480GB", "MI300X",
                                      "nvidia", ""])
def test_accelerator_lookup_refuses_other_parts_with_the_known_ids(spelling):
    # another form factor or memory size is another part: never silently the SXM catalogue part (the H100 PCIe and
    # NVL cards are parts of their own, H100-PCIe / H100-NVL; GH200 480GB names the superchip's LPDDR5X, not its HBM)
    with pytest.raises(ValueError, match="H100-SXM"):
        hardware.get(spelling)


def test_device_memory_is_the_drivers_total_a_little_above_the_datasheet():
    """nvidia-smi totals (device_memory_bytes) sit 6-8% above the datasheet GB (the datasheets' "80 GB" is 80 GiB
    less the driver's reservation); capacity models read memory_capacity_bytes, which falls back to hbm_bytes."""
    from dataclasses import replace
    for acc_id in ("A100-40GB", "A100-80GB", "H100-SXM", "H200", "B200", "GB200", "B300", "GB300"):
        a = hardware.get(acc_id)
        assert a.device_memory_bytes and 1.05 < a.device_memory_bytes / a.hbm_bytes < 1.09, acc_id
        assert a.memory_capacity_bytes == a.device_memory_bytes
        assert replace(a, device_memory_bytes=None).memory_capacity_bytes == a.hbm_bytes
    assert hardware.get("VR200").memory_capacity_bytes == hardware.get("VR200").hbm_bytes   # no driver figure yet


def test_serving_capacity_uses_the_device_memory():
    """Llama-3.3-70B in FP8 on one H100 (TensorRT-LLM v0.20 ran it at 742 tok/s/GPU): with the datasheet 80 GB
    its 72.7 GB of weights do not even fit; with the driver's 85.5 GB they do, with room for KV cache."""
    from dataclasses import replace
    from intelligence_per_dollar.model import inference
    h100 = hardware.get("H100-SXM")
    args = ("Llama-3.3-70B", 1, "fp8", 1000, 1000)
    with pytest.raises(ValueError, match="the weights do not fit"):
        inference.estimate(args[0], replace(h100, device_memory_bytes=None), *args[1:], weight_offload=False)
    dev = inference.estimate(args[0], h100, *args[1:])
    assert dev.max_concurrency >= 8 and dev.weight_offload_fraction == 0.0


def test_the_fp4_kernel_table_sets_both_timings_beside_each_published_kernel():
    """Chapter 1's B200 FP4 kernel chart: every published kernel appears once per timing; the fitted serving terms are
    closer to the measurements than the max roofline at the median, and the max roofline is never slower than the
    fitted terms below 4,096 rows (the ramp only lengthens small products)."""
    df = tables.dense_fp4_kernels()
    long = tables.dense_fp4_kernels_long(df)
    assert len(df) == 23 and len(long) == 46 and long.groupby("terms").size().tolist() == [23, 23]
    assert df["error"].abs().median() < 0.5 * df["max_roofline_error"].abs().median()
    small = df[df["m"] < 4096]
    assert (small["max_roofline_tflop_per_s"] >= small["model_tflop_per_s"]).all()


def test_hopper_variants_share_the_die_but_not_the_board():
    """GH200's GPU is the H100 SXM's GH100 die at the same tensor peaks with more, faster HBM and an NVLink-C2C host
    link; the PCIe / NVL cards run it at a lower clock and power (lower dense peaks), H100 PCIe with no NVLink in the
    standard server (domain 1) and H100 NVL as a bridged pair; H200 NVL is the H200's memory on a 600 W card."""
    sxm, h200 = hardware.get("H100-SXM"), hardware.get("H200")
    for gh in ("GH200-96GB", "GH200-144GB"):
        g = hardware.get(gh)
        assert (g.bf16_dense_flop_per_s, g.fp8_dense_flop_per_s) == (sxm.bf16_dense_flop_per_s, sxm.fp8_dense_flop_per_s)
        assert g.hbm_bytes > sxm.hbm_bytes and g.hbm_bytes_per_s > sxm.hbm_bytes_per_s
        assert g.host_link_bytes_per_s > 5 * sxm.host_link_bytes_per_s and g.fp4_dense_flop_per_s is None
    assert hardware.get("GH200-144GB").hbm_bytes_per_s > h200.hbm_bytes_per_s > hardware.get("GH200-96GB").hbm_bytes_per_s
    pcie, nvl, h200nvl = hardware.get("H100-PCIe"), hardware.get("H100-NVL"), hardware.get("H200-NVL")
    assert pcie.bf16_dense_flop_per_s < nvl.bf16_dense_flop_per_s == h200nvl.bf16_dense_flop_per_s < sxm.bf16_dense_flop_per_s
    assert (pcie.scaleup_domain_gpus, nvl.scaleup_domain_gpus) == (1, 2)
    assert h200nvl.hbm_bytes == h200.hbm_bytes and h200nvl.power_w < h200.power_w
    assert max(pcie.power_w, nvl.power_w) <= 400 < h200nvl.power_w
