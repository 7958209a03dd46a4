"""Inference model: API contract, physics properties, bad inputs and validation error bounds
(model.inference, model.serving_kernels, analysis.validation_inference)."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.analysis import validation_inference as vi
from intelligence_per_dollar.model import efficiency as ef
from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_kernels as kern

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
QWEN30 = dict(layers=48, d_model=2048, heads=32, kv_heads=4, d_ff=6144, vocab=151936, experts=128, top_k=8,
              expert_d_ff=768, head_dim=128)
DSV3 = dict(layers=61, d_model=7168, heads=128, kv_heads=128, d_ff=18432, vocab=129280, experts=256, top_k=8,
            expert_d_ff=2048, shared_experts=1, dense_layers=3, head_dim=128, q_lora_rank=1536, kv_lora_rank=512,
            qk_rope_head_dim=64)


def test_estimate_api_contract():
    r = inf.estimate(model=LLAMA70, accelerator="H200", gpus=8, precision="fp8", input_tokens=1000, output_tokens=1000,
                     concurrency=256, parallelism=None)
    for attr in ("output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_s", "memory_per_gpu_bytes"):
        v = getattr(r, attr)
        assert np.isfinite(v) and v > 0, attr
    assert set(r.parallelism) >= {"tp", "dp", "ep"}
    assert r.memory_per_gpu_bytes < 141e9
    # throughput = concurrency x per-user speed / gpus
    assert r.output_tokens_per_s_per_gpu == pytest.approx(256 * r.tokens_per_s_per_user / 8, rel=1e-9)
    assert r.usd_per_mtok(3.0) == pytest.approx(3.0 / 3600 / r.output_tokens_per_s_per_gpu * 1e6)
    assert r.tokens_per_s_per_mw(1370.0) == pytest.approx(r.output_tokens_per_s_per_gpu / 1370.0 * 1e6)
    assert r.ttft_s > 0


def test_frontier_columns_and_shape():
    df = inf.frontier(model=LLAMA70, accelerator="H200", gpus=8, precision="fp8", input_tokens=1000, output_tokens=1000)
    for col in ("concurrency", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "ttft_s", "memory_per_gpu_bytes"):
        assert col in df.columns
    assert len(df) > 10 and df.fits.all()
    # the envelope: most interactive first, throughput rising as per-user speed falls
    assert df["tokens_per_s_per_user"].is_monotonic_decreasing
    assert df["output_tokens_per_s_per_gpu"].is_monotonic_increasing
    ok = df[df.fits]
    # interactivity falls as concurrency grows; throughput rises at first
    assert ok.tokens_per_s_per_user.iloc[0] > ok.tokens_per_s_per_user.iloc[-1]
    assert ok.output_tokens_per_s_per_gpu.max() > 20 * ok.output_tokens_per_s_per_gpu.iloc[0]


def test_frontier_marks_what_does_not_fit():
    df = inf.frontier(LLAMA70, "H200", 2, "fp8", 1000, 1000, concurrency=[1, 10, 100, 100000], parallelism={"tp": 2})
    assert list(df.fits) == [True, True, True, False]
    assert np.isnan(df.output_tokens_per_s_per_gpu.iloc[-1])


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 400), st.integers(1, 400), st.sampled_from([(1000, 1000), (8192, 1024), (128, 4096)]))
def test_more_concurrency_never_lowers_throughput_while_it_fits(c1, c2, lens):
    lo, hi = sorted((c1, c2))
    df = inf.frontier(LLAMA70, "H200", 8, "fp8", *lens, concurrency=[lo, hi], parallelism={"tp": 8})
    assert df.fits.all()          # up to 400 sequences fit at every length drawn (at most 635 at 8192+1024)
    assert df.output_tokens_per_s_per_gpu.iloc[1] >= df.output_tokens_per_s_per_gpu.iloc[0] * (1 - 1e-9)
    assert df.tokens_per_s_per_user.iloc[1] <= df.tokens_per_s_per_user.iloc[0] * (1 + 1e-9)


@settings(max_examples=20, deadline=None)
@given(st.floats(0.0, 20.0), st.integers(1, 1400))
def test_cost_never_negative(price, conc):
    r = inf.estimate(QWEN30, "B200", 1, "fp4", 1000, 1000, concurrency=conc)
    assert r.usd_per_mtok(price) >= 0


def test_moe_reads_only_touched_experts():
    assert kern.expected_experts_touched(1, 256, 8) == pytest.approx(8)
    assert kern.expected_experts_touched(10000, 256, 8) == pytest.approx(256, rel=1e-6)
    # decode of a few sequences is cheaper than reading all experts
    small = inf.estimate(DSV3, "H200", 8, "fp8", 1000, 1000, concurrency=8, parallelism={"tp": 8, "dp": 1, "ep": 1})
    big = inf.estimate(DSV3, "H200", 8, "fp8", 1000, 1000, concurrency=256, parallelism={"tp": 8, "dp": 1, "ep": 1})
    assert small.step_time_s < big.step_time_s


def test_mla_kv_cache_is_small_and_attention_dp_helps():
    dp = inf.estimate(DSV3, "H200", 8, "fp8", 1000, 1000, None, {"tp": 1, "dp": 8, "ep": 8})
    tp = inf.estimate(DSV3, "H200", 8, "fp8", 1000, 1000, None, {"tp": 8, "dp": 1, "ep": 1})
    # MLA's latent is replicated across TP ranks: attention-DP fits many more sequences
    assert dp.max_concurrency > 4 * tp.max_concurrency


def test_decode_is_memory_bound_prefill_compute_bound():
    dec = inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, concurrency=1, parallelism={"tp": 8}, mode="decode")
    weights = 70.6e9 / 8
    # one sequence: at least the weights read once at the achieved bandwidth, plus launches/all-reduces
    assert dec.step_time_s > weights / (4.8e12 * 0.88)
    assert dec.time_breakdown_s["attention"] < 0.1 * dec.step_time_s
    pre = inf.estimate(LLAMA70, "H200", 2, "fp8", 4096, 1, concurrency=2, parallelism={"tp": 2}, mode="prefill")
    flops = 2 * 70.6e9 * 4096 * 2 / 2
    assert pre.step_time_s > flops / 1979e12
    assert pre.time_breakdown_s["gemm"] + pre.time_breakdown_s["attention"] > 0.7 * pre.step_time_s


def test_out_of_sample_nim_latency():
    """NVIDIA NIM 1.8.0 Llama-3.3-70B-Instruct, 2 x H100 FP8 TP2, 5000 in / 500 out, concurrency 1:
    TTFT 406.77 ms, ITL 18.58 ms (docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md);
    not used anywhere in the model's data."""
    e = inf.estimate(LLAMA70, "H100", 2, "fp8", 5000, 500, concurrency=1, parallelism={"tp": 2})
    assert e.ttft_s == pytest.approx(0.40677, rel=0.25)
    assert e.step_time_s == pytest.approx(0.01858, rel=0.30)


@pytest.mark.parametrize("kwargs,needle", [
    ({"precision": "fp2"}, "precision='fp2' is not allowed"),
    ({"gpus": 0}, "gpus=0 is out of range; allowed: an integer >= 1 and <= 1,000,000,000"),
    ({"gpus": True}, "gpus=True is not allowed; allowed: an integer"),
    ({"gpus": 8.0}, "gpus=8.0 is not allowed; allowed: an integer"),
    ({"accelerator": "Rubin-Ultra"}, "accelerator='Rubin-Ultra' cannot be served by this model"),
    ({"input_tokens": 10**8}, "the KV cache does not fit: the weights fit"),
    ({"comm_overlap": 1}, "comm_overlap=1 is not allowed; allowed: True or False"),
    ({"accelerator": "H300"}, "not in the catalogue"),
    ({"concurrency": 100000}, "the KV cache does not fit"),
    ({"gpus": 1, "precision": "bf16", "accelerator": "H100"}, "the weights do not fit"),
    ({"parallelism": {"tp": 3}}, "does not divide the model's heads"),
    ({"parallelism": {"cp": 2}}, "unknown key(s) 'cp'"),
    ({"parallelism": {"pp": 3}}, "parallelism['pp']=3 must divide gpus / (tp x dp) = 8 / 1 = 8"),
    ({"parallelism": {"tp": 4, "pp": 4}}, "parallelism['pp']=4 must divide gpus / (tp x dp) = 8 / 4 = 2"),
    ({"parallelism": {"pp": 81}}, "parallelism['pp']=81 exceeds the model's layers=80"),
    ({"parallelism": {"tp": 16}}, "tp x dp = 16 does not divide gpus=8"),
    ({"input_tokens": 0}, "input_tokens=0 is out of range; allowed: an integer >= 1"),
    ({"output_tokens": True}, "output_tokens=True is not allowed"),
    ({"mode": "batch"}, "mode='batch' is not allowed"),
    ({"concurrency": -3}, "concurrency=-3 is out of range; allowed: >= 1"),
    ({"concurrency": float("nan")}, "concurrency=nan is not allowed; allowed: a finite number >= 1"),
])
def test_bad_inputs_raise_naming_the_constraint(kwargs, needle):
    args = dict(model=LLAMA70, accelerator="H200", gpus=8, precision="fp8", input_tokens=1000, output_tokens=1000,
                concurrency=64)
    args.update(kwargs)
    with pytest.raises(ValueError) as ex:
        inf.estimate(**args)
    assert needle in str(ex.value)


def test_cost_helpers_reject_bad_values():
    with pytest.raises(ValueError, match="usd_per_gpu_hour"):
        inf.usd_per_mtok(100.0, -1.0)
    with pytest.raises(ValueError, match="power_w_per_gpu"):
        inf.tokens_per_s_per_mw(100.0, 0.0)


# ---- validation against measured results --------------------------------------------------------

@pytest.fixture(scope="module")
def table():
    return vi.validation_table()


#: Runs that really ran which the model refuses, each with the reason it gives (set 47: TensorRT-LLM v0.6.1's static
#: batches of 60 and 240 sequences, where the KV-cache model fits 55 and 239 within ``serving_memory_fraction``).
REFUSED_AT_KV_BOUNDARY = {"heldout47-trtllm061-llama2-7b-a100-fp16-tp1-b60-128-2048": "at most 55 sequences",
                          "heldout47-trtllm061-llama2-70b-a100-fp16-tp4-b240-128-2048": "at most 239 sequences"}


def test_every_case_is_predicted(table):
    """Every case is predicted, including the SGLang GB200 prefill instances that only fit with expert weights
    offloaded to Grace memory (model.serving_offload: refused before offload was modelled), except the two static
    batches of set 47 that the KV-cache model puts just over the memory (:data:`REFUSED_AT_KV_BOUNDARY`)."""
    assert len(table) >= 60
    refused = table[table.refused != ""]
    assert set(refused.case) == set(REFUSED_AT_KV_BOUNDARY)
    for case, reason in zip(refused.case, refused.refused):
        assert "KV cache does not fit" in reason and REFUSED_AT_KV_BOUNDARY[case] in reason
    ok = table[table.refused == ""]
    assert ok.predicted.gt(0).all() and ok.error.notna().all()
    grace = table[table.case.str.startswith("sglang-gb200-dsv3-prefill")]
    assert len(grace) == 2 and grace.error.abs().max() <= 0.60


def test_dense_hopper_serving_within_15_percent(table):
    """TensorRT-LLM Llama-3.3-70B on H100/H200 (dense, FP8): the roofline + calibrated kernels hold."""
    g = table[table.case.str.contains("llama70b-h")]
    assert len(g) == 7
    assert g.error.abs().median() <= 0.15
    assert g.error.abs().max() <= 0.25


def test_skinny_gemm_bf16_within_20_percent(table):
    g = table[table.group == "h200-skinny-bf16"]
    assert g.error.abs().max() <= 0.20


def test_skinny_gemm_fp8_eager_floor(table):
    """FP8 skinny GEMMs (eager torch._scaled_mm): below ~M=128 the host dispatch paces the timing;
    the eager floor (``eager_dispatch_s``) applies to these single-call measurements only."""
    g = table[table.group == "h200-skinny-fp8"]
    assert len(g) == 6 and g.error.abs().max() <= 0.20


def test_grouped_expert_gemms_follow_the_roofline(table):
    """Item 1 of the MoE physics: expert GEMMs with 64 tokens per expert sit on the memory roof
    (each expert's weights re-read), >= 256 on the compute roof (measured on our H200)."""
    g = table[table.group == "h200-grouped-gemm"]
    assert len(g) == 20
    assert g.error.abs().median() <= 0.05 and g.error.abs().max() <= 0.10


def test_h200_measured_groups_within_15_percent(table):
    """Every group measured by the project on its H200 meets the issue's 15% median target."""
    for grp in ("h200-decode-step", "h200-prefill", "h200-skinny-bf16", "h200-skinny-fp8", "h200-grouped-gemm",
                "h200-moe-decode"):
        assert table[table.group == grp].error.abs().median() <= 0.15, grp


def test_known_gaps_stay_bounded(table):
    """Documented misses (see the validation notes in the chapter): MoE serving at max load and
    Blackwell FP4 are still over-predicted (less so since the kernel floor and the grouped-GEMM
    efficiency were added). These bounds record the current state so a regression fails."""
    merged = ("trtllm-gptoss120b", "trtllm-gptoss20b", "trtllm-maverick", "trtllm-dsr1-blog", "sglang-gb200")
    over = table[(table.group.str.startswith("trtllm") | (table.group == "sglang-large-ep"))
                 & ~table.group.isin(merged)]
    # never badly under-predicted (finite runs, issue 12: a long-OSL run's last partial wave drains at a small
    # batch) -- except the KV-limited long-output Blackwell runs, decoded at a small batch, which come out under
    # since Blackwell GEMMs stream weights at their measured rate (ceilings.csv gemm_stream_fraction): pinned here
    # (DeepSeek-R1 1024/8192 on GB200 joined at -20% when NVFP4 experts took the FP8 tensor rate, grouped_fp4_speedup)
    long_out = {"trtllm-dsr1-b200-1024-32768": -0.35, "trtllm-dsr1-gb200-1024-32768": -0.35,
                "trtllm-dsr1-gb200-1024-8192": -0.30,
                "trtllm-maverick-b200-8192-1024": -0.35, "trtllm-maverick-gb200-1024-8192": -0.40}
    pinned = table.case.isin(list(long_out))
    assert (over[~over.case.isin(list(long_out))].error > -0.20).all()
    for case, bound in long_out.items():
        assert table.loc[table.case == case, "error"].item() > bound, case
    assert pinned.sum() == len(long_out)
    # rows merged for issue 12 (unseen when the model was built): record their state so a regression fails;
    # GPT-OSS-20B on one B200 is under-predicted (-39%: the per-sequence host time binds at ~3,000 sequences)
    new = table[table.group.isin(merged)]
    assert new.error.abs().median() <= 0.50 and new.error.abs().max() <= 1.70
    assert over.error.median() <= 0.40
    for grp, bound in (("trtllm-qwen3-30b", 0.25), ("trtllm-qwen3-235b", 0.50), ("trtllm-dsr1", 0.50),
                       ("sglang-large-ep", 0.50), ("trtllm-llama70b", 0.22)):
        assert table[table.group == grp].error.abs().median() <= bound, grp


def test_median_near_the_issue_target_of_15_percent(table):
    """Issue 4's target is a median |error| <= 15% over all measured cases. It held (14.6% over 490 cases) until set 24
    (37 serving runs collected blind on 2026-12-03, 22.7% median) was merged unchanged: 15.05% over 527. Session 19's
    vLLM engine generations (schedulers vllm-v1, vllm-v1-async, vllm-v0.6 on the rows that ran them) left 15.02% over
    528. Session 20's KV block policy (``kv_allocation``: NVIDIA's MLPerf harness and vLLM take blocks as tokens arrive,
    so memory-bound batches grow) left 15.06%: the v6.0 DeepSeek-R1 Offline rows came within 10%, the Llama 2 70B rows
    the model already over-predicts rose 1-2%. Set 25 (29 serving runs collected blind on 2026-12-03, 31.4% median)
    merged unchanged: 15.64% over 557. Session 21's dense NVFP4 rate of Blackwell Ultra in serving engines
    (``dense_fp4_speedup``: B300 / GB300 dense NVFP4 GEMMs at twice the FP8 peak, as on B200, not the 3x of the spec)
    took the 66 B300 / GB300 cases from 21.5% (signed +16.6%) to 12.5% (+1.4%) and the median to 14.81%, within the
    target. Set 26 (27 serving runs collected blind on 2026-12-03 at 5f702a8, 10.2% median) merged unchanged: 14.68% over
    584. Set 27 (31 serving runs collected blind on 2026-12-03 at 10ed5df, 12.1% median) merged unchanged: 14.61% over
    615. Set 28 (34 serving runs collected blind on 2026-12-04 at 1e415bd, 19.1% median) merged unchanged: 14.93% over
    649. Set 29 (30 serving runs collected blind on 2026-12-04 at cae28c1, 15.6% median) merged with one change, the C++
    runtime's host time per sequence for the TensorRT-engine flow (``cpp_runtime_host_per_sequence_s``, which moves
    only set 29's TP8 Mixtral 8x7B row, -53% -> +34%): 14.98% over 679. Set 30 (32 serving runs collected blind on
    2026-12-04 at 0e682ab, 9.8% median) merged unchanged: 14.85% over 711. Session 26's dense NVFP4 GEMM terms on
    Blackwell (efficiency.dense_gemm_terms, fitted to published B200 kernels): 13.93%. Set 31 (35 serving runs
    collected blind on 2026-12-04 at 203c2e0, 13.8% median) merged unchanged: 13.92% over 746. Set 32 (35 serving runs
    collected blind on 2026-12-04, 11.6% median) merged unchanged: 13.89% over 781. Set 33 (18 InferenceX DeepSeek-R1
    rows collected blind on 2026-12-04 at 1c8c7ef, 15.2% median) merged unchanged: 13.89% over 799. Set 34 (29 serving
    runs collected blind on 2026-12-04 at 2312521, 8.4% median) merged unchanged: 13.83% over 828. Set 35 (35 serving
    runs collected blind on 2026-12-04 at f3ac9b0, 20.9% median: 2024-era TensorRT-LLM on Hopper and MLPerf
    Interactive on Blackwell) merged unchanged: 14.35% over 863. Set 36 (16 InferenceX gpt-oss-120b cells on H100,
    15.0% median) merged unchanged: 14.39% over 879. Session 29 read the MLPerf Server / Interactive runs with NVIDIA's
    harness dispatch and TensorRT-LLM's C++ executor loop (``trtllm-engine``), ran the H200 405B engines' GEMM +
    all-reduce fusion and Hopper's grouped FP8 GEMMs at their measured rate: 10.93% over 879 (the latency-limited
    rows 21.0% -> 7.7%). Set 41 (26 MLPerf Inference v6.1 cells collected blind on 2026-12-05 at 2fdf04a, 15.6% median)
    merged unchanged: 10.62% over 1,020. Set 42 (28 MLPerf Inference v6.1 cells collected blind on 2026-12-05 at a612de1, 9.4%
    median) merged unchanged: 10.62% over 1,048. Set 45 (16 MLPerf Inference cells of QCT, Supermicro and Lenovo collected
    blind on 2026-12-05 at 0fbbf7b, 7.6% median) merged unchanged: 10.48% over 1,064. Set 47 (28 static-batch cells of
    TensorRT-LLM's 2023-24 performance docs collected blind on 2026-12-05 at 23ed587, 13.0% median; two refused at the
    KV-cache boundary) merged unchanged: 10.62% over 1,090 predicted. Set 48 (10 MLPerf v5.1 llama3.1-8b results on 8
    B200 / H200 collected blind at 23ed587, 39.0% median, every run faster in the model) merged unchanged: 10.77% over
    1,100. Session 35: the Google / Oracle v6.1 DeepSeek-R1 Interactive rows take the MTP 3 and fp8 KV every stored
    v6.1 Interactive config runs (0.06x -> +3% / +7%), and set 51 (37 MLPerf Inference v4.1 / v5.0 cells on 8 H100 / H200
    collected blind at a89e88c, 6.4% median) merged unchanged: 10.47% over 1,137 predicted. Set 53 (36 runs of
    TensorRT-LLM's tuning guide, the vLLM team's R1-Benchmark spot checks and llm-ie-benchmarks' SGLang cells, collected
    blind at a89e88c, 48.4% median: small Poisson runs of DeepSeek-R1 on 8 H200, every run but one faster in the model;
    the tuning guide's rows then took its engine's chunked context): 10.76% over 1,173. Set 55 (23 MLPerf Inference v5.0
    cells of four Supermicro systems on 8 B200 / H200, collected blind at ec326a8, 5.0% median) merged unchanged: 10.62%
    over 1,196. Set 57 (18 MLPerf Inference v4.0 llama2-70b cells of six partners on 4 / 8 H100 and one v4.1 Mixtral
    pair on 8 H200, collected blind at 43b9378, 25.7% median: March 2024's TensorRT-LLM, every run slower than the
    model) merged unchanged: 10.86% over 1,216. Session 36: the 14 rows run on HGX H100 4-GPU boards (Dell XE8640 /
    XE9640, Fujitsu GX2560 M7: '6x 4th Gen NVLink' per pair, no NVSwitch) name that system, whose tensor-parallel pairs
    all-reduce over a third of a GPU's NVLinks (serving_kernels.scaleup_share): their Llama 2 70B TP2 cells +22% to
    +63% -> +4% to +39%: 10.74% over 1,216. Set 59 (32 MLPerf Inference v5.1 llama3.1-8b / Mixtral cells and GPUStack's
    GLM-4.5-Air pages, collected blind at 8c25af3, 29.1% median: the 8B on 8 B200 +22% to +63% where on 8 H200 it is
    within 7%, GLM-4.5-Air with 2025's vLLM / SGLang +1% to +92%) merged unchanged: 10.94% over 1,248. Set 61 (22 of
    NVIDIA's own MLPerf Inference v4.0-v5.0 cells, collected blind at e64e8ac, 6.0% median) merged unchanged: 10.86% over
    1,270. Set 63 (11 MLPerf Inference v5.1 partner cells, collected blind at c9b7773, 7.3% median) merged unchanged:
    10.78% over 1,281. Set 65 (18 runs of dstack's Llama 3.1 405B FP8 benchmark on 8 H100 with vLLM 0.6.3 and a vLLM
    issue's Llama 3.3 70B on 4 A100, collected blind at 2e6d6f7, 59.6% median: every run slower than the model) merged
    unchanged: 11.10% over 1,297. Set 66 (22 unused TensorRT-LLM perf-overview cells of GPT-OSS and Llama 4 Maverick
    and two SGLang PR runs on 4 B200, collected blind at 2e6d6f7, 25.4% median) merged unchanged: 11.39% over 1,319.
    Set 68 (24 unused TensorRT-LLM v1.0 perf-overview cells, collected blind at 316d6bd, 8.6% median) merged unchanged:
    11.38% over 1,343. Set 69 (19 MLPerf Inference v4.1 / v5.0 cells on the Hopper parts new to the catalogue: GH200,
    H100 PCIe / NVL, H200 NVL; collected blind at 81bfe68, 8.4% median) merged unchanged: 11.33% over 1,362. Set 71 (two
    vLLM / SGLang runs of GLM-4.5-Air-FP8 on B200 from pull requests tuning their Triton fused-MoE configs, collected
    blind at 3aaaed3, +128% / +94%) merged unchanged: 11.36% over 1,364. Set 73 (21 MLPerf Inference v4.0-v5.0 partner
    cells on H200, GH200 and H100-NVL, collected blind at 875c867, 7.8% median) merged unchanged: 11.34% over 1,385.
    Set 74 (8 MLPerf Inference v5.1 Llama 2 70B cells on H200-NVL, collected blind at 30da6f9, 8.9% median) merged
    unchanged: 11.31% over 1,393. Set 76 (18 MLPerf Inference v5.0 / v5.1 partner cells on H200, H200-NVL and H100-NVL,
    collected blind at 6477fd3, 5.4% median) merged unchanged: 11.22% over 1,411. Set 78 (Google's gpu-recipes Llama
    3.1 405B on 8 H200, two TensorRT-LLM releases, collected blind at 77ff161, -8% both) merged unchanged: 11.10% over
    1,413. Set 79 (Nebius's MLPerf v5.1 Llama 2 70B on 8 H200, collected blind at e2203a6, 8.5% median) merged
    unchanged: 11.09% over 1,416. Set 83 (Etched's trtllm-bench 0.16 Llama 3.1 70B sweep on 8 H100 and two SGLang PR
    runs, collected blind at 3444a4b, 10.1% median, the 8192/1024 row -97% as collected with whole prompts) merged with
    that group's scheduler corrected to the chunked context its log states: 11.03% over 1,424. Session 42 let the 45
    finite runs whose clients sent requests at a stated rate arrive as that Poisson stream (``request_rate_per_s``):
    10.97% over 1,424. Set 85 (TensorRT-LLM issues, a vLLM PR and SGLang PRs, collected blind at 2fe60ff, 45.6%
    median: every DeepSeek / Qwen3 MoE row slow against the model, and an issue's 405B on B200 3.3x) merged unchanged:
    11.10% over 1,431. Set 87 (vLLM issues 17788 and 25915: Qwen3-32B on an H100 NVL at 32 sequences, Qwen3-8B BF16
    / FP8 on an H100; collected blind at ff4224b, 30.8% median) merged unchanged: 11.16% over 1,434. Set 89 (vLLM
    issue 30326's GPT-OSS-120B on 8 H200 and PR 23369's GPT-OSS-20B on 2 Hopper GPUs, collected blind at 121371b, 8.8%
    median) merged unchanged: 11.10% over 1,439. Set 90 (SGLang issue 1362's Llama 3.1 405B FP8 on 8 H100 at 16
    requests per second, collected blind at 73dc99d, +76%) merged unchanged: 11.16% over 1,440. Set 91 (vLLM issue
    9476's and SGLang issue 1639's Llama 3 8B on 2 H100, 2,000 ShareGPT prompts at once, collected blind at fdeac77,
    +69% / +56%) merged with the vLLM row's stated scheduler (+59%): 11.24% over 1,442. Set 93 (SGLang cookbook
    pages: MiniMax-M2.5 FP8 on 8 B200 / 8 H100, GLM-4.5V on 4 B200, Qwen3-Coder-480B FP8 on 8 B200, collected blind at
    5a39193, 37.5% median) merged unchanged: 11.38% over 1,463. Set 94 (vLLM's Llama 3.1 launch post, 405B FP8 on 8
    H100, 1,000 prompts at once, +97%) merged unchanged: 11.39% over 1,464. The bound records that state so a
    regression fails; chapter 3's takeaway says where the median stands."""
    assert table.error.abs().median() <= 0.114


def test_ep_load_imbalance_properties():
    assert kern.ep_load_imbalance(1000, 256, 1, 0.6) == pytest.approx(1.0)
    few, many = kern.ep_load_imbalance([100, 1e6], 256, 8, 0.6)
    assert few > many > 1.0                      # finite-batch noise shrinks, popularity skew stays
    assert kern.ep_load_imbalance(1e9, 256, 72, 0.6) == pytest.approx(1 + (2 * np.log(72) * 0.36 * 72 / 256) ** 0.5)
    assert kern.ep_load_imbalance(1e9, 256, 72, 0.0) == pytest.approx(1.0, abs=1e-3)


def test_host_overhead_only_binds_small_models_at_large_batch():
    small = inf.estimate(QWEN30, "B200", 1, "fp4", 1000, 1000, concurrency=1400)
    host = kern.host_time_s(1400, sctx.assumed("host_step_s", "central"), sctx.assumed("host_per_sequence_s", "central"))
    # the host paces the iterations: the GPU's own time (NVFP4 experts at the FP8 tensor rate) is within 1% of it
    assert host <= small.step_time_s <= host * 1.01
    big = inf.estimate(LLAMA70, "H200", 8, "fp8", 1000, 1000, concurrency=64, parallelism={"tp": 8})
    assert big.step_time_s > kern.host_time_s(64, sctx.assumed("host_step_s", "central"),
                                             sctx.assumed("host_per_sequence_s", "central"))


def test_summary_has_all(table):
    s = vi.validation_summary(table)
    assert "all" in s.index and np.isfinite(s.loc["all", "median"])


def test_h200_measured_decode_steps_and_prefill(table):
    """Whole decode steps (CUDA graph, batch 1-256) and prefill of a Llama-3-8B shape measured on the
    project's H200 (data/measurements/h200-2026-11-30): the model's kernels were not fitted to them."""
    dec = table[table.group == "h200-decode-step"]
    pre = table[table.group == "h200-prefill"]
    assert len(dec) == 6 and len(pre) == 3
    assert dec.error.abs().median() <= 0.12 and dec.error.abs().max() <= 0.18
    assert pre.error.abs().max() <= 0.08


def test_h200_measured_moe_decode_steps(table):
    """Whole MoE decode steps (Qwen3-30B-A3B shape, 128 experts top-8, CUDA graph, batch 1-512) on the
    project's H200: 1.7-4.5x the byte roofline, explained by the per-kernel floor (calibrated on the
    dense batch-1 step), the grouped-GEMM weight-stream efficiency and launch cost, and the atomic combine."""
    g = table[table.group == "h200-moe-decode"]
    assert len(g) == 6
    assert g.error.abs().median() <= 0.05 and g.error.abs().max() <= 0.12


def test_moe_decode_pays_kernel_floor_and_grouped_gemm_costs():
    """At batch 1 a 48-layer MoE reads ~6 GB of active weights (~1.4 ms at 4.2 TB/s) but launches
    ~2,000 kernels: the step is several times its byte roofline; a fused engine launches fewer."""
    ref = inf.estimate(QWEN30, "H200", 1, "bf16", 1024, 1, 1, {"tp": 1}, mode="decode", implementation="pytorch")
    eng = inf.estimate(QWEN30, "H200", 1, "bf16", 1024, 1, 1, {"tp": 1}, mode="decode")
    assert ref.step_time_s > 4 * 6.1e9 / 4.8e12
    assert eng.step_time_s < ref.step_time_s
    # grouped GEMMs stream weights slower than dense GEMMs and pay a fixed launch
    ctx = sctx.context(QWEN30, "H200", "bf16", 1024, 1, None, "decode", "central")
    dense = float(kern.gemm_s(ctx, 8.0, 1536, 2048, 8))
    grouped = float(kern.grouped_gemm_s(ctx, 8.0, 1536, 2048, 8))
    assert grouped > dense / ctx.ceil.grouped_gemm_hbm_efficiency * 0.99
    with pytest.raises(ValueError, match="implementation='numpy' is not allowed"):
        inf.estimate(QWEN30, "H200", 1, "bf16", 1024, 1, 1, implementation="numpy")


def test_huge_and_numpy_gpu_counts():
    """A billion GPUs is searched by factorising the count (not scanning 10^9 divisors); NumPy
    integers count as integers."""
    huge = inf.estimate(LLAMA70, "H200", 10**9)
    assert huge.gpus == 10**9 and huge.output_tokens_per_s_per_gpu > 0
    assert inf.estimate(LLAMA70, "H200", np.int64(8)) == inf.estimate(LLAMA70, "H200", 8)
    assert kern.divisors(720) == [d for d in range(1, 721) if 720 % d == 0]
    assert len(kern.divisors(10**9)) == 100 and kern.divisors(10**9)[-2:] == [5 * 10**8, 10**9]


def test_a_user_s_frontier_is_never_below_the_stated_layout():
    """The user's prediction (frontier over every layout, its highest throughput) is an envelope that
    contains the stated layout: for dense Llama-70B max-load cases with the default KV precision and
    no benchmark limits it is at least the stated layout's steady-state throughput."""
    from intelligence_per_dollar.sources import runs as run_files
    cases = [c for c in run_files.inference_runs() if c["group"] == "trtllm-llama70b" and c["concurrency"] is None
             and c["mode"] == "aggregated"][:4]
    assert len(cases) == 4
    for c in cases:
        stated = inf.estimate(c["model"], c["accelerator"], c["gpus"], c["precision"], c["input_tokens"],
                                    c["output_tokens"], parallelism=c["parallelism"] or None)
        assert vi.predict_as_user(c) >= stated.output_tokens_per_s_per_gpu * (1 - 1e-9), c["id"]
    t = vi.user_table()
    assert len(t) >= 80 and (t.refused == "").all()
    assert set(t.group) >= {"trtllm-llama70b", "trtllm-dsr1", "trtllm-v017"}
    # a user who states the benchmark's request count: every finite run predicted, never above the steady state's
    # best (a finite run only adds a ramp and a drain), and the steady-state runs have no count to state. The two
    # are timed differently (the finite run's cohorts at their own context, whole admission iterations; the steady
    # state's mean iteration), so a run of short requests far longer than its batch can land a little above the
    # steady state: v0.21's 405B TP8 at 128 / 128 over 30,000 requests by 0.19%, and set 85's Llama 3.1 8B on one
    # H100 PCIe at 128 / 28 over 30,000 (prompt-heavy iterations the cohorts time at their own mix) by 0.73%. One per
    # cent bounds that.
    finite = t[t.requests.notna()]
    assert len(finite) >= 100 and finite.error_with_requests.notna().all()
    assert (finite.predicted_with_requests <= finite.predicted * 1.01).all()
    assert t[t.requests.isna()].predicted_with_requests.isna().all()


def _check_held_out_set(table, prefix, cases, median, worst, offline_cases, offline_median):
    """A held-out set's groups (``prefix``): every case predicted, |error| median and max within the bounds, and
    its max-load (not latency-limited) cases within ``offline_median``."""
    s = table[table.group.str.startswith(prefix)]
    assert len(s) == cases and (s.refused == "").all()
    assert s.error.abs().median() <= median and s.error.abs().max() <= worst
    offline = s[~s.latency_limited]
    assert len(offline) == offline_cases and offline.error.abs().median() <= offline_median


def test_held_out_set_6_stays_near_its_blind_error(table):
    """Set 6 of data/runs/HELD_OUT.md (22 serving runs collected blind: MLPerf v5.1 partner and v6.0 submissions on H200,
    B200, B300 and GB300, unused cells of TensorRT-LLM's perf-overview table): median 22% when first predicted, with
    output-length spread and NVFP4 experts at the FP8 rate (26% / 360% at the session's start). The misses are the
    Server/Interactive runs held to p99 latency limits (DeepSeek-R1 Server +175%, Llama-2-70B Interactive +58-66%: the
    model's latencies are means) and MLPerf v6.0 DeepSeek-R1, whose software a year on runs 1.75x v5.1's (-17 to -26%).
    Blackwell's measured fused-MoE weight stream (FlashInfer PR 5301) made the DeepSeek-R1 Server miss +183%, and MLA's
    absorbed decode at its own head dimension (less softmax per FLOP, forward-only kernels: +6% against FlashMLA's
    measured 660 TFLOP/s on H800) +224%: the p99 limit binds where the model's mean latency does not. Session 20 let
    NVIDIA's harness take KV blocks as tokens arrive (``kv_allocation`` on-demand, its configs' ``max_util``): the
    v6.0 DeepSeek-R1 Offline rows moved from -13% to -2% to -6% (offline median 13.3% -> 6.5%) and the v5.1 B200
    rows, a year's older software, further up (Offline +65% -> +91%, Server +220% -> +262%: max 2.30 -> 2.65)."""
    _check_held_out_set(table, "heldout6-", 22, 0.24, 2.65, 13, 0.22)


def test_held_out_set_7_stays_near_its_blind_error(table):
    """Set 7 of data/runs/HELD_OUT.md (27 serving runs collected blind: MLPerf v5.1 ASUSTeK and v6.0 Quanta / ASUSTeK
    submissions, TensorRT-LLM release 1.2 and 0.19.0 perf-overview cells): median 14.7% when first predicted, 13.4%
    merged. The misses: TensorRT-LLM 0.19's early NVFP4 Llama 3.1 405B on 8 B200 (+59%), the p99-limited Server runs
    (+39% to +48%; DeepSeek-R1 Server on B300 +71% since MLA decode runs at its head dimension's rate) and MLPerf v6.0's
    DeepSeek-R1 Offline on B300 (-26%, a year's newer software; -22% now)."""
    _check_held_out_set(table, "heldout7-", 27, 0.15, 0.75, 22, 0.13)


def test_held_out_set_8_stays_near_its_blind_error(table):
    """Set 8 of data/runs/HELD_OUT.md (22 serving runs collected blind from sources never used before: MLPerf v4.0,
    TensorRT-LLM's 2023 H200 blogs, NVIDIA NIM, SGLang's gpt-oss blog, GPUStack's performance lab): median 32% when
    first predicted. NIM's Llama 3.3 70B on 2 H100 is within 3%; the misses are old software (TensorRT-LLM 0.5's
    static batches +192%, MLPerf v4.0 +24% to +38%: the model's kernels are today's), SGLang's batch-1 decode
    (-32% / -42%: the model's per-layer kernel floors and all-reduce latencies are too slow for one sequence) and
    GPUStack's bursts of 500 prompts through an OpenAI-compatible server (+2% to +168%). Its two ShareGPT rows at 4 users
    follow ShareGPT's own output lengths since set 14 (output_dataset): median 30% (from 33%)."""
    _check_held_out_set(table, "heldout8-", 22, 0.31, 1.95, 20, 0.31)


def test_held_out_set_9_stays_near_its_blind_error(table):
    """Set 9 of data/runs/HELD_OUT.md (15 serving runs at stated concurrency, collected blind from sources never used
    before: SemiAnalysis InferenceX's DeepSeek-R1 points on H200, B200 and B300 with SGLang and TensorRT-LLM, LMDeploy's
    2023 A100 static-batch table): median 29% when first predicted. InferenceX's MoE decode at 16-128 users runs 13-32%
    faster than predicted (the model's MoE decode step at moderate batch is too slow, as for batch-1 decode in set 8)
    and LMDeploy v0.1's TurboMind 31-56% slower (old software; the model's kernels are today's)."""
    _check_held_out_set(table, "heldout9-", 15, 0.30, 0.58, 15, 0.30)


def test_held_out_set_10_stays_near_its_blind_error(table):
    """Set 10 of data/runs/HELD_OUT.md (18 serving runs collected blind: InferenceX's experimental gpt-oss-120b vLLM sweep
    on 2-8 H100 and unused DeepSeek-R1 cells on B200, the llm-ie-benchmarks DeepSeek-R1 runs on 8 H200): median 21% when
    first predicted. As in set 9, moderate-concurrency MoE decode (4-64 users) runs faster than the model (-12% to
    -34%); the miss is a prefill-heavy 10,000/500 vLLM burst on H200 (-73%)."""
    _check_held_out_set(table, "heldout10-", 18, 0.22, 0.75, 18, 0.22)


def test_held_out_set_11_stays_near_its_blind_error(table):
    """Set 11 of data/runs/HELD_OUT.md (9 serving runs merged of 15 collected blind: vLLM's WideEP DeepSeek-R1 decode and
    prefill on GB200, LMSYS/Ant Group's H20 prefill, InferenceX issue #870's SGLang H200 table): median 18% when first
    predicted. The H200 SGLang decode at 8-64 users is 11-20% slower in the model, as in sets 9-10. Set aside: six
    single-user DeepSeek-R1 rows on 16 H100 whose layout the source does not give (TPOT 23 ms; the model's best layout,
    TP8 x PP2, runs 2.8x faster, SGLang's documented two-node --tp 16 1.8x)."""
    _check_held_out_set(table, "heldout11-", 9, 0.19, 0.25, 9, 0.19)


def test_held_out_set_12_stays_near_its_blind_error(table):
    """Set 12 of data/runs/HELD_OUT.md (3 serving runs merged of 5 collected blind, from GitHub threads: SGLang's
    gpt-oss-20b on one H100 at 4 and 32 users, 20-160 requests with multi-second first tokens; vLLM's untuned BF16 fused
    MoE for Qwen3-30B-A3B on one H100 at 10 users): median 33% when first predicted (+52%, +18%, -33%). Set aside: two
    vLLM B200 bursts of 1,000 prompts, one over ShareGPT lengths whose spread is not stated (the longest outputs set
    the wall time), one eager with dummy weights. The ShareGPT burst (gpt-oss-120b on 8 B200, blind +319%) joined
    on 2026-12-02 with ShareGPT's own lengths (output_dataset sharegpt-vllm): +166%, the drain no longer the miss.
    Session 19 named the two vLLM rows' engine (scheduler vllm-v1, vLLM main of August 2025: synchronous scheduling,
    the API server's 1,024-sequence cap): the Qwen3-30B row -33% -> -36%, the B200 burst +165% -> +184% (the cap
    raised the model's throughput there), so the bounds moved from 0.43 / 1.70 to 0.44 / 1.85."""
    _check_held_out_set(table, "heldout12-", 4, 0.44, 1.85, 4, 0.44)


def test_held_out_set_14_stays_near_its_blind_error(table):
    """Set 14 of data/runs/HELD_OUT.md (10 serving runs collected blind from GPUStack's performance lab: GLM-4.6 on 4-8
    H200 with SGLang and vLLM, Qwen3-8B and gpt-oss-20b on one H100): median 106% / max 204% when first predicted, when
    ShareGPT's 1,000-prompt bursts were read as requests of one length. With ShareGPT's own output lengths
    (output_dataset sharegpt-vllm: mean ~200, cv 1.0, a thin tail to ~1,800 tokens) the drain sets the wall time as
    measured: GLM-4.6 +8-10% (was +168-173%). Left: vLLM's gpt-oss-20b burst +50% / +74% (two GPUs' worth of models on
    different machines stream ~8,000 tokens/s with ~90 ms TPOT: a server-side ceiling the model does not carry)."""
    _check_held_out_set(table, "heldout14-", 10, 0.19, 0.75, 10, 0.19)


def test_held_out_set_13_stays_near_its_blind_error(table):
    """Set 13 of data/runs/HELD_OUT.md (10 serving runs collected blind: InferenceX PR 3363's baseline table,
    DeepSeek-R1 FP8 on 4-8 B200 with SGLang v0.5.12 and an FP8 KV cache at 1-64 users): median 12% when first
    predicted. Unlike sets 9-11 the model is too fast at 1-8 users (+8% to +17%) and too slow only at 32 (-12%)."""
    _check_held_out_set(table, "heldout13-", 10, 0.12, 0.18, 10, 0.12)


def test_held_out_set_15_stays_near_its_blind_error(table):
    """Set 15 of data/runs/HELD_OUT.md (20 Blackwell serving runs collected blind: MLPerf Inference v6.0 Dell XE9780L
    8 x B300, SGLang's cookbook on 8 B200, TensorRT-LLM release 1.2's B300/GB300 cells): median 23% when first
    predicted, merged unchanged. TensorRT-LLM's cells are within 12% (median); B300's dense NVFP4 Llama-2-70B runs 39%
    slower than the model (B200's 13-18%), SGLang's TP8 DeepSeek-R1 at 16-100 users 26-43%, and SGLang's ShareGPT
    gpt-oss-120b at 100 users (its own sampler, no length caps: one length assumed) +116%. The MoE experts'
    activation traffic (session 14, ``moe_elementwise_s``) moved the median from 22.9% to 23.2%."""
    _check_held_out_set(table, "heldout15-", 20, 0.24, 1.17, 17, 0.21)


def test_held_out_set_16_stays_near_its_blind_error(table):
    """Set 16 of data/runs/HELD_OUT.md (10 serving runs collected blind from engine pull requests: TensorRT-LLM's GLM-4.7
    FP8 on 8 H100 and 4 GB200 at 4-512 users, vLLM's DeepSeek-V3.1 on 8 H200, SGLang's DeepSeek-V3 on 8 H20 and on two
    H200 nodes at TP16): median 14% when first predicted, merged unchanged. The misses: GLM-4.7 on 4 GB200 at 512 users
    (+60%) and SGLang's two-node TP16 at 8 users (+82%, as set 11's two-node runs: the model's cross-node TP is faster
    than SGLang's)."""
    _check_held_out_set(table, "heldout16-", 10, 0.14, 0.83, 10, 0.14)


def test_held_out_set_17_stays_near_its_blind_error(table):
    """Set 17 of data/runs/HELD_OUT.md (one serving run merged of two collected blind: vLLM PR 43232's Qwen3-235B FP8 on
    4 B200 at TP4, 64 users over 128 prompts of 30,000 / 1,000 tokens): +88% when first predicted, merged unchanged.
    Set aside: TensorRT-LLM PR 7104's DeepSeek-R1 NVFP4 trtllm-bench run on 4 GB200, whose attention layout is not
    printed (+293% at the searched attention-DP layout, +110% at TP4)."""
    _check_held_out_set(table, "heldout17-", 1, 0.89, 0.89, 1, 0.89)


def test_held_out_set_18_stays_near_its_blind_error(table):
    """Set 18 of data/runs/HELD_OUT.md (11 serving runs merged of 12 collected blind: the SGLang cookbook's Llama 3.1 70B
    BF16 on 8 A100 and GLM-4.6 / Kimi-K2 on 8 B200, TP8 or attention DP, 1-100 users over random or ShareGPT prompts):
    41% when first predicted, every row faster in the model (+5% to +93%; one user at TP8 +41% to +93%). Set aside:
    Kimi-K2's 100-user row, whose --tp 8 --dp 4 --ep 4 is not a layout the model runs."""
    _check_held_out_set(table, "heldout18-", 11, 0.42, 0.93, 11, 0.42)


def test_dense_gemms_compute_whole_row_tiles():
    """The serving context takes the dense GEMMs' row tile from data/assumptions/inference.csv (dense_tile_rows
    64 / 128 / 256); an engine's iteration pays half a tile on average, the fixed-shape PyTorch reference the next
    whole tile; a compute-bound max-load GEMM slows by exactly that, a decode GEMM of a few rows not at all. (FP8, whose
    dense GEMMs take the max of the two roofs; NVFP4's p-norm, efficiency.dense_gemm_terms, blends the padded compute
    with the stream.)"""
    ctxs = {sc: sctx.context("Llama-3.1-70B", "B200", "fp8", 1000, 1000, None, "aggregated", sc)
            for sc in ("low", "central", "high")}
    assert [c.dense_tile_rows for c in ctxs.values()] == [64.0, 128.0, 256.0]
    ctx = ctxs["central"]
    flat = replace(ctx, dense_tile_rows=1.0)
    over = ctx.ceil.kernel_overhead_s
    busy = lambda c, m: float(kern.gemm_s(c, m, 28672, 8192)) - over
    assert busy(ctx, 784.0) / busy(flat, 784.0) == pytest.approx((784 + 63.5) / 784)
    ref = replace(ctx, implementation="pytorch")
    assert busy(ref, 784.0) / busy(flat, 784.0) == pytest.approx(896 / 784)
    assert busy(ref, 1024.0) == pytest.approx(busy(flat, 1024.0))
    assert busy(ctx, 4.0) == pytest.approx(busy(flat, 4.0))
    # a replayed CUDA graph's captured batch is a fixed shape: 512 rows pad nothing, 600 pad to 640
    graph = lambda m: float(kern.gemm_s(ctx, m, 28672, 8192, fixed_rows=True)) - over
    assert graph(512.0) == pytest.approx(busy(flat, 512.0))
    assert graph(600.0) / busy(flat, 600.0) == pytest.approx(640 / 600)


def _serving_parts():
    from intelligence_per_dollar.sources import hardware
    out = []
    for acc_id, acc in hardware.accelerators().items():
        try:
            kern.check_catalogue_fields(acc)
        except ValueError:
            continue                      # parts without the catalogue figures the serving model needs
        out += [(acc_id, p) for p in ("bf16", "fp8", "fp4") if acc.supports(p)]
    return out


@pytest.mark.parametrize("acc_id,precision", _serving_parts())
def test_a_decode_gemm_of_a_few_rows_stays_on_the_weight_stream(acc_id, precision):
    """On every catalogued accelerator and precision, a dense decode GEMM of 1-16 rows (an engine's iteration or a
    fixed shape) takes as long as with no tiles at all: a few rows run a small autotuned tile, never 128 rows of
    work (which would make them compute-bound on a part with little compute per byte, such as the H20). Exactly so
    where the two roofs combine as a max; within 0.2% for block-scaled FP4, whose p-norm (efficiency.dense_gemm_terms)
    lets the small compute term of a few padded rows show."""
    ctx = sctx.context("Llama-3.1-8B", acc_id, precision, 1000, 1000, None, "aggregated", "central")
    flat = replace(ctx, dense_tile_rows=1)
    m = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    rtol = 2e-3 if np.isfinite(ef.dense_gemm_terms(ctx.run_precision, ctx.ceil)[0]) else 1e-12
    for c, f in ((ctx, flat), (replace(ctx, implementation="pytorch"), replace(flat, implementation="pytorch"))):
        assert np.allclose(kern.gemm_s(c, m, 14336, 4096), kern.gemm_s(f, m, 14336, 4096), rtol=rtol)
        assert np.allclose(kern.gemm_s(c, m, 4096, 14336), kern.gemm_s(f, m, 4096, 14336), rtol=rtol)


def test_held_out_set_19_stays_near_its_blind_error(table):
    """Set 19 of data/runs/HELD_OUT.md (12 serving runs collected blind: Lambda's vLLM v0.5.4 benchmark, Mistral-7B and
    Mixtral-8x7B / 8x22B BF16 on 1-8 A100 and H100 at pure TP, 320 ShareGPT prompts at once): 95% when first predicted,
    every row faster in the model: Mixtral +35% to +111% at TP2-4 and +75% to +257% at TP8, Mistral-7B +107% / +134% on
    one GPU and +268% / +451% at TP8, where 8 GPUs measured 1.3x / 1.5x the throughput of one. vLLM v0.5's engine ran
    its host work (API server, scheduler, output processing) between GPU iterations instead of beside them (vLLM's
    v0.6.0 blog: the GPU busy 38% of the time on Llama 3 8B), a cost that does not shrink with TP; the model's engines
    overlap it. With the rows' engine stated (scheduler vllm-v0.5: host work in series, its per-sequence cost derived
    from that profile; benchmark.py's max-num-seqs 1024): 31% / 122%. H100 rows +9% to +34%; the A100 rows stay faster
    in the model (+20% to +122%, worst at TP8): their hosts spend more per step than the H100 profile gives."""
    _check_held_out_set(table, "heldout19-", 12, 0.32, 1.23, 12, 0.32)


def test_held_out_set_5_stays_near_its_blind_error(table):
    """Set 5 of data/runs/HELD_OUT.md (26 serving runs collected blind: MLPerf v5.0/v5.1 partner submissions,
    TensorRT-LLM v0.14/v0.20 tables, NVIDIA's 405B blog, SGLang's Kimi-K2 blog): median 14.6% when first predicted;
    the misses are DeepSeek-R1 MLPerf Offline (+95%, +136%, as NVIDIA's own R1 rows) and Llama-3.3-70B in FP8 on a
    single H100 (-80% with the datasheet 80 GB, -44% since capacity is the driver's 85.5 GB)."""
    s5 = table[table.group.str.startswith("heldout5-")]
    assert len(s5) == 26 and (s5.refused == "").all()
    assert s5.error.abs().median() <= 0.16 and s5.error.abs().max() <= 1.40


def test_two_batch_overlap_hides_the_all_to_alls_but_they_slow_the_compute():
    """comm_overlap (SGLang two-batch overlap / DeepEP): a MoE layer takes compute + max(comm - compute,
    comm x sigma / (1 + sigma)) (collectives.overlap_exposed_s): more than max(compute, comm), less than the sum."""
    from dataclasses import replace
    ctx = sctx.context("DeepSeek-V3", "H200", "fp8", 1000, 1000, None, "decode", "central", True)
    free = replace(ctx, ceil=replace(ctx.ceil, overlap_compute_slowdown=0.0))
    serial = replace(ctx, comm_overlap=False)
    args = (1.0, 8.0, 8.0, 256.0, 0.0, 1500.0)
    _, overlapped, parts = inf._layer_times(ctx, *args)
    _, hidden, _ = inf._layer_times(free, *args)
    _, summed, _ = inf._layer_times(serial, *args)
    comm = float(parts["comm"])
    compute = float(summed) - comm
    sigma = ctx.ceil.overlap_compute_slowdown
    assert 0 < comm and float(hidden) == pytest.approx(max(compute, comm))
    assert float(hidden) < float(overlapped) < float(summed)
    assert float(overlapped) == pytest.approx(compute + max(comm - compute, comm * sigma / (1 + sigma)))


def test_precision_names_as_engines_write_them():
    """"FP8", "NVFP4", "MXFP4" are the book's fp8 / fp4 (any case); an unknown name is refused naming what is allowed."""
    a = inf.estimate("Llama-3.3-70B", "H100-SXM", 2, "FP8", 1024, 1024, kv_precision="E4M3")
    b = inf.estimate("Llama-3.3-70B", "H100-SXM", 2, "fp8", 1024, 1024, kv_precision="fp8")
    assert a.precision == "fp8" and a.output_tokens_per_s_per_gpu == b.output_tokens_per_s_per_gpu
    nv = inf.frontier("Qwen3-30B-A3B", "B200", 1, "NVFP4", 1024, 1024, points=4)
    fp4 = inf.frontier("Qwen3-30B-A3B", "B200", 1, "fp4", 1024, 1024, points=4)
    assert nv.output_tokens_per_s_per_gpu.max() == fp4.output_tokens_per_s_per_gpu.max()
    with pytest.raises(ValueError, match=r"precision='int4' is not allowed; allowed: bf16, fp8, fp4 \(any case\), or nvfp4"):
        inf.estimate("Llama-3.3-70B", "H100-SXM", 2, "int4", 1024, 1024)


def test_moe_activation_traffic_counts_expert_rows_as_the_dense_ffn_counts_its_own():
    """The experts' activation function reads the up GEMM's (m - 1) f outputs and writes f per routed row (m = 3
    gated matrices), f / split wide on a GPU holding a slice of each expert; the shared experts' the same per token
    of the rank, split over tp: the 3 d_ff per token dense_elementwise_s counts for a dense gated FFN."""
    ctx = sctx.context("DeepSeek-V3", "H200", "fp8", 1024, 1024, None, "aggregated", "central")
    T, s, bw = 1000.0, ctx.s, ctx.hbm_bytes_per_s_achieved
    whole = float(kern.moe_elementwise_s(ctx, T, T, 1.0, 1.0))
    half = float(kern.moe_elementwise_s(ctx, T, T, 2.0, 1.0))
    assert whole - half == pytest.approx(3 * s.expert_d_ff * s.top_k * T / 2 * kern.ACTIVATION_BYTES / bw)
    shared_half = float(kern.moe_elementwise_s(ctx, T, T, 1.0, 2.0))
    assert whole - shared_half == pytest.approx(3 * s.expert_d_ff * s.shared_experts * T / 2 * kern.ACTIVATION_BYTES / bw)
    # a dense FFN of the same width per token pays the same activation bytes (dense_elementwise_s' 3 d_ff / tp)
    dense = kern.dense_elementwise_s(ctx, T, 1.0) - kern.dense_elementwise_s(ctx, T, 2.0)
    assert float(dense) == pytest.approx(3 * s.d_ff * T / 2 * kern.ACTIVATION_BYTES / bw)


def test_expert_tensor_parallel_permutes_every_token_of_the_replica():
    """Under attention-DP + expert TP each GPU holds a slice of every expert, so its MoE kernels permute and
    gather-reduce the top-k rows of all dp ranks' tokens; under attention-DP + EP only its own share (dp / ep)."""
    ctx = sctx.context("Qwen3-235B-A22B", "B200", "fp4", 1024, 1024, None, "aggregated", "central")
    T, s = 1000.0, ctx.s
    own = float(kern.moe_elementwise_s(ctx, T, T))                       # EP over 4 ranks: whole experts
    replica = float(kern.moe_elementwise_s(ctx, T, 4 * T, 4.0))          # expert TP over 4: quarter-width rows
    assert float(kern.moe_elementwise_s(ctx, T)) == own
    extra = 3 * T * 2 * s.top_k * s.d_model * kern.ACTIVATION_BYTES / ctx.hbm_bytes_per_s_achieved
    assert replica - own == pytest.approx(extra)
    # the whole layer: expert TP over 4 attention-DP ranks pays the larger permutation; EP over them does not
    _, tp_moe, tp_parts = inf._layer_times(ctx, 1.0, 4.0, 1.0, T, 0.0, 1536.0)
    _, ep_moe, ep_parts = inf._layer_times(ctx, 1.0, 4.0, 4.0, T, 0.0, 1536.0)
    assert float(tp_parts["other"]) == pytest.approx(replica) and float(ep_parts["other"]) == pytest.approx(own)


def test_mla_decode_attention_rate_matches_flashmla_on_h800():
    """Absorbed MLA decode is compute-bound with all 128 heads on a GPU (attention-DP): DeepSeek's FlashMLA dense
    decoding kernel reaches 660 TFLOP/s on H800 SXM5 (github.com/deepseek-ai/FlashMLA README, 2025-04-22 update; the
    deep-dive notes the GPU throttles to ~1600 MHz). The serving model's decode attention there, at MLA's own head
    dimension ((2 x 512 + 64) / 2 = 544: little softmax per FLOP) and the forward-only kernel rate, is within 10%.
    (FlashMLA measures its compute roof with two query tokens per sequence; an FP8 cache keeps one token per sequence
    on the compute roof here too.)"""
    ctx = sctx.context("DeepSeek-V3", "H800", "fp8", 4096, 1024, "fp8", "aggregated", "central")
    decode_tokens, context = 128.0, 8192.0
    t = float(kern.decode_attention_s(ctx, 1, decode_tokens, context))
    flop = decode_tokens * kern.decode_attention_flops_per_token(ctx, context) / ctx.s.layers
    assert flop / t == pytest.approx(660e12, rel=0.10)
    kv_rate = ctx.acc.hbm_bytes_per_s * ctx.ceil.decode_attention_hbm_fraction
    kv_bound = decode_tokens * context * ctx.kv_bytes_per_token / ctx.s.layers / kv_rate
    assert t > 1.5 * kv_bound          # the compute roof binds


def test_held_out_set_20_stays_near_its_blind_error(table):
    """Set 20 of data/runs/HELD_OUT.md (14 serving runs collected blind: vLLM PR 7117's Llama 3 8B offline benchmark on
    one H100, GPUStack's gpt-oss-120b / gpt-oss-20b on A100 under vLLM v0.11 and GLM-4.6-FP8 on 8 H100 under vLLM v0.11
    and SGLang 0.5.3): 71% when first predicted. The misses: the August 2024 vLLM engine (+121% / +125%), GLM-4.6 on
    8 H100 (+114% to +169%; vLLM's run measured a 509 ms mean TPOT), gpt-oss on one A100 with 32,000-token prompts
    (+131%) and the random-dataset runs without --ignore-eos (+62% / +80%). PR 7117's rows with their engine stated
    (scheduler vllm-v0.5-offline, the in-process benchmark without the API server's host time): +23% / +21%; the set
    43% / 169%."""
    _check_held_out_set(table, "heldout20-", 14, 0.43, 1.70, 14, 0.43)


def test_held_out_set_21_stays_near_its_blind_error(table):
    """Set 21 of data/runs/HELD_OUT.md (14 MLPerf Inference runs collected blind: v5.0 HPE on 8 H100 and Supermicro's
    Mixtral on 8 B200 / H200, v5.1 and v6.0 Supermicro on 8 B200; Offline, Server and Interactive): 12.0% / 86% when
    first predicted. Offline and Server within 14% except Llama 3.1 405B Server (+25%); the Interactive runs, held to p99
    TPOT limits, +53% to +86% (the model read the limits against steady-state mean latencies). Read as the benchmark
    runs them (Poisson arrivals, p99 limits, the datasets' own prompt and output lengths: serving_arrivals): 9.2% /
    67%; 405B Server -21%, 405B Interactive -15%; Llama 2 70B Interactive +31% (H100) and +67% (B200), where p99 and
    mean differ less and the steady iteration is the miss. Session 14 corrected the layout cell of the three Mixtral
    rows (eight independent TP1 engines, recorded as dp 8, i.e. attention-DP ranks sharing their experts; now tp 1,
    dp 1): they moved from -3% / -6% / -10% to +14% to +26% (the model is fast on MLPerf's Mixtral at ~2,000 sequences
    per GPU, as on the other MLPerf Mixtral rows), so the set is 14.2% / 67%. Session 20 let NVIDIA's harness take KV
    blocks as tokens arrive (``kv_allocation`` on-demand, its configs' ``max_util``): a memory-bound Llama 2 70B batch
    grows with its OpenOrca outputs held at their current length, so the two B200 Offline rows rose from +6% / +6% to
    +7% / +8% (offline median 5.8% -> 7.5%, the bound 0.07 -> 0.08) and the set is 14.4% / 68%. Session 29 dealt the
    Poisson queries out to the engine instances as NVIDIA's harness does (by outstanding requests) and added TensorRT-
    LLM's C++ executor loop in series with each iteration (``trtllm-engine``): Llama 2 70B Interactive +49% -> +21%
    (B200) and +31% -> +12% (H100), 405B Server / Interactive -21% / -15% -> +1% / +7% (the loop counted per layer),
    Mixtral's H200 Server +26% -> 0% (Hopper's grouped FP8 GEMMs at their measured rate), the Offline rows 3-5 points
    lower (405B -6% -> -10%, H100 Llama 2 70B -15% -> -20%: offline median 6.3% -> 9.7%); the set is 8.5% / 20%."""
    _check_held_out_set(table, "heldout21-", 14, 0.09, 0.21, 5, 0.10)


def test_held_out_set_22_stays_near_its_blind_error(table):
    """Set 22 of data/runs/HELD_OUT.md (34 serving runs collected blind: MLPerf Inference v5.1 / v6.0 Red Hat (vLLM under
    llm-d), Nebius, Lenovo, Cisco and Azure; DeepSeek's own H800 production figures; dstack's early-2025 DeepSeek-R1 on 8
    H200 with SGLang 0.4.3, vLLM 0.7.4 and TensorRT-LLM, and Llama 3.1 405B FP8 on 8 H100 with vLLM 0.6.3): 47.7% / 355%
    when first predicted (32 predicted; the two TensorRT-LLM TP8 x EP4 rows refused, now served as stated). The MLPerf
    rows 17.3% blind, 18.6% now: eight gpt-oss-120b rows had eight independent TP1 engines recorded as dp 8 (attention
    DP with shared experts), corrected to dp 1 after the blind prediction (Nebius' B200 Interactive +355% -> +36%, Red
    Hat's vLLM rows +29% / -17% -> -23% / -34%). dstack's early-2025 engines run 1.7-3.7x slower than the
    model (the same DeepSeek-R1 on 8 H200 ran 2-3x faster in SGLang later that year: InferenceX rows, -17% to -29%);
    the 405B H200 / H100 Server and Interactive rows are held by p99 TTFT and the model is 41-54% low there. The 405B
    burst of 16 prompts of 32,784 tokens on 8 H100 (vLLM 0.6.3) was +2% only while a finite run admitted prompts whole:
    its 8,192-token budget then held no prompt beside a decoding sequence, so the 16 ran one at a time. With chunked
    prefill (serving_benchmarks, 2026-12-03) the model serves 13 at once and is +335%: the measured 867 s for 16
    requests is unexplained (KV preemption in vLLM V0 is a guess), so the set's median moved from 36% to 38% and its
    max-load median from 83% to 89%."""
    _check_held_out_set(table, "heldout22-", 34, 0.39, 3.4, 22, 0.9)


def test_held_out_set_23_stays_near_its_blind_error(table):
    """Set 23 of data/runs/HELD_OUT.md (30 serving runs collected blind: MLPerf Inference v6.0 HPE's Llama 2 70B and
    Mixtral on 8 B200, CoreWeave's DeepSeek-R1 and gpt-oss-120b on 64 GB200 / GB300, v5.1 Oracle's 405B on 8 B200, v4.1
    Dell's Llama 2 70B on 8 H200 / 4 H100; SGLang 0.3.0 against vLLM 0.6.0 on one A100 and 4 H100, DataCrunch's SGLang
    Llama 3.x 70B / 405B BF16 on 4-8 H200): 28.3% / 66% when first predicted, none off by 2x. The MLPerf rows 16.4%
    (Interactive and Server held to p99 limits the misses: Llama 2 70B Interactive on B200 +61%, Dell's H100 Server +50%,
    CoreWeave's DeepSeek-R1 Server +40%); the SGLang / vLLM BF16 rows of 2024-25 +23% to +66%, as the other early
    engines of sets 18-22. Eight ShareGPT rows given ShareGPT's own spread of output lengths after the blind prediction
    (output_dataset sharegpt-vllm): +13% to +45%; the set 22.0% / 66%. Session 36: Dell's 4-GPU XE9640 rows name their
    HGX-H100-4GPU board (TP2 pairs on 6 NVLinks), Offline +23% -> +5% and Server +48% -> +26%: 20.2% / 66%."""
    _check_held_out_set(table, "heldout23-", 30, 0.205, 0.67, 21, 0.21)


def test_held_out_set_24_stays_near_its_blind_error(table):
    """Set 24 of data/runs/HELD_OUT.md (37 serving runs collected blind after the chunked-prefill change: MLPerf Inference
    v4.0-v6.0 Google, Lambda, Azure, CoreWeave, ASUSTeK and Dell on H100 / H200 / B200 / B300 / GB200 / GB300; SGLang
    cookbook cells of Qwen3-235B-2507, DeepSeek-R1-0528, GLM-4.6 on 8 B200 and Llama 3.1 70B on 8 A100): 22.7% / 189%
    when first predicted, merged unchanged. The MLPerf rows 20.8% (CoreWeave's v5.1 DeepSeek-R1 Server on 8 GB300 +189%,
    as the other v5.1 DeepSeek-R1 Server rows; B300 dense FP4 Llama 2 70B +30%, as sets 6, 7 and 15); the cookbook's
    single-user decode on 8 B200 +43% to +52% for DeepSeek-R1 and GLM-4.6, Qwen3-235B within 12%. Session 20's on-demand
    KV blocks for NVIDIA's harness (``kv_allocation``) moved MLPerf v6.0's DeepSeek-R1 Offline rows from -12% / -17%
    (Dell B200, CoreWeave GB300) to +1% / -9% and the v5.1 CoreWeave Server row from +189% to +192% (max 1.9 -> 1.95;
    offline median 17.0% -> 13.9%)."""
    _check_held_out_set(table, "heldout24-", 37, 0.23, 1.95, 27, 0.17)


def test_held_out_set_25_stays_near_its_blind_error(table):
    """Set 25 of data/runs/HELD_OUT.md (29 serving runs collected blind after session 20's KV block policy: MLPerf
    Inference v5.1 Cisco's 8 H200 and Dell's 8 B200, v6.0 GigaComputing's 8 B300; GPUStack's Qwen3-14B on one H100 /
    A100 and GLM-4.6 on 8 H200; the first revision of TensorRT-LLM's DeepSeek-R1 blog; unused perf-overview cells):
    31.4% / 311% when first predicted at 99513f7, merged unchanged. The B300 rows over-predicted as sets 6, 7, 15 and 24
    (Llama 2 70B +30% to +94%), Dell's v5.1 DeepSeek-R1 Server +311% (v5.1's software, as the other v5.1 Server rows),
    GPUStack's finite bursts on one H100 +42% to +96% (as its earlier pages); Cisco's H200 within 5%. Session 21's dense
    NVFP4 rate of Blackwell Ultra (``dense_fp4_speedup``) took the B300 Llama 2 70B Offline / Server rows to within 5%
    and the set to 24.9% (max-load rows 30.8% -> 28.1%)."""
    _check_held_out_set(table, "heldout25-", 29, 0.25, 3.11, 20, 0.29)


def test_held_out_set_26_stays_near_its_blind_error(table):
    """Set 26 of data/runs/HELD_OUT.md (27 serving runs collected blind in session 22, predicted at 5f702a8 and merged
    unchanged): MLPerf Inference v6.0 Nebius's 8 B300 / 8 GB300 DeepSeek-R1 and gpt-oss-120b within 9% and its 72 GB300
    gpt-oss-120b +17% / +23%; v5.1 Dell XE9685L's 8 B200 Llama 2 70B +7% / +10%, Llama 3.1 405B Offline -5%, Server
    -21%, Interactive -15% (the p99 TTFT of 9,429-token prompts binds), DeepSeek-R1 Server +309% (v5.1's software, as
    every v5.1 DeepSeek-R1 Server row); DataCrunch's online SGLang runs on H200 +17% / +45%; silybench's vLLM Qwen3-8B
    on one H100 +3% to +18%; GPUStack's A100 pages -0.5% to +53%. 10.2% / 309% when first predicted."""
    _check_held_out_set(table, "heldout26-", 27, 0.11, 3.10, 19, 0.11)


def test_held_out_set_27_stays_near_its_blind_error(table):
    """Set 27 of data/runs/HELD_OUT.md (31 serving runs collected blind in session 23, predicted at 10ed5df and merged
    unchanged): MLPerf Inference v6.0 Cisco's 8 B300 DeepSeek-R1 Offline -16% / Server +2%, gpt-oss-120b +21% / +22%,
    Llama 3.1 405B Server -26%; v5.1 Cisco's multi-node 16 H200 / 32 H100 Llama 2 70B and 405B Offline within 5%,
    Llama 2 70B Server -2% / -12%, 405B Server -40% / -45% (the p99 TTFT of 9,429-token prompts binds, as sets 21-26);
    v5.0 GigaComputing's 8 H200 Mixtral +21% / +25% and Llama 2 70B Interactive +12%; TensorRT-LLM v1.0 perf-overview
    cells -44% (Llama 4 Maverick FP4 TP8 on 8 B200) to +59% (Qwen3-30B-A3B FP4 on one GB200). 12.1% / 59% when first
    predicted, none off by 2x."""
    _check_held_out_set(table, "heldout27-", 31, 0.125, 0.60, 22, 0.11)


def test_held_out_set_28_stays_near_its_blind_error(table):
    """Set 28 of data/runs/HELD_OUT.md (34 serving runs collected blind in session 24, predicted at 1e415bd's model and
    merged unchanged): MLPerf Inference v5.0-v6.0 partners (18.0% over 20: Llama 3.1 405B Offline -11% to +17%, 405B
    Server on 8 H100 / H200 -41% as every 405B Server row on Hopper, on Blackwell +7% / +14%; Google's v6.0 72 GB200
    DeepSeek-R1 +77% Offline / +253% Server, against CoreWeave's 64 GB200 within 3% / +55%; Llama 2 70B Interactive
    +66% / +71%); TensorRT-LLM perf-overview cells of 03e27c7 (-32% to +61%) and v0.9's static batches (-6% to +24%);
    NIM's single-user Llama 3.3 70B on 2 H100 (+18% / +22%); SGLang v0.4.1's DeepSeek-V3 on 8 H200 at 8 requests/s
    (+556%). 19.1% / 556% when first predicted. Session 29 (the harness's balanced dispatch, the C++ executor loop per
    layer, the H200 405B engines' GEMM + all-reduce fusion, Hopper's grouped FP8 rate): Llama 2 70B Interactive +50% /
    +71% -> +22% / +36%, 405B Server on H200 -44% -> -19%, but Llama 3.1 405B on 8 B200 Server / Interactive +4% / +3%
    -> +21% / +8% (its iteration at the measured load is short, Google's v6.0 operating point -20%: the random dispatch
    had hidden it); 18.5% / 556%."""
    _check_held_out_set(table, "heldout28-", 34, 0.19, 5.6, 22, 0.19)


def test_held_out_set_29_stays_near_its_blind_error(table):
    """Set 29 of data/runs/HELD_OUT.md (30 serving runs collected blind in session 25, predicted at cae28c1): MLPerf
    Inference v4.1-v5.1 Lenovo, GigaComputing, Fujitsu and ASUSTeK on 4-8 H100 / H200 / B200 (Llama 2 70B on H100 with
    2024's software +11% to +44%, on H200 -8% to +16%; Mixtral on H200 +19% / +23%; 405B on B200 Offline -3%, Server
    -21%, Interactive -15%) and TensorRT-LLM v0.11-v0.15 perf-overview cells (-18% to +49%; v0.13's TP8 Mixtral 8x7B on
    8 H200, -53% blind, is +34% with the C++ runtime's own host time per sequence, which the same row bounds at 14 us).
    15.6% / 53% when first predicted, none off by 2x. Session 36: Fujitsu's GX2560 M7 rows name their HGX-H100-4GPU
    board (TP2 pairs on 6 NVLinks), Offline +29% -> +10% and Server +39% -> +19%: 6.9% / 41%."""
    _check_held_out_set(table, "heldout29-", 30, 0.07, 0.42, 22, 0.085)


def test_held_out_set_30_stays_near_its_blind_error(table):
    """Set 30 of data/runs/HELD_OUT.md (32 serving runs collected blind in session 26, predicted at 0e682ab):
    TensorRT-LLM v0.21's perf-overview cells (Hopper FP8 -5% to +16%; Blackwell FP4 dense on TP1 / TP4 engines +1% to
    +32%) and MLPerf Inference v4.1 Supermicro (8 H100: Llama 2 70B +13% / +24%, Mixtral 8x7B +27% / +32%) and v5.1
    Broadcom-Supermicro, Dell-Broadcom, QCT and HPE rows (8 H200 / B200: Llama 2 70B -7% to -2%, Llama 3.1 405B
    Offline -4% to -11%, Server -20% / -40%). 9.8% / 40% when first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout30-", 32, 0.10, 0.40, 25, 0.10)


def test_held_out_set_31_stays_near_its_blind_error(table):
    """Set 31 of data/runs/HELD_OUT.md (35 serving runs collected blind in session 27, predicted at 203c2e0):
    TensorRT-LLM's 2023 v0.6.1 performance doc (static batches: multi-head models on H100 FP8 / A100 FP16 -10% to +6%,
    Llama 2 70B FP8 on H100 decoding 2,048 tokens +117% / +120%, where its grouped-query decode kernels of the time
    re-read the KV cache per query head) and v0.5 blog (+22% / +23%), MLPerf Inference v4.1 HPE, v5.0 ASUSTeK and v5.1
    Google rows (Google's v5.1 DeepSeek-R1 on B200 Offline +83%, Server +288%, as every v5.1 DeepSeek-R1 row). 13.8% /
    288% when first predicted, 3 off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout31-", 35, 0.14, 2.89, 24, 0.11)


def test_held_out_set_32_stays_near_its_blind_error(table):
    """Set 32 of data/runs/HELD_OUT.md (35 serving runs collected blind in session 27, predicted before any model
    change): MLPerf Inference v5.0 Dell and v5.1 Dell / Supermicro rows on 8 H100 / H200 / B200 (Llama 2 70B -7% to +8%
    except Interactive on B200 +55%; Mixtral 8x7B +23% to +31%), TensorRT-LLM v0.9, v0.14 and v0.20 perf-overview cells
    not taken before (-11% to +38%). 11.6% / 55% when first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout32-", 35, 0.12, 0.56, 25, 0.12)


def test_held_out_set_33_stays_near_its_blind_error(table):
    """Set 33 of data/runs/HELD_OUT.md (18 serving runs collected blind in session 27, predicted at 1c8c7ef):
    InferenceX's DeepSeek-R1-0528 baselines at 1-32 users on 4-8 H200 / B200 / B300 (SGLang 0.5.12, TensorRT-LLM 1.3):
    FP8 -30% to +14%, NVFP4 on B300 -29% to -32%. 15.2% / 32% when first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout33-", 18, 0.16, 0.33, 18, 0.16)


def test_held_out_set_34_stays_near_its_blind_error(table):
    """Set 34 of data/runs/HELD_OUT.md (29 serving runs collected blind in session 27, predicted at 2312521): MLPerf
    Inference v5.1 Supermicro, Lambda, GigaComputing and Nebius rows on 8 B200 (Llama 2 70B +4% to +8% except
    Interactive +49%, Llama 3.1 405B -21% to +10%) and InferenceX DeepSeek-R1 cells (NVFP4 on B300 -26% to -39%).
    8.4% / 49% when first predicted, none off by 2x; merged unchanged. Session 29 (the harness's dispatch, the C++
    executor loop per layer): Llama 2 70B Interactive +49% -> +20%, 405B Server -21% -> +1%, the 405B Offline rows
    -5% / -7% -> -8% / -10% (offline median 8.4% -> 9.2%); 7.3% / 39%."""
    _check_held_out_set(table, "heldout34-", 29, 0.08, 0.40, 19, 0.095)


def test_held_out_set_35_stays_near_its_blind_error(table):
    """Set 35 of data/runs/HELD_OUT.md (35 serving runs collected blind in session 28, predicted at f3ac9b0): NVIDIA's
    own MLPerf v5.1 cells (Llama 2 70B Interactive +50% / +57%, DeepSeek-R1 Server on 72 GB200 +221% with v5.1's
    software), MLPerf v4.1 Google and Dell rows on 4-8 H100 (+13% to +43%), gpt-fast's batch-1 decode on 1-8 A100
    (-10% to +31%) and TensorRT-LLM v0.5's H200 launch cells (+8% to +31%). 20.9% / 221% when first predicted, one off
    by 2x; merged unchanged. Session 36: Dell's XE8640 rows name their HGX-H100-4GPU board, whose TP2 Llama 2 70B pairs
    all-reduce on 6 NVLinks (Offline +22% -> +4%, Server +38% -> +19%; its TP1 Mixtral rows unmoved): 12.2% / 221%."""
    _check_held_out_set(table, "heldout35-", 35, 0.125, 2.21, 20, 0.13)


def test_held_out_set_36_stays_near_its_blind_error(table):
    """Set 36 of data/runs/HELD_OUT.md (16 serving runs collected blind in session 28, predicted at d3f3060):
    InferenceX's experimental gpt-oss-120b runs on 2-8 H100 with vLLM 0.15 (issue 828): 8k/1k -3% to -15%, 1k/8k -8%
    to -39%, and two cells the source calls pathological (+135%, +67%). 15.0% / 135% when first predicted, one off by
    2x; merged unchanged."""
    _check_held_out_set(table, "heldout36-", 16, 0.16, 1.36, 16, 0.16)


def test_held_out_set_41_stays_near_its_blind_error(table):
    """Set 41 of data/runs/HELD_OUT.md (26 serving runs collected blind in session 32, predicted at 2fdf04a): MLPerf
    Inference v6.1 Offline and Server cells of Nebius, ASUSTeK, GigaComputing and HPE on 8 B200 / B300 / GB300 and
    72 GB300. DeepSeek-R1 7.3% over 10 (-19% to +6%); gpt-oss-120b 21.6% over 16 (-26% to +21%), whose rows state no
    batch limits or KV dtype. 15.6% / 26.1% when first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout41-", 26, 0.16, 0.27, 13, 0.11)


def test_held_out_set_42_stays_near_its_blind_error(table):
    """Set 42 of data/runs/HELD_OUT.md (28 serving runs collected blind in session 32, predicted at a612de1): MLPerf
    Inference v6.1 Offline and Server cells of Cisco, CoreWeave, Dell, Oracle and Inventec on 8 B300, 4-72 GB300 and
    72 GB200. DeepSeek-R1 6.3% over 12 (-13% to +31%, the +31% a CoreWeave GB200 Server run at its stated layout);
    gpt-oss-120b 13.9% over 16 (-30% to +27%). 9.4% / 30.5% when first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout42-", 28, 0.095, 0.31, 14, 0.095)


def test_held_out_set_55_stays_near_its_blind_error(table):
    """Set 55 of data/runs/HELD_OUT.md (23 MLPerf Inference v5.0 closed cells of four Supermicro systems, collected blind in
    session 35, predicted at ec326a8): on 8 B200 Llama 2 70B +4% to +22% (Interactive the most), Llama 3.1 405B -3% to
    +19%, Mixtral +12%; on 8 H200 -14% to 0%. 5.0% / 21.7% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout55-", 23, 0.05, 0.22, 10, 0.04)


def test_held_out_set_57_stays_near_its_blind_error(table):
    """Set 57 of data/runs/HELD_OUT.md (18 MLPerf Inference cells collected blind in session 36, predicted at 43b9378):
    v4.0 llama2-70b of Dell, Supermicro, HPE, GigaComputing, Fujitsu and Oracle on H100 (TensorRT-LLM of March 2024),
    on 8 GPUs Offline +17% to +26% and Server +23% to +38%, on 4 GPUs +33% to +63%; GigaComputing's v4.1 Mixtral 8x7B
    on 8 H200 +2% / +3%. 25.7% / 62.7% when first predicted, none off by 2x; merged unchanged. Its 4-GPU rows then named
    their system, HGX-H100-4GPU (TP2 pairs on 6 NVLinks, no NVSwitch): +14% to +39% there, the set 24.3% / 39.3%."""
    _check_held_out_set(table, "heldout57-", 18, 0.245, 0.40, 9, 0.195)


def test_held_out_set_59_stays_near_its_blind_error(table):
    """Set 59 of data/runs/HELD_OUT.md (32 serving runs collected blind in session 36, predicted at 8c25af3): MLPerf
    Inference v5.1 llama3.1-8b of GigaComputing, Supermicro and Lenovo on 8 B200 +22% to +63% (Server and Interactive
    the most), of HPE and QCT on 8 H200 -1% to +7%; ASUSTeK's Mixtral Offline on 8 H200 -1%; GPUStack's GLM-4.5-Air on
    4 A100 (BF16) and 2-4 H100 with vLLM / SGLang +1% to +92%. 29.1% / 92.3% when first predicted, none off by 2x;
    merged unchanged."""
    _check_held_out_set(table, "heldout59-", 32, 0.295, 0.93, 22, 0.27)


def test_held_out_set_61_stays_near_its_blind_error(table):
    """Set 61 of data/runs/HELD_OUT.md (22 of NVIDIA's own MLPerf Inference cells collected blind in session 36, predicted
    at e64e8ac): llama2-70b on 2 H100 (v4.0) +18% / +25%, on 8 H100 Server (v5.0) -15%, on 8 H200 (also served through
    Triton) -7% to +5%, on the 1,000 W H200 CTS part -11% to +7% (the catalogue's H200 is the 700 W part), on one B200
    +4% to +19%; mixtral-8x7b on 8 H200 -4%, on 8 B200 +12% / +14%. 6.0% / 25.0% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout61-", 22, 0.065, 0.25, 9, 0.075)


def test_held_out_set_63_stays_near_its_blind_error(table):
    """Set 63 of data/runs/HELD_OUT.md (11 MLPerf Inference v5.1 closed cells collected blind in session 36, predicted at
    c9b7773): Dell XE9680L on 8 B200 (llama2-70b Offline +1% and Interactive +20%, llama3.1-405b -10% to +7%,
    deepseek-r1 Offline +91%: v5.1's DeepSeek-R1 software, as the table's other v5.1 B200 rows), Nebius on 4 GB200 -2% /
    +7%, Oracle's llama3.1-8b on 8 B200 +23% / +39%, Cisco C885's llama2-70b Interactive on 8 H200 -3%. 7.3% / 91.2% when
    first predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout63-", 11, 0.075, 0.92, 5, 0.1)


def test_held_out_set_65_stays_near_its_blind_error(table):
    """Set 65 of data/runs/HELD_OUT.md (18 serving runs collected blind in session 37, predicted at 2e6d6f7): dstack's
    Llama 3.1 405B FP8 on 8 H100 with vLLM 0.6.3, offline batches of 4-32 prompts +35% to +51% and of 64 / 128 prompts
    at 2048/2048 or 4 / 8 at 32784/2048 +214% to +356% (the measured rate barely grows past 16 prompts, where the
    model's KV cache holds them all), the API server's 1,000 ShareGPT prompts +54% to +111%; a vLLM issue's Llama 3.3
    70B BF16 on 4 A100 +65% / +74%. 59.6% / 356% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout65-", 18, 0.6, 3.57, 18, 0.6)


def test_held_out_set_66_stays_near_its_blind_error(table):
    """Set 66 of data/runs/HELD_OUT.md (22 serving runs collected blind in session 37, predicted at 2e6d6f7): TensorRT-LLM
    perf-overview cells at 03e27c7 not taken before, GPT-OSS 20B on one B200 / GB200 -43% to +31% (its 1,000/1,000
    cells short, the prompt-heavy ones over), on one H200 / H100 +14% to +65%, GPT-OSS 120B -27% to +22%, Llama 4
    Maverick -29% to +54%; SGLang PR 9359's gpt-oss-120b on 4 B200 +53% and PR 8241's DeepSeek-R1 FP4 on 4 B200 +145%.
    25.4% / 145% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout66-", 22, 0.255, 1.45, 22, 0.255)


def test_held_out_set_68_stays_near_its_blind_error(table):
    """Set 68 of data/runs/HELD_OUT.md (24 serving runs collected blind in session 37, predicted at 316d6bd): TensorRT-LLM
    v1.0 perf-overview cells at 00f3768 not taken before: the dense Llama 3.1 8B / 3.3 70B / 3.1 405B cells on H100, H200,
    B200 and GB200 -9% to +16%; Qwen3-235B-A22B at TP8 -25% to -37%, Qwen3-30B-A3B on one B200 / GB200 +32% / +49%, Llama
    4 Maverick at TP8 -61% to +57%, Scout +3% to +34%. 8.6% / 61.0% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout68-", 24, 0.087, 0.611, 24, 0.087)


def test_held_out_set_69_stays_near_its_blind_error(table):
    """Set 69 of data/runs/HELD_OUT.md (19 serving runs collected blind in session 38, predicted at 81bfe68, the commit that
    put the PCIe / NVL cards and GH200 in the catalogue): MLPerf Inference v4.1 / v5.0 closed Llama 2 70B and Mixtral
    8x7B cells. GH200-144GB (NVIDIA, HPE) -15% to +2%, H200-NVL -12% to -0%, H100-PCIe at TP2 over PCIe +8% / +17%,
    H100-NVL Mixtral +25% and Llama 2 70B at TP2 (its system file states no GPU interconnect; the catalogue's H100 NVL
    is a bridged pair) +72% / +85%. 8.4% / 85.5% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout69-", 19, 0.085, 0.855, 10, 0.102)


def test_held_out_set_71_stays_near_its_blind_error(table):
    """Set 71 of data/runs/HELD_OUT.md (2 serving runs collected blind in session 39, predicted at 3aaaed3):
    GLM-4.5-Air-FP8 on 2 B200 with vLLM (PR 23695, TP2, 360 requests at most 180 in flight) and on 4 B200 with SGLang
    (PR 9770, TP4, 516 requests at most 256 in flight), both measured by pull requests that add tuned Triton fused-MoE
    configurations: +128% / +94%, the model's kernels well above the Triton MoE path those engines ran on B200 in
    August 2025. Merged unchanged; the bounds keep them from drifting further."""
    _check_held_out_set(table, "heldout71-", 2, 1.11, 1.28, 2, 1.11)


def test_held_out_set_73_stays_near_its_blind_error(table):
    """Set 73 of data/runs/HELD_OUT.md (21 serving runs collected blind in session 40, predicted at 875c867): MLPerf
    Inference closed partner cells not taken before. 8 H200 (Oracle, Sustainable Metal Cloud, v5.0) Llama 2 70B -8% to
    -4% and Mixtral 8x7B -0% to +5%; GH200-96GB (QCT, v4.1, the part's first rows) +3% / +23% and GH200-144GB (HPE)
    -3% / +2%; the H100-NVL systems (HPE's 4, Azure's 2, Fujitsu's 8 in PCIe expansion boxes) +25% to +64%, every one
    slower than the model's 400 W NVL card. 7.8% / 64.2% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout73-", 21, 0.08, 0.645, 10, 0.075)


def test_held_out_set_74_stays_near_its_blind_error(table):
    """Set 74 of data/runs/HELD_OUT.md (8 serving runs collected blind in session 40, predicted at 30da6f9): MLPerf
    Inference v5.1 closed Llama 2 70B on H200-NVL systems not taken before (ASUSTeK's 8 GPUs with its config's TP1
    engines, Dell's 8 and QCT's 4 from the results pages). Offline 11% to 14% short, Server -10% to +3%, Interactive
    -5% / +8%: the model's 600 W NVL card runs the 700 W part's power throttle below a datasheet peak already at a lower
    clock. 8.9% / 14.4% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout74-", 8, 0.09, 0.145, 3, 0.125)


def test_held_out_set_76_stays_near_its_blind_error(table):
    """Set 76 of data/runs/HELD_OUT.md (18 serving runs collected blind in session 41, predicted at 6477fd3): MLPerf
    Inference v5.0 / v5.1 closed partner cells not taken before. Cisco's C885A M8 and Lenovo's SR780a, 8 H200: Llama 2
    70B, Llama 3.1 405B and Mixtral 8x7B -18% to +4%; ASUSTeK's ESC8000A-E13P, 8 H200-NVL: Llama 2 70B -4%; Cisco's
    C845A M8, 8 H200-NVL: Llama 3.1 8B Offline -1%, Server +30%; Cisco's C245 / X215 M8 with 2 H100-NVL: Llama 2 70B
    +49% to +70%, as every H100-NVL system before them (sets 69 and 73). 5.4% / 70.2% when first predicted; merged
    unchanged."""
    _check_held_out_set(table, "heldout76-", 18, 0.055, 0.705, 8, 0.11)


def test_held_out_set_78_stays_near_its_blind_error(table):
    """Set 78 of data/runs/HELD_OUT.md (2 serving runs collected blind in session 41, predicted at 77ff161): Google's
    AI-Hypercomputer gpu-recipes, Llama 3.1 405B FP8 on one A3 Ultra node (8 H200) at TP8 with TensorRT-LLM 0.16 and
    0.17's trtllm-bench, 30,000 requests of 128 / 128 tokens: 8% short on both. Merged unchanged."""
    _check_held_out_set(table, "heldout78-", 2, 0.085, 0.085, 2, 0.085)


def test_held_out_set_79_stays_near_its_blind_error(table):
    """Set 79 of data/runs/HELD_OUT.md (3 serving runs collected blind in session 41, predicted at e2203a6): MLPerf
    Inference v5.1 closed, Nebius's 8 H200 with its configs' eight TP1 FP8 engines, Llama 2 70B: Offline -8%, Server
    -7%, Interactive -17% (the other H200 systems' Interactive cells sit at -13% to -2%). Merged unchanged."""
    _check_held_out_set(table, "heldout79-", 3, 0.085, 0.17, 1, 0.085)


def test_held_out_set_83_stays_near_its_corrected_error(table):
    """Set 83 of data/runs/HELD_OUT.md (8 serving runs collected blind in session 42, predicted at 3444a4b): Etched's
    trtllm-bench 0.16 sweep of Llama 3.1 70B FP8 at TP8 on 8 H100 (-3% to +18%), SGLang PR 7631's DeepSeek-V3 on 8
    H20 at 8 users (+5%) and PR 12343's Qwen3-30B-A3B FP8 on 4 H200 at one user (-14%). 10.1% / 96.6% blind: the
    8192/1024 row was collected as ``trtllm-bench-engine`` (prompts whole), which admits an 8192-token prompt into an
    8192-token budget only when nothing decodes; its log says chunked context is enabled, so the group runs
    ``trtllm-engine`` with the stated limits (-3%)."""
    _check_held_out_set(table, "heldout83-", 8, 0.078, 0.181, 8, 0.078)


def test_held_out_set_85_stays_near_its_blind_error(table):
    """Set 85 of data/runs/HELD_OUT.md (7 serving runs collected blind in session 42, predicted at 2fe60ff) from
    issues and pull requests: TensorRT-LLM issue 4043's Llama 3.1 405B FP8 TP8 engine on 8 H200 (-6%) and on 8 B200
    (+234%: the issue reports the B200 slower than the H200), issue 6294's Llama 3.1 8B on one H100 PCIe (+25%), vLLM
    PR 44220's Qwen3-30B-A3B BF16 on 2 H200 (+46%), SGLang PRs' DeepSeek-R1 FP4 on 4 GB200 (+40%) and DeepSeek-V3 on 8
    H200 at 4 and 10 requests per second (+56%, +71%). 45.6% / 234% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout85-", 7, 0.456, 2.343, 7, 0.456)


def test_held_out_set_87_stays_near_its_blind_error(table):
    """Set 87 of data/runs/HELD_OUT.md (3 serving runs collected blind in session 42, predicted at ff4224b) from vLLM
    issues: Qwen3-32B BF16 on one H100 NVL held to 32 sequences, ShareGPT (+80%); ``vllm bench throughput`` of Qwen3-8B
    on one H100 at 1024 / 2048, BF16 (+11%) and the released FP8 checkpoint (+31%: the run no faster than BF16).
    30.8% / 80.2% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout87-", 3, 0.308, 0.803, 3, 0.308)


def test_held_out_set_89_stays_near_its_blind_error(table):
    """Set 89 of data/runs/HELD_OUT.md (5 serving runs collected blind in session 43, predicted at 121371b) from vLLM
    threads: issue 30326's GPT-OSS-120B TP8 on 8 H200 at 8 and 128 concurrent requests, 1024 / 1024, before PR 29708
    (-6%, +3%) and after it (+9%, +52%: the regression the issue reports), and PR 23369's GPT-OSS-20B TP2 on 2 Hopper
    GPUs, 1,000 ShareGPT prompts at once through the PR's own unmerged MoE path (3.0x). 8.8% / 199% when first
    predicted; merged unchanged."""
    _check_held_out_set(table, "heldout89-", 5, 0.089, 1.995, 5, 0.089)


def test_held_out_set_90_stays_near_its_blind_error(table):
    """Set 90 of data/runs/HELD_OUT.md (1 serving run collected blind in session 44, predicted at 73dc99d): SGLang issue
    1362's Llama 3.1 405B FP8 TP8 on 8 H100, SGLang ~0.3, ShareGPT 1,000 requests at 16 per second while its queue grew
    (+76%). Merged unchanged."""
    _check_held_out_set(table, "heldout90-", 1, 0.761, 0.761, 1, 0.761)


def test_held_out_set_91_stays_near_its_blind_error(table):
    """Set 91 of data/runs/HELD_OUT.md (2 serving runs collected blind in session 44, predicted at fdeac77): Llama 3 8B
    BF16 TP2 on 2 H100 with 2,000 ShareGPT prompts sent at once, vLLM 0.6.2 with multi-step scheduling (issue 9476,
    +69% blind; +59% with the ``vllm-v0.6`` scheduler its command states, set after the prediction) and SGLang of
    October 2024 (issue 1639, +56%)."""
    _check_held_out_set(table, "heldout91-", 2, 0.58, 0.60, 2, 0.58)


def test_held_out_set_93_stays_near_its_blind_error(table):
    """Set 93 of data/runs/HELD_OUT.md (21 serving runs collected blind in session 46, predicted at 5a39193) from SGLang
    cookbook pages at stated concurrency: MiniMax-M2.5 FP8 TP8 EP8 on 8 H100 within 6%, on 8 B200 +22% to +102% (an
    older SGLang release whose B200 runs are slower than the H100 ones on the same page); GLM-4.5V BF16 TP4 on 4 B200
    +8% to +57%; Qwen3-Coder-480B FP8 TP8 EP2 on 8 B200 +58% to +75%. 37.5% / 102% when first predicted; merged
    unchanged."""
    _check_held_out_set(table, "heldout93-", 21, 0.376, 1.018, 21, 0.376)


def test_held_out_set_94_stays_near_its_blind_error(table):
    """Set 94 of data/runs/HELD_OUT.md (1 serving run collected blind in session 46, predicted at 3edc515): vLLM's Llama
    3.1 launch post (July 2024, vLLM ~0.5.3, "preliminary"), Llama 3.1 405B FP8 TP8 on 8 H100, 1,000 random 1,024-token
    prompts sent at once: +97% at the stated layout. Merged unchanged."""
    _check_held_out_set(table, "heldout94-", 1, 0.968, 0.968, 1, 0.968)


def test_held_out_set_53_stays_near_its_blind_error(table):
    """Set 53 of data/runs/HELD_OUT.md (36 serving runs collected blind in session 35, predicted at a89e88c): TensorRT-LLM's
    performance tuning guide (Llama-3.3-70B TP4 on 4 H100, 1,000 requests of 2048/2048; 0.02x at max_num_tokens 2048
    where its rows ran prompts whole, +10% once they took the engine's chunked context, which the guide states),
    the vLLM team's R1-Benchmark spot checks of DeepSeek-R1 on 8 H200 (+16% to +247%) and Llama-3.1-8B FP8 on one H200
    (+2% to +91%), llm-ie-benchmarks' SGLang DeepSeek-R1 cells (+9% to +53%). 48.4% / 247% when first predicted."""
    _check_held_out_set(table, "heldout53-", 36, 0.39, 2.47, 36, 0.39)
    guide = table[table.group == "heldout53-trtllm-tuning-guide"]
    assert len(guide) == 8 and guide.error.abs().max() <= 0.34


def test_held_out_set_51_stays_near_its_blind_error(table):
    """Set 51 of data/runs/HELD_OUT.md (37 MLPerf Inference v4.1 / v5.0 closed cells on 8 H100 / H200 collected blind in
    session 35, predicted at a89e88c): v4.1 Llama 2 70B on H100 Offline +7% to +9% and Server +11% to +24%, Mixtral
    8x7B +1% to +7%, Lenovo's H200 -1% to +5%; v5.0 Llama 2 70B on H100 -20% Offline, on H200 -4% to -9%; v5.0 Llama
    3.1 405B Offline -5% / -6% and Server -13% to -47%. 6.4% / 47.2% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout51-", 37, 0.065, 0.48, 17, 0.065)


def test_held_out_set_48_stays_near_its_blind_error(table):
    """Set 48 of data/runs/HELD_OUT.md (10 MLPerf Inference v5.1 llama3.1-8b results collected blind in session 34,
    predicted at 23ed587): NVIDIA's and Dell's 8-B200 systems Offline +24% / +25%, Server +39% to +43%, Interactive
    +63%; Cisco's 8 H200 Offline +12%, Server +56%. The benchmark's mean input (~837 tokens) is an estimate from a
    sample of its per-sample counts. 39.0% / 62.6% when first predicted; merged unchanged."""
    _check_held_out_set(table, "heldout48-", 10, 0.40, 0.63, 4, 0.25)


def test_held_out_set_47_stays_near_its_blind_error(table):
    """Set 47 of data/runs/HELD_OUT.md (28 static-batch throughput cells of TensorRT-LLM's 2023-24 performance docs,
    collected blind in session 34, predicted at 23ed587): v0.5.0's Llama 2 7B on one H100 / A100 (-1% to +14%) and
    Llama 2 70B TP4 on H100 (+23% to +138%: the release before the XQA grouped-query decode kernels), v0.6.1 / v0.9.0
    Llama 2 cells (-5% to +19%), v0.9.0 Mixtral 8x7B TP2 on A100 (-12% / -25%). 13.0% / 138% when first predicted;
    two refused at the KV-cache boundary; merged unchanged."""
    s = table[table.group.str.startswith("heldout47-")]
    assert len(s) == 28 and set(s[s.refused != ""].case) == set(REFUSED_AT_KV_BOUNDARY)
    ok = s[s.refused == ""]
    assert ok.error.abs().median() <= 0.13 and ok.error.abs().max() <= 1.38


def test_held_out_set_45_stays_near_its_blind_error(table):
    """Set 45 of data/runs/HELD_OUT.md (16 serving runs collected blind in session 33, predicted at 0fbbf7b): MLPerf
    Inference closed cells of QCT's D75H-10U (v6.1 DeepSeek-R1 and gpt-oss-120b, v6.0 Llama 3.1 405B), Supermicro's
    AS-8126GS and SYS-822GS (v6.1) on 8 B300 and Lenovo's SR680a V3 (v5.1 Llama 2 70B) on 8 B200. All short but one
    (-22% to +3%): gpt-oss-120b on Supermicro's systems at one GPU per replica -21% / -22%. 7.6% / 22.1% when first
    predicted, none off by 2x; merged unchanged."""
    _check_held_out_set(table, "heldout45-", 16, 0.08, 0.23, 8, 0.09)


def test_absurd_concurrency_is_refused_with_its_name():
    """A concurrency beyond ``MAX_CONCURRENCY`` (2^40 sequences) is refused by name rather than overflowing the token
    counts (hypothesis found 6e307 overflowing float64 in the serving step)."""
    for call in (lambda: inf.estimate("Llama-3.1-8B", "H100-SXM", 8, "fp8", 1000, 1000, concurrency=6e307),
                 lambda: inf.frontier("Llama-3.1-8B", "H100-SXM", 8, "fp8", 1000, 1000,
                                            concurrency=[1.0, 2.0**41])):
        with pytest.raises(ValueError, match="concurrency"):
            call()
    assert inf.estimate("Llama-3.1-8B", "H100-SXM", 8, "fp8", 1000, 1000, concurrency=64).concurrency == 64
