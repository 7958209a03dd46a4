"""Pipeline parallelism in serving (model.serving_pipeline, the ``pp`` key of the serving layouts)."""

import itertools

import numpy as np
import pytest

from intelligence_per_dollar.model import architecture, collectives, serving_layouts as layouts
from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_pipeline as pipe
from intelligence_per_dollar.sources import models

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
LLAMA405 = dict(layers=126, d_model=16384, heads=128, kv_heads=8, d_ff=53248, vocab=128256, head_dim=128)
QWEN30 = dict(layers=48, d_model=2048, heads=32, kv_heads=4, d_ff=6144, vocab=151936, experts=128, top_k=8,
              expert_d_ff=768, head_dim=128)
TINY = dict(layers=4, d_model=1024, heads=8, kv_heads=8, d_ff=4096, vocab=32000)
WIDE = dict(layers=4, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)


# --- pp = 1 is the single-stage model, exactly ---------------------------------------------------

#: (output tokens/s per GPU, tokens/s per user, TTFT s, memory per GPU B, max concurrency) of
#: ``inference.estimate`` computed by the code before pipeline parallelism existed (commit c77e963). The two
#: B200 rows were re-pinned when Blackwell took its measured ceilings (GEMM weight streaming, decode attention,
#: FP4 ratio: data/efficiency/ceilings.csv), and the three MoE rows when grouped GEMMs took the
#: ``grouped_gemm_overlap_norm`` p-norm (DeepGEMM's H800 table), and all five when capacity became the driver's device
#: memory x ``serving_memory_fraction`` (data/hardware/accelerators.csv device_memory_bytes), and the two B200 MoE rows
#: when NVFP4 experts took the FP8 tensor rate (``grouped_fp4_speedup``), and again when Blackwell's fused MoE kernels
#: took their measured weight-stream rate (``grouped_gemm_hbm_efficiency`` 1.1, FlashInfer PR 5301) and NVFP4 MoE
#: checkpoints kept attention at the release precision (``serving_context.attention_weight_precision``), and when
#: the MoE permute / gather-reduce counted the rows each GPU's expert shards see (``moe_elementwise_s``), and all five
#: when flash attention's rate took the head dimension, the softmax (SFU) share and the forward-only kernel rate into
#: account (``efficiency.attention_head_dim_factor``, ``attention_forward_speedup``), and the 16-GPU Llama row when
#: serving engines' small all-reduces went one-shot (``collectives.one_shot_all_reduce_s``), and the two B200 rows
#: when B200 took its own measured power throttle (0.853, FlashInfer PR 2899, for the H200's 0.856), and the three MoE
#: rows when the MoE layer's non-GEMM kernels were counted from the engines' code (``moe_kernels_per_layer`` 9, not
#: 12), and all five when the dense GEMMs computed whole row tiles (``dense_tile_rows`` 128, half a tile of padding
#: per iteration on average: the 8-H200 Llama row -11%, the others -0.02% to -1.1%), and the three MoE rows when the
#: experts' activation function counted its traffic (``moe_elementwise_s``, -0.3% to -0.8%), and the B200 DeepSeek-V3
#: row when dense NVFP4 GEMMs (its dense layers and shared experts) took Blackwell's FP4 kernel terms
#: (``efficiency.dense_gemm_terms``, -2.6%); until then they agreed with c77e963 bit for bit.
BEFORE = [
    ((LLAMA70, "H200", 8, "fp8", 1000, 1000, None, {}),
     (2781.669933021625, 14.717830333447752, 0.16923877382644317, 135597176832.0, 1512.0)),
    ((LLAMA70, "H100-SXM", 16, "fp8", 1000, 1000, 64, {}),
     (414.96409764355263, 103.74102441088816, 0.04032571890791465, 10567544448.0, 3250.0)),
    ((QWEN30, "B200", 8, "fp4", 8192, 1024, None, {"mode": "decode"}),
     (11449.310760399441, 32.25157960675899, 0.09311676145302433, 172838632576.0, 2840.0)),
    (("DeepSeek-V3", "H200", 16, "fp8", 1000, 1000, None, {}),
     (3157.074487993114, 5.95674431696814, 0.2273284247815054, 135663183872.0, 8480.0)),
    (("DeepSeek-V3", "B200", 8, "fp4", 1000, 1000, 256, {"scheduler": "trtllm-bench", "requests": 3000}),
     # throughput re-pinned when trtllm-bench's decode-only iterations began to replay padded CUDA graphs
     (1328.5697745219222, 42.799768395851906, 0.04590336347684432, 59363017696.0, 6620.0)),
]


@pytest.mark.parametrize("case,before", BEFORE)
def test_pp1_reproduces_the_numbers_from_before_pipeline_parallelism(case, before):
    m, acc, g, p, i, o, c, kw = case
    e = inf.estimate(m, acc, g, p, i, o, c, {"pp": 1}, **kw)
    got = (e.output_tokens_per_s_per_gpu, e.tokens_per_s_per_user, e.ttft_s, e.memory_per_gpu_bytes,
           e.max_concurrency)
    assert got == before
    assert e.parallelism["pp"] == 1


@pytest.mark.parametrize("model,acc,gpus,mode", list(itertools.product(
    (LLAMA70, QWEN30, "DeepSeek-V3", TINY), ("H100-SXM", "B200"), (8, 16), inf.MODES)))
def test_pp1_rows_follow_the_single_stage_closed_forms(model, acc, gpus, mode):
    """For every pp = 1 layout and several loads: per-user speed 1 / step, throughput = tokens per
    iteration x dp / (step x tp x dp), and memory = weights + KV + workspace of the whole model."""
    ctx = sctx.context(model, acc, "fp8", 1000, 1000, None, mode, "central")
    c = inf.candidates(ctx, gpus, {"pp": 1})
    assert len(c["tp"]) and np.all(c["pp"] == 1)
    for per_rank in (1.0, 7.0, 64.0):
        conc = c["replicas"] * c["dp"] * per_rank
        r = inf.evaluate(ctx, {**c, "concurrency": conc})
        speed = ctx.isl / r["step_s"] if mode == "prefill" else 1.0 / r["step_s"]
        np.testing.assert_array_equal(r["tokens_per_s_per_user"], speed)
        # one token per sequence (prefill: per prompt) per iteration
        np.testing.assert_array_equal(r["output_tokens_per_s_per_gpu"],
                                      per_rank * c["dp"] / (r["step_s"] * (c["tp"] * c["dp"])))


def test_single_stage_functions_are_the_whole_model():
    s = models.spec("DeepSeek-V3")
    td, tm, th = np.array([1e-4, 2e-4]), np.array([3e-4, 5e-4]), np.array([7e-5, 1e-5])
    L_moe = architecture.moe_layers(s)
    whole = (s.layers - L_moe) * td + L_moe * tm + th
    np.testing.assert_array_equal(pipe.slowest_stage_s(s, 1.0, td, tm, th), whole)
    np.testing.assert_array_equal(pipe.through_stages_s(s, 1.0, td, tm, th), whole)
    assert pipe.stage_fraction(s.layers, 1.0) == 1.0
    assert pipe.end_embedding_params(s, 1.0) == architecture.embedding_params(s)
    ctx = sctx.context("DeepSeek-V3", "H200", "fp8", 1000, 1000, None, "aggregated", "central")
    assert np.all(pipe.stage_send_s(ctx, np.array([1.0, 1e4]), 8.0, 1.0, 1.0) == 0.0)


# --- stages of whole layers --------------------------------------------------------------------

@pytest.mark.parametrize("layers,pp,expected", [
    (5, 3, [(0, 2), (2, 4), (4, 5)]),            # vLLM's get_pp_indices: the remainder before the last stage
    (126, 4, [(0, 31), (31, 63), (63, 95), (95, 126)]),
    (61, 2, [(0, 31), (31, 61)]),
    (8, 8, [(i, i + 1) for i in range(8)]),
    (7, 1, [(0, 7)]),
])
def test_stage_layers_match_vllm_split(layers, pp, expected):
    got = []
    for i in range(pp):
        start, n = pipe.stage_layers(layers, pp, i)
        got.append((int(start), int(start + n)))
    assert got == expected
    assert pipe.stage_layers(layers, pp, pp)[1] == 0                # no stage beyond pp
    assert pipe.stage_fraction(layers, pp) == max(b - a for a, b in expected) / layers


def test_hand_computed_stage_times_with_leading_dense_layers():
    """7 layers (3 dense, then 4 MoE) on 3 stages: vLLM split [2, 3, 2] (layers 0-1, 2-4, 5-6).
    With t_dense = 1, t_moe = 2, t_head = 0.5: stage 0 = 2 x 1 = 2; stage 1 = 1 + 2 x 2 = 5;
    stage 2 = 2 x 2 + 0.5 = 4.5. Slowest 5, one pass through all 11.5."""
    s = models.spec(dict(layers=7, d_model=256, heads=4, kv_heads=4, d_ff=1024, vocab=1000, experts=8, top_k=2,
                         expert_d_ff=256, dense_layers=3))
    assert pipe.slowest_stage_s(s, 3.0, 1.0, 2.0, 0.5) == 5.0
    assert pipe.through_stages_s(s, 3.0, 1.0, 2.0, 0.5) == 11.5
    # the head on the last stage can make it the slowest: t_head = 1.5 -> stage 2 = 5.5
    assert pipe.slowest_stage_s(s, 3.0, 1.0, 2.0, 1.5) == 5.5


def test_tiny_two_stage_iteration_by_hand():
    """A 4-layer dense model (Llama-70B widths) on 2 H200 as tp=1, pp=2 (one NVLink domain), decode of b sequences per
    micro-batch: a stage is 2 layers (+ the head on the last), i.e. the iteration of the same model
    cut to 2 layers on one GPU, plus the send of b x d_model BF16 values over NVLink
    (latency + bytes / effective bandwidth); per-user speed 1 / (2 t_stage); tokens/s per GPU
    b / (2 t_stage); each GPU holds half the layers' weights and KV cache for 2b sequences plus one
    V x d embedding matrix (BF16)."""
    b = 16.0
    two = sctx.context(WIDE, "H200", "fp8", 4000, 1000, None, "decode", "central")
    half = sctx.context({**WIDE, "layers": 2}, "H200", "fp8", 4000, 1000, None, "decode", "central")
    one = dict(tp=1.0, dp=1.0, ep=1.0, replicas=1.0)
    r2 = inf.evaluate(two, {**one, "pp": 2.0, "concurrency": 2 * b})
    r1 = inf.evaluate(half, {**one, "pp": 1.0, "concurrency": b})
    link = two.scaleup
    send = link.latency_s + b * WIDE["d_model"] * 2.0 / link.effective_bytes_per_s
    assert float(r2["gpu_step_s"]) == pytest.approx(float(r1["gpu_step_s"]) + send, rel=1e-12)
    t = float(r2["step_s"])
    assert float(r2["tokens_per_s_per_user"]) == pytest.approx(1.0 / (2 * t), rel=1e-12)
    assert float(r2["output_tokens_per_s_per_gpu"]) == pytest.approx(b / (2 * t), rel=1e-12)
    # memory: half the layers' weights + one embedding matrix; KV of 2b sequences over half the layers
    full = inf.evaluate(two, {**one, "pp": 1.0, "concurrency": 2 * b})
    emb = WIDE["vocab"] * WIDE["d_model"] * 2.0
    layer_w = float(full["weights_bytes"]) - 2 * emb                     # untied: embedding + LM head
    assert float(r2["weights_bytes"]) == pytest.approx(layer_w / 2 + emb, rel=1e-12)
    assert float(r2["kv_cache_bytes"]) == pytest.approx(float(full["kv_cache_bytes"]) / 2, rel=1e-12)
    # TTFT: the prompt (next to the b decoding sequences) passes through both stages: the whole model's
    # iteration at the same micro-batch + one send of b + ISL tokens
    whole = inf.evaluate(two, {**one, "pp": 1.0, "concurrency": b})
    send_prompt = link.latency_s + (b + 4000) * WIDE["d_model"] * 2.0 / link.effective_bytes_per_s
    assert float(r2["ttft_s"]) == pytest.approx(float(whole["ttft_s"]) + send_prompt, rel=1e-12)


def test_send_crosses_the_nic_only_between_domains():
    ctx = sctx.context(LLAMA405, "H100-SXM", "bf16", 1000, 1000, None, "decode", "central")
    tokens = np.array([64.0])
    inside = pipe.stage_send_s(ctx, tokens, 4.0, 1.0, 2.0)           # 8 GPUs: one domain
    across = pipe.stage_send_s(ctx, tokens, 8.0, 1.0, 2.0)           # 16 GPUs: two domains
    vec = 64.0 * LLAMA405["d_model"] * 2.0
    expect_in = collectives.p2p_s(vec / 4, ctx.scaleup) + collectives.all_gather_s(vec, 4.0, ctx.scaleup)
    expect_out = collectives.p2p_s(vec / 8, ctx.scaleout) + collectives.all_gather_s(vec, 8.0, ctx.scaleup)
    np.testing.assert_allclose(inside, expect_in, rtol=1e-12)
    np.testing.assert_allclose(across, expect_out, rtol=1e-12)
    assert across[0] > inside[0]


# --- invariants --------------------------------------------------------------------------------

@pytest.mark.parametrize("model,mode", list(itertools.product((LLAMA70, QWEN30, "DeepSeek-V3"), inf.MODES)))
def test_more_stages_never_raise_per_user_speed_at_the_same_micro_batch(model, mode):
    ctx = sctx.context(model, "H100-SXM", "fp8", 2000, 500, None, mode, "central")
    for b in (1.0, 8.0, 128.0):
        speeds = []
        for pp in (1.0, 2.0, 4.0):
            c = dict(tp=8.0, dp=1.0, ep=1.0, pp=pp, replicas=4.0 / pp)
            r = inf.evaluate(ctx, {**c, "concurrency": b * pp * c["replicas"]})
            assert float(r["sequences_per_rank"]) == b
            speeds.append(float(r["tokens_per_s_per_user"]))
        assert speeds[0] >= speeds[1] >= speeds[2], (b, speeds)


def test_throughput_is_concurrency_times_speed_over_gpus_with_pipelines():
    r = inf.estimate(LLAMA405, "H100-SXM", 32, "bf16", 1000, 1000, 96, {"tp": 8, "pp": 2})
    assert r.parallelism == {"tp": 8, "dp": 1, "ep": 1, "pp": 2, "replicas": 2}
    assert r.output_tokens_per_s_per_gpu == pytest.approx(96 * r.tokens_per_s_per_user / 32, rel=1e-12)


# --- the layout search -------------------------------------------------------------------------

def test_405b_bf16_on_16_h100_is_served_with_a_pipeline():
    """810 GB of BF16 weights do not fit in one 8-GPU H100 domain (74 GB usable each); two nodes as
    TP8 x PP2 do. On one node the model still refuses, naming the weights."""
    with pytest.raises(ValueError, match="the weights do not fit"):
        inf.frontier(LLAMA405, "H100-SXM", 8, "bf16", 1000, 1000)
    f = inf.frontier(LLAMA405, "H100-SXM", 16, "bf16", 1000, 1000)
    assert len(f) > 1 and f["fits"].all()
    assert (f["pp"] >= 2).all() and (f["tp"] * f["dp"] * f["pp"] * f["replicas"] == 16).all()
    assert ((f["tp"] == 8) & (f["pp"] == 2)).any()
    e = inf.estimate(LLAMA405, "H100-SXM", 16, "bf16", 1000, 1000)
    assert e.parallelism["pp"] >= 2 and e.memory_per_gpu_bytes <= 80e9
    assert e.memory_breakdown_bytes["weights"] < 810e9 / 16 * 1.1


def test_candidates_pipeline_only_across_whole_domains_unless_fixed():
    ctx = sctx.context(LLAMA70, "H100-SXM", "fp8", 1000, 1000, None, "aggregated", "central")
    c = inf.candidates(ctx, 32)
    multi = c["pp"] > 1
    assert multi.any() and np.all((c["tp"] * c["dp"])[multi] % 8 == 0)
    assert np.all(c["tp"] * c["dp"] * c["pp"] * c["replicas"] == 32)
    fixed = inf.candidates(ctx, 8, {"pp": 2})
    assert len(fixed["tp"]) and np.all(fixed["pp"] == 2) and (fixed["tp"] * fixed["dp"] == 4).any()
    assert np.all(fixed["tp"] * fixed["dp"] * fixed["pp"] * fixed["replicas"] == 8)


def test_explicit_pipeline_layout_is_honoured_on_the_frontier():
    f = inf.frontier(LLAMA70, "H200", 8, "fp8", 1000, 1000, parallelism={"tp": 4, "pp": 2})
    assert len(f) and (f["tp"] == 4).all() and (f["pp"] == 2).all()
    assert list(f.columns) == list(inf.FRONTIER_COLUMNS)
    keep = layouts.pareto_mask(f["tokens_per_s_per_user"], f["output_tokens_per_s_per_gpu"])
    assert keep.all()


@pytest.mark.parametrize("par,needle", [
    ({"pp": 3}, "parallelism['pp']=3 must divide gpus / (tp x dp) = 16 / 1 = 16"),
    ({"tp": 8, "dp": 2, "pp": 2}, "parallelism['pp']=2 must divide gpus / (tp x dp) = 16 / 16 = 1"),
    ({"pp": 0}, "parallelism['pp']"),
])
def test_bad_pipeline_sizes_raise(par, needle):
    with pytest.raises(ValueError) as ex:
        inf.estimate(LLAMA70, "H100-SXM", 16, "fp8", 1000, 1000, 64, par)
    assert needle in str(ex.value)


def test_more_stages_than_layers_raise():
    with pytest.raises(ValueError, match=r"parallelism\['pp'\]=8 exceeds the model's layers=4"):
        inf.estimate(TINY, "H100-SXM", 8, "fp8", 100, 100, 8, {"pp": 8})
