"""Name lookup in the models catalogue: catalogue ids, Hugging Face repository ids and their variants
resolve; incomplete, ambiguous and unknown names raise ValueError with the candidates and the allowed ids;
the estimators take a name where they take a dict."""

from __future__ import annotations

import pytest

from intelligence_per_dollar.model import inference, training
from intelligence_per_dollar.sources import models


@pytest.mark.parametrize("name,expected", [
    ("meta-llama/Llama-3.1-70B-Instruct", "Llama-3.1-70B"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "Llama-3.1-8B"),       # the repositories' first names
    ("llama-3.1-8b", "Llama-3.1-8B"),
    ("LLAMA_3.1_8B", "Llama-3.1-8B"),
    ("nvidia/Llama-3.3-70B-Instruct-FP8", "Llama-3.3-70B"),
    ("nvidia/Llama-3.1-405B-Instruct-NVFP4", "Llama-3.1-405B"),
    ("meta-llama/Llama-2-70b-chat-hf", "Llama-2-70B"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout"),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "Llama-4-Maverick"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral-8x7B"),
    ("mistralai/Mixtral-8x22B-v0.1", "Mixtral-8x22B"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "Mistral-7B"),
    ("Qwen/Qwen3-8B-Base", "Qwen3-8B"),
    ("Qwen/Qwen3-30B-A3B-FP8", "Qwen3-30B-A3B"),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B"),
    ("Qwen/Qwen2.5-72B-Instruct", "Qwen2.5-72B"),
    ("deepseek-ai/DeepSeek-R1-0528", "DeepSeek-R1"),
    ("deepseek-ai/DeepSeek-V3-0324", "DeepSeek-V3"),
    ("openai/gpt-oss-120b", "GPT-OSS-120B"),
    ("gpt-oss-20b", "GPT-OSS-20B"),
    ("zai-org/GLM-4.5-FP8", "GLM-4.5"),
    ("google/gemma-3-27b-it", "Gemma-3-27B"),
    ("google/gemma-3-27b-pt", "Gemma-3-27B"),
    ("moonshotai/Kimi-K2-Instruct", "Kimi-K2"),
])
def test_hugging_face_ids_resolve(name, expected):
    assert models.resolve(name) == expected
    assert models.get(name) == models.get(expected)
    assert models.spec(name) == models.get(expected)
    assert models.published(name) == models.published(expected)
    assert models.provenance(name) == models.provenance(expected)


def test_every_id_and_repository_resolves_to_its_model():
    for name in models.names():
        assert models.resolve(name) == name
        assert models.resolve(name.upper()) == name
        repo = models.provenance(name).get("hf_repo")
        if repo is not None:
            assert models.resolve(repo.value) == name
            assert models.resolve(f"{repo.value}-Instruct-FP8") == name


@pytest.mark.parametrize("name,candidates", [
    ("Llama-3.1", "Llama-3.1-8B or Llama-3.1-70B or Llama-3.1-405B"),
    ("meta-llama/Llama-3.1", "Llama-3.1-8B or Llama-3.1-70B or Llama-3.1-405B"),
    ("DeepSeek", "DeepSeek-V3 or DeepSeek-R1 or DeepSeek-V2-Lite"),
    ("gpt-oss", "GPT-OSS-20B or GPT-OSS-120B"),
    ("Gemma-3", "Gemma-3-27B"),                      # incomplete even when one model fits: never guessed
])
def test_incomplete_names_raise_with_the_candidates_and_the_allowed_ids(name, candidates):
    with pytest.raises(ValueError, match=rf"model={name!r} is not allowed \(it names no single model: "
                                         rf"did you mean {candidates}\?\); allowed: Nemotron-3-Ultra, "):
        models.get(name)
    with pytest.raises(ValueError, match=rf"model={name!r} is not a catalogued model .*did you mean {candidates}"):
        models.spec(name)


@pytest.mark.parametrize("name", [
    "mistralai/Mistral-7B-v0.1",       # a version is kept: v0.1 has another vocabulary and a sliding window
    "Mistral-7B-Instruct-v0.2",
    "zai-org/GLM-4.5-Flash",           # another model of the family
    "Qwen/Qwen3-30B-A3B-Instruct-AWQ",  # a quantisation the lookup does not know
    "Llama-3.1-70B-Extended",
])
def test_names_with_other_parts_are_not_taken_for_a_catalogued_model(name):
    with pytest.raises(ValueError, match=r"is not allowed .*; allowed: Nemotron-3-Ultra, DeepSeek-V3, Kimi-K2, "):
        models.resolve(name)


@pytest.mark.parametrize("name", ["GPT-5", "", "   ", "/", "meta-llama/"])
def test_unknown_names_list_the_allowed_ids(name):
    with pytest.raises(ValueError, match=r"is not allowed; allowed: Nemotron-3-Ultra, DeepSeek-V3, .*Gemma-3-27B, .*GPT-J-6B "
                                         r"\(case, an org/ prefix and -Instruct"):
        models.get(name)
    with pytest.raises(ValueError, match=r"is not a catalogued model; allowed: .*GLM-4.5, Gemma-3-27B, .*GPT-J-6B, or a dict"):
        models.spec(name)


@pytest.mark.parametrize("name", [None, 70, 3.5, ("Llama-3.1-8B",)])
def test_names_that_are_not_strings_raise(name):
    with pytest.raises(ValueError, match="is not allowed .*a model name is a string.*; allowed: Nemotron-3-Ultra"):
        models.get(name)


def test_a_name_two_models_share_is_ambiguous(data_copy):
    """A catalogue whose ids or repositories normalise to the same name: the exact ids still work, the
    shared name raises naming both (never the first one silently)."""
    path = data_copy / "models" / "models.csv"
    lines = path.read_text().splitlines()
    copy = [line.replace("Llama-3.1-70B,", "Llama-3.1-70B-Instruct,", 1) for line in lines
            if line.startswith("Llama-3.1-70B,")]
    path.write_text("\n".join(lines + copy) + "\n")
    assert models.resolve("Llama-3.1-70B") == "Llama-3.1-70B"
    assert models.resolve("Llama-3.1-70B-Instruct") == "Llama-3.1-70B-Instruct"
    for name in ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct", "Llama-3.1-70B-FP8"):
        with pytest.raises(ValueError, match=rf"model={name!r} is ambiguous: it names Llama-3.1-70B, "
                                             r"Llama-3.1-70B-Instruct; give one of those ids\. allowed: "):
            models.get(name)
        with pytest.raises(ValueError, match="is ambiguous: it names Llama-3.1-70B, Llama-3.1-70B-Instruct"):
            models.spec(name)


def test_inference_estimate_takes_a_name():
    by_name = inference.estimate("Llama-3.1-8B", "H100-SXM", 1, "fp8", 1000, 1000)
    by_repo = inference.estimate("meta-llama/Llama-3.1-8B-Instruct", "H100-SXM", 1, "fp8", 1000, 1000)
    by_dict = inference.estimate(dict(layers=32, d_model=4096, heads=32, kv_heads=8, d_ff=14336, vocab=128256),
                                 "H100-SXM", 1, "fp8", 1000, 1000)
    assert by_name.output_tokens_per_s_per_gpu > 0
    assert by_name.output_tokens_per_s_per_gpu == by_repo.output_tokens_per_s_per_gpu == \
        by_dict.output_tokens_per_s_per_gpu
    with pytest.raises(ValueError, match="model='Llama-3' is not a catalogued model"):
        inference.estimate("Llama-3", "H100-SXM", 1, "fp8", 1000, 1000)


def test_inference_frontier_takes_a_name():
    fr = inference.frontier("Llama-3.1-70B", "H200", 8, "fp8", 1000, 1000)
    assert len(fr) and (fr["output_tokens_per_s_per_gpu"] > 0).all()


@pytest.mark.parametrize("name,par", [
    ("Llama-3.1-8B", {"tp": 1, "pp": 1, "dp": 8, "cp": 1}),
    ("Qwen/Qwen3-30B-A3B", {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "ep": 8}),
])
def test_training_estimate_takes_a_name(name, par):
    est = training.estimate(name, "H100-SXM", 8, "bf16", 4096, 8 * 4 * 4096, par)
    same = training.estimate(models.get(name), "H100-SXM", 8, "bf16", 4096, 8 * 4 * 4096, par)
    assert est.step_time_s > 0 and 0 < est.mfu < 1
    assert est.step_time_s == same.step_time_s
