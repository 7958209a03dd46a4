"""One colour per thing and readable tables: the palette, legend order, table headers and units."""

import pandas as pd
import pytest

from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.views import charts, charts_training, palette, tables


def test_every_accelerator_and_system_has_one_colour():
    colours = palette.hardware_colours()
    assert set(hardware.accelerators()) <= set(palette.ACCELERATOR_COLOURS)
    assert len(set(palette.ACCELERATOR_COLOURS.values())) == len(palette.ACCELERATOR_COLOURS)
    for sid, spec in hardware.systems().items():
        assert colours[sid] == palette.ACCELERATOR_COLOURS[spec.accelerator], sid


@pytest.mark.parametrize("values", [["GB200", "VR200"], ["VR200", "H100-SXM", "GB200"], ["GB200-NVL72", "GB200"]])
def test_gb200_is_the_same_colour_in_every_chart(values):
    domain, rng = palette.colours_for(values)
    assert dict(zip(domain, rng))["GB200"] == palette.ACCELERATOR_COLOURS["GB200"]


@pytest.mark.parametrize("values, expected", [
    (["1600 Gb/s per GPU", "200 Gb/s per GPU", "400 Gb/s per GPU", "800 Gb/s per GPU"],
     ["200 Gb/s per GPU", "400 Gb/s per GPU", "800 Gb/s per GPU", "1600 Gb/s per GPU"]),
    (["k=1", "k=20", "k=5", "k=50"], ["k=1", "k=5", "k=20", "k=50"]),
    (["VR200", "A100-80GB", "GB200"], ["A100-80GB", "GB200", "VR200"]),
    (["contradicted", "supported", "cannot be checked"], ["supported", "contradicted", "cannot be checked"]),
])
def test_legends_are_in_a_sensible_order(values, expected):
    assert palette.order(values) == expected


def test_too_many_series_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="distinct series"):
        palette.colours_for([f"s{i}" for i in range(len(palette.SEQUENCE) + 1)])


def test_chart_colour_scale_is_the_palette_and_legends_are_never_cut():
    df = pd.DataFrame({"x": [1, 2, 1, 2], "y": [1, 2, 3, 4], "accelerator": ["VR200", "VR200", "GB200", "GB200"]})
    spec = charts.line_xy(df, x="x", y="y", color="accelerator", title="t", x_title="x", y_title="y").to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale == {"domain": ["GB200", "VR200"], "range": [palette.ACCELERATOR_COLOURS["GB200"],
                                                            palette.ACCELERATOR_COLOURS["VR200"]]}
    legend = charts._theme()["config"]["legend"]
    assert legend["labelLimit"] == 0 and legend["titleLimit"] == 0


def test_headline_gpu_bars_are_drawn_from_zero_on_a_linear_axis():
    """A bar on a log axis has no base: the headline chart drew every bar with zero height."""
    df = pd.DataFrame({"accelerator": ["GB200", "VR200"] * 2, "regime": ["a"] * 2 + ["b"] * 2,
                       "gpus": [138240, 46080, 81504, 30960]})
    spec = charts_training.regime_bars(df, title="t").to_dict()
    y = spec["layer"][0]["encoding"]["y"] if "encoding" not in spec else spec["encoding"]["y"]
    assert y["scale"].get("type", "linear") == "linear" and y["scale"]["zero"] is True


def test_predicted_vs_measured_axis_holds_every_case():
    """The validation scatter's log axis spans every ratio: a fixed 0.4-2.5 domain drew the runs the model puts 14-19x
    fast above the plot, over its title."""
    df = pd.DataFrame({"case": list("abcd"), "group": ["g"] * 4, "family": ["f"] * 4, "measured": [1.0] * 4,
                       "predicted": [19.3, 1.0, 0.05, None], "error": [18.3, 0.0, -0.95, None], "unit": ["u"] * 4})
    spec = charts_training.predicted_vs_measured(df, title="t").to_dict()
    y = next(layer["encoding"]["y"] for layer in spec["layer"] if layer["encoding"]["y"].get("field") == "ratio")
    lo, hi = y["scale"]["domain"]
    assert lo <= 0.05 and hi >= 19.3
    narrow = charts_training.predicted_vs_measured(df.assign(predicted=[1.2, 1.0, 0.9, None]), title="t").to_dict()
    y = next(layer["encoding"]["y"] for layer in narrow["layer"] if layer["encoding"]["y"].get("field") == "ratio")
    assert y["scale"]["domain"] == [0.4, 2.5]


def test_predicted_vs_measured_places_cases_by_position_not_by_a_list_of_names():
    """Sorting a nominal axis by the list of case names compiles to one nested conditional per case; past ~1,350 cases
    Vega's expression parser overflowed its call stack and the chapter's validation scatter stayed blank (session 54).
    The cases sit at their table position on a quantitative axis, whatever their number."""
    n = 3000
    df = pd.DataFrame({"case": [f"c{i}" for i in range(n)], "group": ["g"] * n, "family": ["f"] * n,
                       "measured": [1.0] * n, "predicted": [1.1] * n, "error": [0.1] * n, "unit": ["u"] * n})
    spec = charts_training.predicted_vs_measured(df, title="t").to_dict()
    pts = next(layer for layer in spec["layer"] if layer["encoding"]["y"].get("field") == "ratio")
    x = pts["encoding"]["x"]
    assert x["field"] == "position" and x["type"] == "quantitative" and "sort" not in x
    assert x["scale"]["domain"] == [-1, n]
    assert "c2999" not in str(x) and "case" in {t.get("field") for t in pts["encoding"]["tooltip"]}


def test_si_scale_puts_axes_in_physical_units():
    assert charts.si_scale([3e12, 8e12, 22e12], "B/s") == (1e12, "TB/s")
    assert charts.si_scale([2e15, 7e16], "FLOP/s") == (1e15, "PFLOP/s")


@pytest.mark.parametrize("col, values, header, cells", [
    ("hbm_bytes_per_s", [8e12, 22e12], "HBM bandwidth (TB/s)", ["8", "22"]),
    ("dense_flop_per_s", [1e16, 3.5e16], "dense compute (PFLOP/s)", ["10", "35"]),
    ("price_usd", [3.75e6, 7.8e6], "price (USD M)", ["3.75", "7.8"]),
    ("usd_per_gpu_hour", [2.9995, 6.0585], "USD per GPU-hour", ["3", "6.06"]),
    ("native", [True, False], "native", ["yes", "no"]),
    ("year", [2024, 2026], "year", ["2024", "2026"]),
    ("generation_share", [0.7069, 0.7616], "generation share (%)", ["70.7", "76.2"]),
    ("scaleup_bytes_per_s_one_way", [9e11, 1.8e12], "scale-up bandwidth, one way (TB/s)", ["0.9", "1.8"]),
])
def test_table_columns_read_with_units_and_sensible_rounding(col, values, header, cells):
    head, fmt = tables.column_format(col, pd.Series(values))
    assert head == header
    assert [fmt(v) for v in values] == cells


def test_table_html_numbers_captions_and_leaves_no_raw_floats():
    df = pd.DataFrame({"system": ["GB200-NVL72"], "hbm_bytes": [13392e9], "gpus": [72], "ok": [True]})
    html = tables.table_html(df, caption="A takeaway.")
    assert "data-kind='Table'" in html and "A takeaway." in html
    assert "13392000000000" not in html and "13,392" in html and ">yes<" in html


def test_provenance_summary_counts_values_by_kind():
    prov = pd.DataFrame({"accelerator": ["GB200", "GB200", "VR200"], "used": [True, False, True],
                         "kind": ["vendor-claimed", "estimate", "estimate"]})
    s = tables.provenance_summary(prov).set_index("accelerator")
    assert s.loc["GB200", "values used"] == 1 and s.loc["GB200", "alternatives set aside"] == 1
    assert s.loc["VR200", "estimate"] == 1 and s.loc["VR200", "vendor-claimed"] == 0
