"""The chapters' sources, read without executing them (fast): parameter cells are plain literals
whose defaults equal the workload catalogue, and cells only call and display -- no sentence with a
typed-in number, no row-order lookups."""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from conftest import ROOT
from intelligence_per_dollar.sources import assumptions, workloads

NOTEBOOKS = sorted((ROOT / "nbs").glob("*.ipynb"))


def _code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _parameters(chapter: str) -> dict:
    """The chapter's parameter defaults, read as the scenario system reads them (literal_eval)."""
    cell = _code_cells(ROOT / "nbs" / f"{chapter}.ipynb")[0]
    return {t.id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body for t in node.targets}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_parameters_cell_is_plain_literal_assignments(path):
    cell = _code_cells(path)[0]
    assert "parameters" in cell.metadata.get("tags", [])
    for node in ast.parse(cell.source).body:
        assert isinstance(node, ast.Assign), f"{path.name}: line {node.lineno} is not an assignment"
        assert all(isinstance(t, ast.Name) for t in node.targets), f"{path.name}: line {node.lineno}"
        ast.literal_eval(node.value)     # raises ValueError on anything but a literal


def test_training_defaults_equal_the_catalogue():
    p, w = _parameters("02_training"), workloads.training()
    assert (p["total_params"], p["tokens"], p["days"], p["seq_len"], p["precision"]) == (
        w.total_params, w.tokens, w.days, w.seq_len, w.precision)
    assert (p["baseline"], p["challenger"]) == (w.reference_accelerator, w.candidate_accelerator)
    assert (p["claimed_ratio"], p["claim_tolerance"]) == (w.claimed_gpu_ratio, w.claim_tolerance)
    active = assumptions.assumptions("workloads.csv")[w.active_params_assumption]
    assert p["active_params"] == active.central


RL_FIELDS = ("policy", "fleet_gpus", "rollout_fraction", "rollout_precision", "trainer_precision", "prompts",
             "group_size", "input_tokens", "output_tokens_mean", "output_tokens_sigma", "max_output_tokens",
             "sandbox_cpu_s", "sandbox_cpus", "cpu_speed_factor", "async_depth", "algorithm", "campaign_steps")


def test_post_training_defaults_equal_the_catalogue():
    p, w = _parameters("03_post_training"), workloads.rl()
    assert {f: p[f] for f in RL_FIELDS} == {f: getattr(w, f) for f in RL_FIELDS}
    assert tuple(p["accelerators"]) == w.accelerators


def test_serving_and_ledger_defaults_equal_the_catalogue():
    assert _parameters("04_intelligence_per_dollar")["serving_model"] == workloads.serving().model
    assert _parameters("00_claims")["training_precision"] == workloads.training().precision


def _typed_numbers_in_md(source: str) -> list[str]:
    """Literal text with a digit inside an f-string passed to ``md(...)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "md":
            for sub in ast.walk(node):
                if isinstance(sub, ast.JoinedStr):
                    found += [v.value for v in sub.values
                              if isinstance(v, ast.Constant) and re.search(r"\d", str(v.value))]
    return found


def test_typed_number_check_can_fail():
    assert _typed_numbers_in_md('md(f"{x} is 3.5x, not 2.5x")') == [" is 3.5x, not 2.5x"]
    assert _typed_numbers_in_md('md(prose.reconcile(a, b))') == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_sentence_types_a_number(path):
    bad = {i: t for i, c in enumerate(_code_cells(path)) if (t := _typed_numbers_in_md(c.source))}
    assert bad == {}, f"{path.name}: numbers typed into md(f'...') (move the sentence to views/prose): {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_row_order_lookups(path):
    bad = [i for i, c in enumerate(_code_cells(path)) if ".iloc[" in c.source]
    assert bad == [], f"{path.name}: code cells {bad} look rows up by position (.iloc); look them up by key"


def _imports_outside_first_cells(path) -> list[str]:
    """Import statements in any code cell after the parameters and import cells."""
    out = []
    for i, cell in enumerate(_code_cells(path)[2:], start=2):
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.append(f"code cell {i}: line {node.lineno}")
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_imports_sit_in_the_import_cell_and_no_cell_is_empty(path):
    assert _imports_outside_first_cells(path) == []
    empty = [i for i, c in enumerate(nbformat.read(path, as_version=4).cells) if not c.source.strip()]
    assert empty == [], f"{path.name}: empty cells {empty}"


def test_the_import_check_can_fail(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("import os"),
                                         nbformat.v4.new_code_cell("from math import pi\npi")])
    path = tmp_path / "late.ipynb"
    nbformat.write(nb, path)
    assert _imports_outside_first_cells(path) == ["code cell 2: line 1"]
