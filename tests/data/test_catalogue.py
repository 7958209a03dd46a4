"""The models and workloads catalogues: provenance for every value, specs that match published totals,
and bad rows that fail loudly with the file, row and field named."""

from __future__ import annotations

import dataclasses

import pytest

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.sources import io, models, workloads

#: (model, relative tolerance) of the spec's counts against the published totals: DeepSeek-V3 and
#: Kimi-K2 are the published configs; Nemotron-3-Ultra is a stand-in the schema can only approximate.
PUBLISHED_TOLERANCE = [("DeepSeek-V3", 0.01), ("Kimi-K2", 0.02), ("Nemotron-3-Ultra", 0.02)]


def _active_as_published(spec: models.ModelSpec) -> float:
    """Active parameters without the input embedding (a table lookup): DeepSeek's own convention
    (README_WEIGHTS.md: 36.6B activated, including the 0.9B output head)."""
    return architecture.active_params(spec) - spec.vocab * spec.d_model


def test_catalogues_name_the_book_ids():
    assert models.names() == ("Nemotron-3-Ultra", "DeepSeek-V3", "Kimi-K2")
    assert workloads.names("training") == ("pretrain-10t",)
    assert workloads.names("rl") == ("rl-step",)
    assert workloads.names("serving") == ("agent-serving", "blog-serving")
    assert workloads.serving("blog-serving").model == "Kimi-K2"   # NVIDIA's 10x serving comparison


@pytest.mark.parametrize("name", ["Nemotron-3-Ultra", "DeepSeek-V3", "Kimi-K2"])
def test_every_model_value_has_provenance(name):
    prov = models.provenance(name)
    spec = models.get(name)
    given = {f.name for f in dataclasses.fields(spec) if getattr(spec, f.name) != f.default}
    assert given <= set(prov), f"{name}: spec fields without a catalogue row: {given - set(prov)}"
    for field, sv in prov.items():
        assert sv.used and sv.provenance.source_url and sv.provenance.kind in io.KINDS, (name, field)
        assert sv.provenance.date_read >= "2026-11-29", (name, field)


@pytest.mark.parametrize("name", ["pretrain-10t", "rl-step", "agent-serving"])
def test_every_workload_value_has_provenance(name):
    prov = workloads.provenance(name)
    record = {"pretrain-10t": workloads.training, "rl-step": workloads.rl, "agent-serving": workloads.serving}[name]()
    fields = {f.name for f in dataclasses.fields(record)} - {"name"}
    assert fields <= set(prov)
    for field, sv in prov.items():
        assert sv.used and sv.provenance.source_url and sv.provenance.kind in io.KINDS, (name, field)


@pytest.mark.parametrize("name,rel", PUBLISHED_TOLERANCE)
def test_spec_totals_match_published_totals(name, rel):
    spec, pub = models.get(name), models.published(name)
    assert architecture.total_params(spec) == pytest.approx(pub.total_params, rel=rel)
    assert _active_as_published(spec) == pytest.approx(pub.active_params, rel=rel)


def test_published_totals_are_the_papers():
    assert models.published("DeepSeek-V3").total_params == 671e9
    assert models.published("Kimi-K2") == models.Published(1.04e12, 32e9)
    assert models.published("Nemotron-3-Ultra") == models.Published(550e9, 55e9)


def test_nemotron_is_the_published_routing():
    s = models.get("Nemotron-3-Ultra")
    assert (s.experts, s.top_k) == (512, 22)


def test_rl_workload_is_the_step_the_book_runs():
    w = workloads.rl()
    assert w.policy in models.names() and w.accelerators == ("GB200", "VR200")
    assert w.step_kwargs()["input_tokens"] == 2048 and w.step_kwargs()["rollout_precision"] == "fp4"
    assert w.cpu_speed_factor_on("VR200") == 1.3 and w.cpu_speed_factor_on("GB200") == 1.0


def test_unknown_names_list_the_allowed_ones():
    with pytest.raises(ValueError, match="model='GPT-5' is not allowed; allowed: Nemotron-3-Ultra"):
        models.get("GPT-5")
    with pytest.raises(ValueError, match="workload='rl-step' is not allowed; allowed: pretrain-10t"):
        workloads.training("rl-step")


def _edit(path, old: str, new: str) -> int:
    """Replace one line fragment in a catalogue copy; returns the 1-based row it is on."""
    lines = path.read_text().splitlines()
    hits = [i for i, line in enumerate(lines) if old in line]
    assert len(hits) == 1, hits
    lines[hits[0]] = lines[hits[0]].replace(old, new)
    path.write_text("\n".join(lines) + "\n")
    return hits[0] + 1


@pytest.mark.parametrize("old,new,needle", [
    ("Kimi-K2,top_k,8,", "Kimi-K2,top_k,eight,", "column 'value': 'eight' is not a number"),
    ("Kimi-K2,layers,61,", "Kimi-K2,layers,61.5,", "column 'value': 61.5 is out of range for field 'layers'"),
    ("Kimi-K2,heads,64,", "Kimi-K2,hedas,64,", "column 'field': unknown field 'hedas'"),
])
def test_bad_model_rows_name_file_and_row(data_copy, old, new, needle):
    path = data_copy / "models" / "models.csv"
    row = _edit(path, old, new)
    with pytest.raises(ValueError) as ex:
        models.get("Kimi-K2")
    assert str(path) in str(ex.value) and f"row {row}" in str(ex.value) and needle in str(ex.value)


def test_inconsistent_model_names_the_rows(data_copy):
    path = data_copy / "models" / "models.csv"
    row = _edit(path, "Kimi-K2,top_k,8,", "Kimi-K2,top_k,500,")
    with pytest.raises(ValueError) as ex:
        models.get("Kimi-K2")
    msg = str(ex.value)
    assert str(path) in msg and str(row) in msg and "top_k" in msg and "Kimi-K2" in msg


@pytest.mark.parametrize("old,new,needle", [
    ("rl-step,group_size,16,", "rl-step,group_size,sixteen,", "'sixteen' is not a number"),
    ("rl-step,algorithm,grpo,", "rl-step,algorithm,dpo,", "algorithm='dpo' is not allowed; allowed: grpo, ppo"),
    ("rl-step,policy,Nemotron-3-Ultra,", "rl-step,policy,GPT-5,", "policy='GPT-5' is not allowed"),
    ("rl-step,accelerators,GB200 VR200,", "rl-step,accelerators,GB200 TPU9,", "accelerators='TPU9' is not allowed"),
    ("rl-step,rollout_fraction,0.5,", "rl-step,rollout_fraction,1.5,", "out of range for field 'rollout_fraction'"),
    ("rl-step,fleet_gpus,288,https", "rl-step,fleet_gpus,288,ftp", "column 'source_url'"),
    ("2026-11-29,estimate,true,\"data/assumptions/post_training.csv group_size",
     "2026-11-29,estimate,maybe,\"data/assumptions/post_training.csv group_size", "'maybe' is not a boolean"),
])
def test_bad_workload_rows_name_file_and_row(data_copy, old, new, needle):
    path = data_copy / "workloads" / "workloads.csv"
    row = _edit(path, old, new)
    with pytest.raises(ValueError) as ex:
        workloads.rl()
    assert str(path) in str(ex.value) and f"row {row}" in str(ex.value) and needle in str(ex.value)


def test_missing_workload_field_is_named(data_copy):
    path = data_copy / "workloads" / "workloads.csv"
    lines = [line for line in path.read_text().splitlines() if not line.startswith("rl-step,campaign_steps,")]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"rl workload 'rl-step' lacks field\(s\) campaign_steps"):
        workloads.rl()


def _notebook_parameters(chapter: str) -> dict[str, object]:
    """The literal defaults of a chapter's ``parameters`` cell."""
    import ast
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).resolve().parents[2] / "nbs" / f"{chapter}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}


#: chapter parameter -> catalogue value (papermill needs literal defaults; they must equal the catalogue).
_CHAPTER_DEFAULTS = [
    ("02_training", lambda: {
        "total_params": workloads.training().total_params, "tokens": workloads.training().tokens,
        "days": workloads.training().days, "precision": workloads.training().precision,
        "seq_len": workloads.training().seq_len, "baseline": workloads.training().reference_accelerator,
        "challenger": workloads.training().candidate_accelerator,
        "claimed_ratio": workloads.training().claimed_gpu_ratio,
        "claim_tolerance": workloads.training().claim_tolerance}),
    ("03_post_training", lambda: {
        "accelerators": list(workloads.rl().accelerators),
        **{f.name: getattr(workloads.rl(), f.name) for f in dataclasses.fields(workloads.RLWorkload)
           if f.name not in ("name", "accelerators", "vera_cpu_accelerators")}}),
    ("04_intelligence_per_dollar", lambda: {"serving_model": workloads.serving().model}),
]


@pytest.mark.parametrize("chapter,expected", _CHAPTER_DEFAULTS, ids=[c for c, _ in _CHAPTER_DEFAULTS])
def test_chapter_defaults_equal_the_catalogue(chapter, expected):
    got = _notebook_parameters(chapter)
    want = expected()
    assert {k: got.get(k, "<missing>") for k in want} == want


def test_weight_sync_runs_move_the_catalogued_kimi_k2():
    from intelligence_per_dollar.model import post_training
    from intelligence_per_dollar.sources import runs

    kimi = [r for r in runs.weight_sync_runs(post_training.SCHEDULES) if r["model_name"].startswith("Kimi-K2")]
    assert kimi and {r["params"] for r in kimi} == {models.published("Kimi-K2").total_params}
