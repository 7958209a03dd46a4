"""The models and workloads catalogues: provenance for every value, specs that match published totals,
and bad rows that fail loudly with the file, row and field named."""

from __future__ import annotations

import dataclasses

import pytest

from intelligence_per_dollar.model import architecture
from intelligence_per_dollar.sources import io, models, workloads

#: The models the book catalogues first (its chapters' ids), then the named models for users and harnesses.
BOOK_MODELS = ("Nemotron-3-Ultra", "DeepSeek-V3", "Kimi-K2")
NAMED_MODELS = ("Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.3-70B", "Llama-3.1-405B", "Llama-2-70B", "Llama-4-Scout",
                "Llama-4-Maverick", "Mixtral-8x7B", "Mixtral-8x22B", "Qwen3-8B", "Qwen3-32B", "Qwen3-30B-A3B",
                "Qwen3-235B-A22B", "DeepSeek-R1", "GPT-OSS-20B", "GPT-OSS-120B", "Qwen2.5-72B", "Mistral-7B", "GLM-4.5",
                "Gemma-3-27B",
                # session 37: models the validation tables and the public benchmarks name most often
                "Llama-2-7B", "Llama-2-13B", "Llama-3-8B", "Llama-3-70B", "Llama-3.2-1B", "Llama-3.2-3B", "Qwen2.5-7B",
                "Qwen2.5-14B", "Qwen2.5-32B", "Qwen3-4B", "Qwen3-14B", "GLM-4.5-Air", "Mistral-Small-24B", "Phi-4",
                "DeepSeek-V2-Lite", "GPT-J-6B")

#: Relative tolerance of the spec's counts against the published totals: 1% where the source gives the
#: config's own count (or a size label within 1% of it); 2% where the published figure is coarser than the
#: spec or covers parts the schema leaves out. Every catalogued model is checked (default 1%).
PUBLISHED_TOLERANCE = {
    "Kimi-K2": 0.02,            # 1.04T / 32B rounded
    "Nemotron-3-Ultra": 0.02,   # a stand-in the schema can only approximate (hybrid Mamba-Transformer)
    "Llama-2-70B": 0.02,        # the '70B' label; the config gives 69.0B
    "Llama-4-Scout": 0.02,      # card totals include the ~0.9B vision encoder; '17B' active for 17.2B
    "Llama-4-Maverick": 0.02,   # '17B' active for 17.2B
    "Qwen3-30B-A3B": 0.02,      # card: '3.3B activated' for 3.35B
    "GLM-4.5-Air": 0.02,        # card: '12B' active for 12.18B without embeddings
    "Mistral-Small-24B": 0.02,  # the '24B' label for 23.57B (the checkpoint's index gives the spec's count exactly)
    "DeepSeek-V2-Lite": 0.025,  # card: '2.4B activated' for 2.45B; a two-digit label rounds by up to 0.05B (2.1%)
}

#: What each source counts as active (tests/data/test_catalogue.py compares like with like; the note of each
#: active_params_published row says it): "all" (embedding and LM head included; a dense model's total),
#: "no input embedding" (DeepSeek README_WEIGHTS.md, gpt-oss Table 1: the output head counts, the embedding
#: lookup does not), "no embeddings" (GLM-4.5's 32B matches neither the embedding nor the head counted).
ACTIVE_COUNTS = {"DeepSeek-V3": "no input embedding", "DeepSeek-R1": "no input embedding",
                 "Kimi-K2": "no input embedding", "Nemotron-3-Ultra": "no input embedding",
                 "GPT-OSS-20B": "no input embedding", "GPT-OSS-120B": "no input embedding",
                 "GLM-4.5": "no embeddings", "GLM-4.5-Air": "no embeddings", "DeepSeek-V2-Lite": "no input embedding"}


def _active_as_published(name: str, spec: models.ModelSpec) -> float:
    """Active parameters counted as the model's source counts them (:data:`ACTIVE_COUNTS`)."""
    convention = ACTIVE_COUNTS.get(name, "all")
    if convention == "no input embedding":
        return architecture.active_params(spec) - spec.vocab * spec.d_model
    if convention == "no embeddings":
        return architecture.active_params(spec) - architecture.embedding_params(spec)
    return architecture.active_params(spec)


def test_catalogues_name_the_book_ids():
    assert models.names() == BOOK_MODELS + NAMED_MODELS
    assert workloads.names("training") == ("pretrain-10t",)
    assert workloads.names("rl") == ("rl-step",)
    assert workloads.names("serving") == ("agent-serving", "blog-serving")
    assert workloads.serving("blog-serving").model == "Kimi-K2"   # NVIDIA's 10x serving comparison


@pytest.mark.parametrize("name", BOOK_MODELS + NAMED_MODELS)
def test_every_model_value_has_provenance(name):
    prov = models.provenance(name)
    spec = models.get(name)
    given = {f.name for f in dataclasses.fields(spec) if getattr(spec, f.name) != f.default}
    assert given <= set(prov), f"{name}: spec fields without a catalogue row: {given - set(prov)}"
    for field, sv in prov.items():
        assert sv.used and sv.provenance.source_url and sv.provenance.kind in io.KINDS, (name, field)
        assert sv.provenance.date_read >= "2026-11-29", (name, field)
    for field in ("total_params_published", "active_params_published"):
        assert field in prov, (name, field)


@pytest.mark.parametrize("name", NAMED_MODELS)
def test_named_models_cite_their_config_and_repository(name):
    """Architecture rows cite the model's Hugging Face config.json (read 2026-12-01 or, for the models added in session
    37, 2026-12-05); hf_repo is the repository."""
    prov = models.provenance(name)
    repo = prov["hf_repo"].value
    config = f"https://huggingface.co/{repo}/blob/main/config.json"
    for field in ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab"):
        assert prov[field].provenance.source_url == config, (name, field)
        assert prov[field].provenance.kind == "vendor-claimed" and prov[field].provenance.date_read in ("2026-12-01",
                                                                                                "2026-12-05")
    assert models.resolve(repo) == name
    for field, sv in prov.items():
        if sv.provenance.kind in ("derived", "assumption", "estimate"):
            assert len(sv.provenance.note) > 20, f"{name}.{field}: say how it is derived or approximated"


@pytest.mark.parametrize("name", BOOK_MODELS + NAMED_MODELS)
def test_spec_totals_match_published_totals(name):
    rel = PUBLISHED_TOLERANCE.get(name, 0.01)
    spec, pub = models.get(name), models.published(name)
    assert architecture.total_params(spec) == pytest.approx(pub.total_params, rel=rel)
    assert _active_as_published(name, spec) == pytest.approx(pub.active_params, rel=rel)


def test_tolerances_and_conventions_name_catalogued_models():
    assert set(PUBLISHED_TOLERANCE) | set(ACTIVE_COUNTS) <= set(models.names())
    # 2% at most, 2.5% only where a two-digit label's rounding alone is that wide (DeepSeek-V2-Lite's '2.4B')
    assert all(rel <= 0.02 or (name == "DeepSeek-V2-Lite" and rel <= 0.025) for name, rel in PUBLISHED_TOLERANCE.items())


def test_run_tables_use_the_catalogued_architectures():
    """Rows of data/runs/inference_runs.csv naming a catalogued model carry its spec. Two differences: the Llama-4-Scout
    rows leave out the chunked attention the catalogue records as an 8192-token window (the Maverick rows record it),
    which changes nothing below 8192 tokens of context; and a row that served a quantised checkpoint of the model (FP8
    expert weights of GLM-4.6 or Qwen3-235B on A100, set 26) states its expert weight precision, or the precision its
    authors released it in (Qwen3-8B-FP8, set 87), properties of the checkpoint the run loaded, not of the
    architecture."""
    from intelligence_per_dollar.sources import runs

    checked = set()
    for case in runs.inference_runs():
        try:
            name = models.resolve(case["model_name"])
        except ValueError:
            continue              # shapes (Llama-3-8B-shape, experts-64x...) and models not catalogued
        spec, run = models.get(name), models.spec(case["model"])
        if name == "Llama-4-Scout":
            spec = spec.replace(local_attention_window=None, local_attention_layers=0)
        if run.expert_weight_precision is not None and spec.expert_weight_precision is None:
            run = run.replace(expert_weight_precision=None)
        if run.release_precision is not None and spec.release_precision is None:
            run = run.replace(release_precision=None)
        # an explicit head_dim equal to d_model / heads is the same shape as none
        spec, run = (s.replace(head_dim=architecture.head_dim(s)) for s in (spec, run))
        assert run == spec, case["id"]
        checked.add(name)
    assert {"Llama-3.1-8B", "Llama-3.3-70B", "Llama-4-Maverick", "GPT-OSS-120B", "Qwen3-235B-A22B",
            "DeepSeek-R1", "Mixtral-8x22B", "Llama-4-Scout"} <= checked


def test_published_totals_are_the_papers():
    assert models.published("DeepSeek-V3").total_params == 671e9
    assert models.published("Kimi-K2") == models.Published(1.04e12, 32e9)
    assert models.published("Nemotron-3-Ultra") == models.Published(550e9, 55e9)
    assert models.published("GPT-OSS-120B") == models.Published(116.83e9, 5.13e9)
    assert models.published("Qwen3-235B-A22B") == models.Published(235e9, 22e9)
    assert models.published("Llama-4-Maverick") == models.Published(400e9, 17e9)


def test_nemotron_is_the_published_routing():
    s = models.get("Nemotron-3-Ultra")
    assert (s.experts, s.top_k) == (512, 22)


def test_approximated_architectures_follow_the_run_tables():
    maverick, gptoss, gemma = models.get("Llama-4-Maverick"), models.get("GPT-OSS-20B"), models.get("Gemma-3-27B")
    assert (maverick.dense_layers, maverick.layers - maverick.dense_layers, maverick.shared_experts) == (24, 24, 1)
    assert (maverick.local_attention_window, maverick.local_attention_layers) == (8192, 36)
    assert (gptoss.local_attention_window, gptoss.local_attention_layers, gptoss.expert_weight_precision) == (
        128, 12, "fp4")
    assert (gemma.local_attention_window, gemma.local_attention_layers, gemma.tied_embeddings) == (1024, 52, True)
    assert models.get("DeepSeek-R1") == models.get("DeepSeek-V3")


@pytest.mark.parametrize("name", ["pretrain-10t", "rl-step", "agent-serving"])
def test_every_workload_value_has_provenance(name):
    prov = workloads.provenance(name)
    record = {"pretrain-10t": workloads.training, "rl-step": workloads.rl, "agent-serving": workloads.serving}[name]()
    fields = {f.name for f in dataclasses.fields(record)} - {"name"}
    assert fields <= set(prov)
    for field, sv in prov.items():
        assert sv.used and sv.provenance.source_url and sv.provenance.kind in io.KINDS, (name, field)


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
