"""tools/eval_runs.py: a file of held-out runs is judged exactly as the book's validation table
judges the same rows, and a run the model refuses is listed with its reason, not dropped."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.sources import io

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("eval_runs", ROOT / "tools" / "eval_runs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _subset(tmp_path, ids, edit=None):
    src = io.data_path("runs", "training_runs.csv").read_text().splitlines()
    header = next(i for i, line in enumerate(src) if line.startswith("id,"))
    rows = [line for line in src[header + 1:] if line.split(",", 1)[0] in ids]
    if edit:
        rows = [edit(r) for r in rows]
    path = tmp_path / "held_out.csv"
    path.write_text("\n".join(src[:header + 1] + rows) + "\n")
    return path


def test_held_out_file_gets_the_book_s_errors(tmp_path):
    ids = ["korthikanti-22B-full", "tt-llama31-8b-h100-8-fsdp-compile", "mbridge-gb200-dsv3-fp8mx-256"]
    t = _tool().table("training", str(_subset(tmp_path, ids))).set_index("case")
    book = validation.training_table().set_index("case").loc[ids]
    assert sorted(t.index) == sorted(ids)
    np.testing.assert_allclose(t.loc[ids, "error"], book["error"], rtol=1e-12)
    s = _tool().summary(t.reset_index())
    assert s.loc["all", "cases"] == 3 and s.loc["all", "refused"] == 0


def test_a_refused_run_is_listed_with_its_reason(tmp_path):
    # the 22B Korthikanti case on one GPU with its layout stated (TP8 on 1 GPU is impossible)
    path = _subset(tmp_path, ["korthikanti-22B-full"], edit=lambda r: r.replace(",A100-80GB,8,", ",A100-80GB,1,"))
    t = _tool().table("training", str(path))
    assert len(t) == 1 and np.isnan(t.loc[0, "error"])
    assert "tp" in t.loc[0, "refused"]


def test_a_file_without_max_load_rows_has_nothing_to_judge_as_a_user(tmp_path, capsys):
    # --user judges aggregated max-load serving rows; a file of stated-concurrency rows has none
    src = io.data_path("runs", "inference_runs.csv").read_text().splitlines()
    header = next(i for i, line in enumerate(src) if line.startswith("id,"))
    rows = [line for line in src[header + 1:] if line.startswith("heldout11-ix870-")]
    path = tmp_path / "stated.csv"
    path.write_text("\n".join(src[:header + 1] + rows) + "\n")
    assert len(rows) == 6 and _tool().table("serving", str(path), user=True).empty
    assert _tool().main(["serving", str(path), "--user"]) == 0
    assert "no cases to judge" in capsys.readouterr().out
