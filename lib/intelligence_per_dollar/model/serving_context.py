"""The static part of a serving case: model, accelerator, ceilings, precisions, lengths and the serving
assumptions of ``data/assumptions/inference.csv``, validated once and held in a
:class:`serving_kernels.Context` that every kernel time of :mod:`intelligence_per_dollar.model.inference` reads.
"""

from __future__ import annotations

import numpy as np

from intelligence_per_dollar.model import architecture, collectives, efficiency, peaks
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_lengths as lengths
from intelligence_per_dollar.model import serving_offload as offl
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import assumptions, checks, hardware, models

__all__ = ["PRECISIONS", "MODES", "IMPLEMENTATIONS", "MAX_GPUS", "MAX_SPECULATIVE_TOKENS", "assumed",
           "default_kv_precision", "speculation", "context"]

PRECISIONS = ("bf16", "fp8", "fp4")
#: ``aggregated``: prefill piggybacks on decode iterations (Eq. 1); ``decode``: a decode-only
#: instance (disaggregated serving); ``prefill``: a prefill-only instance, whose throughput is
#: input tokens/s.
MODES = ("aggregated", "decode", "prefill")
#: ``engine``: a fused serving engine (TensorRT-LLM, SGLang, vLLM): few non-GEMM kernels per layer,
#: gather-reduce top-k combine. ``pytorch``: the unfused PyTorch decode step this project measured on
#: its H200 (``tools/measure_gpu.py``: more kernels per layer, atomic ``index_add_`` combine).
IMPLEMENTATIONS = ("engine", "pytorch")


def assumed(name: str, scenario: str) -> float:
    """One value of ``data/assumptions/inference.csv`` (tile rows, kernels per layer ...) under ``scenario``."""
    a = assumptions.assumptions("inference.csv")[name]
    return {"low": a.low, "central": a.central, "high": a.high}[scenario]


# ---------------------------------------------------------------------------------------------
# context: validated, static per (model, accelerator, precision, lengths)
# ---------------------------------------------------------------------------------------------

#: Most GPUs one call may serve on (a billion): keeps the divisor enumeration of :func:`candidates`
#: (at most 1,344 divisors below it) and every array it builds small.
MAX_GPUS = 10**9


def default_kv_precision(s: models.ModelSpec, acc: hardware.Accelerator, precision: str) -> str:
    """The KV-cache precision engines pick when none is given (``auto``: what the checkpoint carries).

    BF16 weights keep a BF16 cache; NVIDIA ModelOpt FP8/FP4 checkpoints carry FP8 KV scales (TensorRT-LLM
    ``kv_cache_config.dtype`` auto, SGLang/vLLM ``kv_cache_dtype`` auto) -- except MLA on GPUs without FP4
    tensor cores (FlashMLA README: BF16/FP16 cache; TensorRT-LLM DeepSeek-R1 H200 recipe: "KV cache dtype
    default (16-bit)") and checkpoints released quantised by their authors (``expert_weight_precision``,
    GPT-OSS's MXFP4), which carry no KV scales: TensorRT-LLM's GPT-OSS benchmark sets ``dtype: fp8``
    explicitly on Blackwell, "Hopper: use auto" (docs/source/developer-guide/perf-overview.md at 03e27c7).
    """
    if precision == "bf16" or s.expert_weight_precision or (architecture.is_mla(s) and not acc.supports("fp4")):
        return "bf16"
    return "fp8"


def dense_weight_precision(s: models.ModelSpec, precision: str) -> str:
    """Precision of the weights outside the routed experts (attention, shared layers, dense FFNs, head).

    ``precision`` for every weight, except checkpoints their authors released with quantised experts only
    (``expert_weight_precision``), which are served as released whatever 8- or 4-bit precision is asked for:
    every other weight stays BF16 (GPT-OSS: "MXFP4 quantization of the MoE weights"; attention, router,
    embeddings and LM head stay BF16, OpenAI gpt-oss model card 2025 section 2 and the checkpoints'
    quantization_config ``modules_to_not_convert``; TensorRT-LLM's GPT-OSS benchmark serves that checkpoint
    in both its "FP8" Hopper and "FP4" Blackwell columns, perf-overview.md at 03e27c7)."""
    if s.expert_weight_precision and precision in ("fp8", "fp4"):
        return "bf16"
    return precision


def attention_weight_precision(s: models.ModelSpec, precision: str) -> str:
    """Precision of the attention projections (Q/K/V/O, MLA's down- and up-projections).

    As :func:`dense_weight_precision`, except in MoE checkpoints quantised to NVFP4, which keep attention in the
    precision the model was released in (``release_precision``: FP8 for DeepSeek-V3/R1 and Kimi K2, else BF16):
    NVIDIA TensorRT Model Optimizer's NVFP4 recipe for MoE models leaves every ``self_attn`` module (and the LM head and
    router) out of FP4 (``exclude_modules`` of nvidia/DeepSeek-R1-0528-NVFP4, nvidia/GLM-4.7-NVFP4,
    nvidia/MiniMax-M2.5-NVFP4 hf_quant_config.json; nvidia/DeepSeek-R1-FP4-v2's card: "Compared to
    nvidia/DeepSeek-R1-FP4, this checkpoint additionally quantizes the wo module in attention layers"). Dense
    models' NVFP4 checkpoints quantise attention too (only the LM head is left out)."""
    dense = dense_weight_precision(s, precision)
    if precision == "fp4" and architecture.is_moe(s):
        return s.release_precision or "bf16"
    return dense


def _run_precision(acc: hardware.Accelerator, precision: str) -> str:
    """Tensor-core precision weights stored in ``precision`` multiply at: 4-bit weights on GPUs without FP4
    tensor cores are dequantised and multiplied in FP8 (the next precision the GPU supports)."""
    return precision if acc.supports(precision) else next(
        p for p in hardware.PRECISIONS[hardware.PRECISIONS.index(precision):] if acc.supports(p))


def _check_choices(precision, kv_precision, mode, implementation, s, acc) -> str:
    """Validate the string options; returns the KV-cache precision (:func:`default_kv_precision` if None)."""
    checks.choice("precision", precision, PRECISIONS)
    if kv_precision is None:
        kv_precision = default_kv_precision(s, acc, precision)
    checks.choice("kv_precision", kv_precision, PRECISIONS)
    checks.choice("mode", mode, MODES)
    checks.choice("implementation", implementation, IMPLEMENTATIONS)
    return kv_precision


def _links(acc: hardware.Accelerator, ceil: efficiency.Ceilings) -> tuple[collectives.Link, collectives.Link]:
    """(scale-up, scale-out) links of one GPU with the calibrated efficiencies and latencies."""
    up_bw = acc.scaleup_bytes_per_s_one_way if acc.scaleup_bytes_per_s_bidirectional else acc.scaleout_bytes_per_s
    up = collectives.Link(up_bw, ceil.scaleup_efficiency, ceil.scaleup_latency_s)
    out = collectives.Link(acc.scaleout_bytes_per_s or up_bw / 18, ceil.scaleout_efficiency, ceil.scaleout_latency_s)
    return up, out


def _scaleup_domain(accelerator, acc: hardware.Accelerator) -> tuple[int, bool]:
    """(GPUs of one NVLink domain, whether they are wired as a direct mesh): the system's where ``accelerator`` names
    one (:func:`hardware.system_named`; ``HGX-H100-4GPU``: 4, a mesh), else the accelerator's switched domain."""
    system = hardware.system_named(accelerator)
    if system is None:
        return int(acc.scaleup_domain_gpus), False
    return int(system.scaleup_domain_gpus), system.scaleup_topology == "mesh"


def _param_totals(s: models.ModelSpec) -> dict[str, float]:
    """Parameters per layer by part plus the dense, expert and embedding totals."""
    p = architecture.params_per_layer(s)
    emb = architecture.embedding_params(s)
    L_moe = architecture.moe_layers(s)
    expert_total = L_moe * s.experts * p["expert"] if L_moe else 0.0
    dense_total = architecture.total_params(s) - emb - expert_total
    return {"expert_total": expert_total, "dense_total": dense_total, "embedding": emb,
            **{k: float(v) for k, v in p.items()}}


def _host_step_s(scheduler: str, scenario: str) -> float:
    """Fixed host seconds per iteration: vLLM V1's (``vllm-v1``, ``vllm-v1-async``) or any other engine's."""
    return assumed("vllm_v1_host_step_s" if sched.is_vllm_v1(scheduler) else "host_step_s", scenario)


def _host_per_sequence_s(scheduler: str, scenario: str) -> float:
    """Host seconds per running sequence and iteration: an overlap-scheduler engine's, vLLM V1's, TensorRT-LLM's C++
    runtime's (``trtllm-bench-engine``, ``trtllm-engine``), or vLLM v0.5's engine work plus (served through its API server, ``vllm-v0.5``) the API server's (:mod:`serving_schedulers`)."""
    if sched.is_vllm_v1(scheduler):
        return assumed("vllm_v1_host_per_sequence_s", scenario)
    if sched.cpp_executor(scheduler):           # TensorRT-LLM's C++ runtime: no Python on the per-sequence path
        return assumed("cpp_runtime_host_per_sequence_s", scenario)
    if not sched.is_vllm_v05(scheduler):
        return assumed("host_per_sequence_s", scenario)
    api = assumed("vllm_v05_api_server_per_sequence_s", scenario) if scheduler == "vllm-v0.5" else 0.0
    return assumed("vllm_v05_engine_per_sequence_s", scenario) + api


def _prefill_piece(scheduler: str, acc: hardware.Accelerator, max_num_tokens: int | None, scenario: str) -> float:
    """Largest prompt piece one iteration schedules: none (``inf``) where prompts run whole; vLLM V1's whole
    token budget (it sets no per-prompt limit); else ``prefill_chunk_tokens``."""
    if sched.whole_prompts(scheduler):
        return np.inf
    if sched.is_vllm_v1(scheduler):
        return float(max_num_tokens or sched.default_limits(scheduler, acc)[1])
    return assumed("prefill_chunk_tokens", scenario)


#: Most draft tokens per iteration a caller may ask for (engines run 1-8: TensorRT-LLM's MTP
#: ``num_nextn_predict_layers``, SGLang's ``speculative_num_steps``); the measured acceptance of
#: ``data/assumptions/inference.csv`` covers 1-5.
MAX_SPECULATIVE_TOKENS = 16


def speculation(speculative_tokens, accepted_tokens, scenario: str = "central") -> tuple[int, float]:
    """(draft tokens per iteration, mean tokens a sequence emits per iteration) of speculative decoding, validated.

    A sequence verifies ``k`` drafts per iteration and keeps the longest agreeing prefix plus the target's own next
    token, so it emits between 1 and ``k + 1`` tokens (Leviathan et al. 2023, "Fast Inference from Transformers via
    Speculative Decoding", ICML, section 3.1). How many depends on the drafter and the text, not the hardware: given
    as ``accepted_tokens``, or where None, TensorRT-LLM's measured DeepSeek-R1 MTP acceptance for ``k`` = 1-5
    (``mtp_accepted_tokens_k1`` ... ``_k5`` of ``data/assumptions/inference.csv``). ``k`` 0: no speculation,
    one token per iteration."""
    k = checks.integer("speculative_tokens", speculative_tokens, low=0, high=MAX_SPECULATIVE_TOKENS)
    if accepted_tokens is None:
        if k == 0:
            return 0, 1.0
        if k > 5:
            raise ValueError(f"speculative_tokens={k} with accepted_tokens=None: the measured acceptance covers 1-5 "
                             f"draft tokens; allowed: speculative_tokens 0-5, or give accepted_tokens (1 to {k + 1})")
        return k, assumed(f"mtp_accepted_tokens_k{k}", scenario)
    e = checks.number("accepted_tokens", accepted_tokens, low=1.0)
    if e > k + 1:
        raise ValueError(f"accepted_tokens={accepted_tokens!r} with speculative_tokens={k}: a sequence emits at most "
                         f"its {k} drafts and one token of its own per iteration; allowed: 1 to {k + 1}")
    return k, float(e)


def context(model, accelerator, precision, input_tokens, output_tokens, kv_precision, mode, scenario,
             comm_overlap=False, implementation="engine", scheduler="physics", limits=(None, None),
             weight_offload=False, output_spread=(0.0, None, None), kv_allocation=None,
             speculative=(0, None)) -> kern.Context:
    """The :class:`serving_kernels.Context` of one case; ``output_spread``: (``output_tokens_cv``,
    ``output_tokens_max``, ``output_dataset``) of the output-length distribution (:mod:`serving_lengths`;
    (0, None, None): one length); ``speculative``: (``speculative_tokens``, ``accepted_tokens``) of
    :func:`speculation`."""
    s = models.spec(model)
    acc = accelerator if isinstance(accelerator, hardware.Accelerator) else hardware.get(accelerator)
    domain, mesh = _scaleup_domain(accelerator, acc)
    kv_precision = _check_choices(precision, kv_precision, mode, implementation, s, acc)
    kern.check_catalogue_fields(acc)
    sched.check_scheduler(scheduler)
    torch_ref = implementation == "pytorch"
    isl = checks.positive_int("input_tokens", input_tokens)
    osl = checks.positive_int("output_tokens", output_tokens)
    max_bs, max_tok = sched.check_limits(*limits, isl, scheduler)
    osl_cv, osl_max = lengths.check_cv(output_spread[0]), lengths.check_max(output_spread[1], osl)
    osl_dataset = lengths.check_dataset(output_spread[2], osl_cv)
    lengths.in_flight_final_tokens(osl, osl_cv, osl_max, osl_dataset)   # refuses a cv the cap cannot reach
    spec_tokens, accepted = speculation(*speculative, scenario)
    dense, attention = dense_weight_precision(s, precision), attention_weight_precision(s, precision)
    run, expert_run, attention_run = (_run_precision(acc, p) for p in (dense, precision, attention))
    ceil = efficiency.ceilings(acc, scenario)
    up, out = _links(acc, ceil)
    fp8_peak = peaks.dense_flop_per_s(acc, "fp8", fallback=True)
    dense_peak, attention_peak = (efficiency.serving_dense_peak_flop_per_s(p, peaks.dense_flop_per_s(acc, p), fp8_peak,
                                                                            ceil) for p in (run, attention_run))
    return kern.Context(
        s, acc, ceil, precision, run, hardware.BYTES_PER_ELEMENT[dense],
        architecture.kv_cache_bytes_per_token(s, hardware.BYTES_PER_ELEMENT[kv_precision]),
        dense_peak, acc.bf16_dense_flop_per_s, up, out,
        domain, isl, osl, mode, assumed("moe_tile_rows", scenario),
        assumed("pytorch_kernels_per_layer" if torch_ref else "other_kernels_per_layer", scenario),
        bool(comm_overlap), implementation, assumed("kernel_floor_s", scenario),
        assumed("pytorch_moe_kernels_per_layer" if torch_ref else "moe_kernels_per_layer", scenario),
        ceil.grouped_gemm_hbm_efficiency, assumed("grouped_gemm_launch_s", scenario),
        assumed("scatter_add_rate", scenario) if torch_ref else 0.0,
        assumed("expert_load_cv", scenario), _host_step_s(scheduler, scenario),
        _host_per_sequence_s(scheduler, scenario), _param_totals(s), host_serial=sched.host_in_series(scheduler),
        host_serial_step_s=(s.layers * assumed("cpp_executor_layer_s", scenario) if sched.cpp_executor(scheduler)
                            else 0.0),
        kv_on_demand=sched.kv_on_demand(scheduler, kv_allocation),
        expert_w_bytes=hardware.BYTES_PER_ELEMENT[s.expert_weight_precision or precision],
        expert_run_precision=expert_run, expert_peak=peaks.dense_flop_per_s(acc, expert_run),
        attention_run_precision=attention_run, attention_peak=attention_peak,
        attention_w_bytes=hardware.BYTES_PER_ELEMENT[attention],
        expert_weight_only=bool(s.expert_weight_precision) and not acc.supports(s.expert_weight_precision),
        kv_block_tokens=assumed("kv_block_tokens", scenario),
        prefill_chunk_tokens=_prefill_piece(scheduler, acc, max_tok, scenario), scheduler=scheduler,
        max_batch_size=max_bs, max_num_tokens=max_tok, weight_offload=offl.check_option(weight_offload),
        host_link_efficiency=assumed("host_link_efficiency", scenario),
        memory_fraction=assumed("serving_memory_fraction", scenario), osl_cv=osl_cv, osl_max=osl_max,
        osl_dataset=osl_dataset,
        dense_tile_rows=checks.integer("dense_tile_rows", assumed("dense_tile_rows", scenario), low=1,
                                       whole_floats=True),
        spec_tokens=spec_tokens, accepted_tokens=accepted, scaleup_mesh=mesh)
