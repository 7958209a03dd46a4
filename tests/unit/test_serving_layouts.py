"""Serving layouts and the serving terms added for issue 12: the Pareto envelope over layouts,
KV-cache precision defaults, paged / windowed KV, checkpoint expert precision, prefill lumps."""

import numpy as np
import pytest

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_context as sctx
from intelligence_per_dollar.model import serving_kernels as kern
from intelligence_per_dollar.model import serving_layouts as lay
from intelligence_per_dollar.model import serving_schedulers as sched
from intelligence_per_dollar.sources import hardware, models

DSV3 = dict(layers=61, d_model=7168, heads=128, kv_heads=128, d_ff=18432, vocab=129280, experts=256, top_k=8,
            expert_d_ff=2048, shared_experts=1, dense_layers=3, head_dim=128, q_lora_rank=1536, kv_lora_rank=512,
            qk_rope_head_dim=64)
LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)
GPTOSS20 = dict(layers=24, d_model=2880, heads=64, kv_heads=8, d_ff=2880, vocab=201088, experts=32, top_k=4,
                expert_d_ff=2880, head_dim=64, local_attention_window=128, local_attention_layers=12,
                expert_weight_precision="fp4")


def test_pareto_mask_by_hand():
    speed = [10, 8, 8, 5, 4, 9]
    tput = [1, 3, 2, 6, 5, 1]
    # (8,2) is beaten by (8,3); (4,5) by (5,6); (9,1) by (10,1)
    assert list(lay.pareto_mask(speed, tput)) == [True, True, False, True, False, False]
    with pytest.raises(ValueError, match="same shape"):
        lay.pareto_mask([1, 2], [1])


def _dominated(df):
    u, t = df.tokens_per_s_per_user.to_numpy(), df.output_tokens_per_s_per_gpu.to_numpy()
    return any(((u >= u[i]) & (t >= t[i]) & ((u > u[i]) | (t > t[i]))).any() for i in range(len(df)))


@pytest.mark.parametrize("acc,prec", [("H200", "fp8"), ("B200", "fp4")])
def test_frontier_is_an_envelope_with_layouts(acc, prec):
    df = inf.frontier(DSV3, acc, 8, prec, 1024, 1024, points=16)
    assert not _dominated(df)
    assert df.tokens_per_s_per_user.is_monotonic_decreasing
    assert df.output_tokens_per_s_per_gpu.is_monotonic_increasing
    for k in ("tp", "dp", "ep", "replicas"):
        assert (df[k] >= 1).all()
    # MLA: tensor parallel when interactive, attention data parallel at load (its latent KV cache is replicated
    # across TP ranks), with no layout passed; the experts of the max-load point are split by EP or by expert
    # TP, which the model holds within 10% of each other at max load (DEP8, what TensorRT-LLM deploys)
    assert df.tp.iloc[0] > 1
    assert df.tp.iloc[-1] == 1 and df.dp.iloc[-1] >= 4
    dep8 = inf.estimate(DSV3, acc, 8, prec, 1024, 1024, parallelism={"tp": 1, "dp": 8, "ep": 8})
    assert dep8.output_tokens_per_s_per_gpu >= 0.9 * df.output_tokens_per_s_per_gpu.max()


def test_frontier_honours_an_explicit_layout():
    df = inf.frontier(DSV3, "H200", 8, "fp8", 1024, 1024, parallelism={"tp": 8, "dp": 1, "ep": 1}, points=8)
    assert set(df.tp) == {8} and set(df.ep) == {1}


def test_hybrid_expert_parallelism_is_honoured_between_the_pure_layouts():
    """TensorRT-LLM's TP8 with moe_expert_parallel_size 4 (each expert split over 2 GPUs), a layout that ran, is
    served as stated: the expert GEMMs see E/4 experts of half width; under attention TP (dp 1) the tokens are on
    every GPU already, so nothing is dispatched (the TP all-reduce combines the shards); with attention DP each routed
    row goes to every GPU holding a slice of its expert, so a narrower EP moves more. An ep fixed without tp and dp
    keeps its pure meaning, and an ep that divides neither the stage nor the experts is refused by name."""
    run = {ep: inf.estimate(DSV3, "H200", 8, "fp8", 3200, 800, 128, {"tp": 8, "dp": 1, "ep": ep}) for ep in (1, 4, 8)}
    assert dict(run[4].parallelism)["ep"] == 4
    ctx = _ctx(DSV3, isl=3200, osl=800)
    one = np.array(1.0)
    t = {ep: float(kern.moe_experts_s(ctx, np.array(128.0), np.array(8.0), one, np.array(float(ep))))
         for ep in (1, 4, 8)}
    assert min(t[1], t[8]) <= t[4] <= max(t[1], t[8])
    assert float(kern.moe_dispatch_s(ctx, np.array(128.0), np.array(8.0), one, np.array(4.0))) == 0.0
    assert float(kern.moe_dispatch_s(ctx, np.array(128.0), np.array(8.0), one, np.array(8.0))) > 0.0
    # attention DP8 x TP2 on 16 GPUs: EP2 sends each row to 8 GPUs, EP16 to one
    disp = {ep: float(kern.moe_dispatch_s(ctx, np.array(64.0), np.array(2.0), np.array(8.0), np.array(float(ep))))
            for ep in (2, 4, 8, 16)}
    assert disp[2] > disp[4] > disp[8] > disp[16] > 0.0
    for bad, msg in (({"tp": 8, "dp": 1, "ep": 3}, "must divide tp x dp = 8"),
                     ({"tp": 4, "dp": 1, "ep": 8}, "must divide tp x dp = 4")):
        with pytest.raises(ValueError, match=msg):
            inf.estimate(DSV3, "H200", 8, "fp8", 3200, 800, 128, bad)
    assert set(inf.frontier(DSV3, "H200", 8, "fp8", 3200, 800, parallelism={"tp": 8, "dp": 1, "ep": 4},
                            points=4).ep) == {4}
    pure = dict(inf.estimate(DSV3, "H200", 16, "fp8", 1000, 1000, 512, {"ep": 8}).parallelism)
    assert pure["tp"] * pure["dp"] == 8 and pure["replicas"] == 2
    # a hybrid size must split the experts evenly; the whole stage need not (SGLang's EP72 / EP48 with redundant experts)
    six = dict(LLAMA70, experts=6, top_k=2, expert_d_ff=14336)
    with pytest.raises(ValueError, match="does not divide the model's experts=6"):
        inf.estimate(six, "H200", 8, "fp8", 1000, 1000, 64, {"tp": 8, "dp": 1, "ep": 4})
    assert dict(inf.estimate(DSV3, "H200", 72, "fp8", 2000, 100, 512, {"tp": 1, "dp": 72, "ep": 72}).parallelism)["ep"] == 72

def test_default_kv_precision_follows_engines():
    mla, gqa = models.spec(DSV3), models.spec(LLAMA70)
    assert sctx.default_kv_precision(mla, hardware.get("H200"), "fp8") == "bf16"    # FlashMLA: 16-bit latent
    assert sctx.default_kv_precision(mla, hardware.get("B200"), "fp4") == "fp8"
    assert sctx.default_kv_precision(gqa, hardware.get("H200"), "fp8") == "fp8"     # ModelOpt FP8 KV
    assert sctx.default_kv_precision(gqa, hardware.get("H200"), "bf16") == "bf16"


def _ctx(model, acc="H200", prec="fp8", isl=1000, osl=1000):
    return sctx.context(model, acc, prec, isl, osl, None, "aggregated", "central")


def test_busiest_rank_pieces_reduce_to_poisson_and_keep_the_mean():
    lam = np.array([0.01, 0.44, 3.0])
    probs, scale = sched.busiest_rank_pieces(lam, 1.0, np.inf, 40)
    assert np.allclose(probs.sum(axis=0), 1.0)
    assert probs[0][1] == pytest.approx(np.exp(-0.44))            # one rank: Poisson P(0)
    assert np.allclose((np.arange(40)[:, None] * probs).sum(axis=0) * scale, lam)
    # cap 1 (max_num_tokens leaves room for one prompt): a Bernoulli whose carried work keeps the mean
    p1, s1 = sched.busiest_rank_pieces(np.array([0.44]), 1.0, 1.0, 2)
    assert p1[1][0] == pytest.approx(1 - np.exp(-0.44)) and p1[1][0] * s1[0] == pytest.approx(0.44)
    # 8 independent ranks: P(no rank prefills) = exp(-0.44)^8 (TensorRT-LLM tech blog 10 round robin)
    p8, _ = sched.busiest_rank_pieces(np.array([0.44]), 8.0, 1.0, 2)
    assert p8[0][0] == pytest.approx(np.exp(-0.44 * 8))


def test_trtllm_bench_finetune_setting_by_hand():
    # tensorrt_llm/bench/build/tuning.py: 290 requests -> 128 x ceil(290/128) = 384; tokens 580 -> 2048 floor
    assert sched.finetune_setting(290.0, 1000, 1000) == (384, 2048)
    assert sched.finetune_setting(100.0, 1000, 1000) == (128, 2048)          # 32 x ceil(100/32)
    assert sched.finetune_setting(9000.0, 1000, 1000) == (4096, 8192)        # batch cap 4096
    assert sched.finetune_setting(2000.0, 8192, 1024) == (2048, 18432)       # 1024 x ceil(18000/1024)
    assert sched.finetune_setting(4000.0, 8192, 1024) == (4096, 32768)       # token cap 32768


def test_trtllm_bench_limits_mla_and_mxfp4():
    h200 = hardware.get("H200")
    mla = models.spec(dict(layers=61, d_model=7168, heads=128, kv_heads=128, d_ff=18432, vocab=129280, experts=256,
                           top_k=8, expert_d_ff=2048, shared_experts=1, dense_layers=3, q_lora_rank=1536,
                           kv_lora_rank=512, qk_rope_head_dim=64))
    # MLA: one 576-value latent per layer and token; 8 H200 (ADP) with 671 GB of FP8 weights
    bs, tok = sched.trtllm_bench_limits(mla, h200, 671e9, 1.0, 1000, 1000, 1, 8)
    per_token_gib = 61 * 576 / 1024 ** 3
    req = (141.0 - 671e9 / 8 / 1024 ** 3) * 0.95 / (per_token_gib * 2000)
    assert (bs, tok) == (sched.finetune_setting(req, 1000, 1000)[0], max(sched.finetune_setting(req, 1000, 1000)[1],
                                                                        1000 + bs))
    gptoss = models.spec(GPTOSS20)
    assert sched.trtllm_bench_limits(gptoss, h200, 13e9, 2.0, 1000, 1000, 1, 1) == (2048, 8192)  # BuildConfig
    assert sched.trtllm_bench_limits(gptoss, h200, 13e9, 2.0, 8192, 1024, 1, 1) == (2048, 8192 + 2048)


def test_trtllm_bench_scheduler_caps_the_batch():
    # FP8 KV: memory alone would hold more than 2,048 sequences of 2,000 tokens on one B200
    phys = inf.estimate(GPTOSS20, "B200", 1, "fp4", 1000, 1000, parallelism={"tp": 1}, kv_precision="fp8")
    bench = inf.estimate(GPTOSS20, "B200", 1, "fp4", 1000, 1000, parallelism={"tp": 1}, scheduler="trtllm-bench",
                         kv_precision="fp8")
    assert phys.concurrency == 2048 and bench.concurrency == 2048     # engine default max_batch_size
    with pytest.raises(ValueError, match="scheduler"):
        inf.estimate(GPTOSS20, "B200", 1, "fp4", scheduler="vllm")


def test_kv_pages_and_windows():
    ctx = _ctx(GPTOSS20)
    assert ctx.kv_block_tokens == 32
    # 2000 tokens occupy 63 pages of 32 (2016 tokens) when reserved for every layer
    assert float(kern.kv_tokens_per_layer(ctx, 2000, windowed=False)) == 2016
    # half the layers read at most their 128-token window (+ a partial page)
    assert float(kern.kv_tokens_per_layer(ctx, 2000)) == pytest.approx((2016 + 160) / 2)


def test_checkpoint_expert_precision_sets_weight_bytes_and_weight_only_compute():
    ctx = _ctx(GPTOSS20, "H200", "fp8")
    # the released checkpoint: MXFP4 experts, every other weight BF16 (OpenAI gpt-oss model card, section 2),
    # whatever 8- or 4-bit precision is asked for
    assert ctx.expert_bytes == hardware.BYTES_PER_ELEMENT["fp4"] and ctx.w_bytes == 2.0
    assert ctx.run_precision == "bf16" and ctx.peak == ctx.bf16_peak
    assert ctx.expert_weight_only                        # Hopper has no FP4 tensor cores: W4A16
    blackwell = _ctx(GPTOSS20, "B200", "fp4")
    assert not blackwell.expert_weight_only and blackwell.w_bytes == 2.0 and blackwell.run_precision == "bf16"
    assert blackwell.expert_run_precision == "fp4" and blackwell.expert_peak > 3 * blackwell.bf16_peak
    # a model without a fixed expert precision keeps the asked precision everywhere
    llama = _ctx(LLAMA70, "B200", "fp4")
    assert llama.w_bytes == hardware.BYTES_PER_ELEMENT["fp4"] and llama.run_precision == "fp4"
    e = inf.estimate(GPTOSS20, "H200", 1, "fp8", 1000, 1000, concurrency=1)
    full = inf.estimate({k: v for k, v in GPTOSS20.items() if k != "expert_weight_precision"}, "H200", 1, "fp8",
                        1000, 1000, concurrency=1)
    assert e.memory_breakdown_bytes["weights"] < 0.7 * full.memory_breakdown_bytes["weights"]


def test_spec_rejects_inconsistent_local_attention():
    with pytest.raises(ValueError, match="local_attention_layers"):
        models.spec({**LLAMA70, "local_attention_layers": 4})
    with pytest.raises(ValueError, match="expert_weight_precision"):
        models.spec({**LLAMA70, "expert_weight_precision": "fp4"})


def test_physics_scheduler_applies_the_engine_default_limits():
    # 2,048 running sequences per rank (TensorRT-LLM max_batch_size default) and 8,192 tokens per
    # iteration (max_num_tokens): a steady state of 8192/1024 requests carries 9 b tokens per iteration
    assert sched.ENGINE_DEFAULT_LIMITS == (2048, 8192)
    ctx = _ctx(GPTOSS20)
    seqs, tokens = sched.limits(ctx, [1, 2], [1, 4])
    assert list(seqs) == [2048, 2048] and list(tokens) == [8192, 8192]
    long_prompt = inf.estimate(GPTOSS20, "B200", 1, "fp4", 8192, 1024, parallelism={"tp": 1}, kv_precision="fp4")
    assert long_prompt.concurrency <= 8192 // 9
    decode = inf.estimate(GPTOSS20, "B200", 1, "fp4", 100, 100, parallelism={"tp": 1}, mode="decode")
    assert decode.concurrency == 2048


def test_checkpoint_quantised_models_keep_a_16_bit_kv_cache():
    # GPT-OSS ships MXFP4 experts without KV scales: kv 'auto' is BF16 (perf-overview: "Hopper: use auto")
    gptoss = models.spec(GPTOSS20)
    assert sctx.default_kv_precision(gptoss, hardware.get("H100-SXM"), "fp8") == "bf16"
    assert sctx.default_kv_precision(gptoss, hardware.get("B200"), "fp4") == "bf16"


def test_expert_load_skew_matches_measured_routing():
    # TensorRT-LLM tech blog 4 Table 1 (DeepSeek-R1, EP32, 8 experts per rank, no EPLB): per-rank token std
    # 491.6 over a mean of 1024 (cv 0.48), busiest rank 2.564x the mean
    cv = sctx.assumed("expert_load_cv", "central")
    assert cv * np.sqrt(32 / 256) == pytest.approx(491.6 / 1024, rel=0.06)
    busiest = float(kern.ep_load_imbalance(1e9, 256, 32, cv))      # no sampling noise: skew alone
    assert 2.0 < busiest < 2.564


def test_trtllm_bench_limits_split_the_batch_over_pipeline_stages():
    # calc_engine_setting: memory of tp x pp GPUs, the batch min(requests, 4096) / pp per micro-batch
    h100 = hardware.get("H100-SXM")
    llama405 = models.spec(dict(layers=126, d_model=16384, heads=128, kv_heads=8, d_ff=53248, vocab=128256))
    kv_bytes = 2 * 126 * 8 * 128 * 2.0
    one, two = (sched.trtllm_bench_limits(llama405, h100, 811e9, 2.0, 1000, 1000, 8, 1, pp) for pp in (1, 2))
    req = (80.0 * 16 - 811e9 / 1024 ** 3) * 0.95 / (kv_bytes / 1024 ** 3 * 2000)
    assert two[0] == sched.finetune_setting(req, 1000, 1000, 2)[0]
    assert one[0] == 64 < two[0]      # 640 GB on 8 GPUs hold no KV next to 811 GB of weights: the minimum batch
    assert sched.finetune_setting(1000.0, 1000, 1000, 2) == sched.finetune_setting(500.0, 1000, 1000)
    with pytest.raises(ValueError, match="pp"):
        sched.finetune_setting(1000.0, 1000, 1000, 0)


def test_trtllm_bench_limits_with_attention_dp_and_pipeline_stages():
    # attention DP: a rank has its pp stages' GPU memory and checkpoint / tp_flag of the weights; the batch
    # is then split once over the pp micro-batches (heuristics.py calc_engine_setting)
    h200 = hardware.get("H200")
    mla = models.spec(dict(layers=61, d_model=7168, heads=128, kv_heads=128, d_ff=18432, vocab=129280, experts=256,
                           top_k=8, expert_d_ff=2048, shared_experts=1, dense_layers=3, q_lora_rank=1536,
                           kv_lora_rank=512, qk_rope_head_dim=64))
    per_token_gib = 61 * 576 / 1024 ** 3
    for pp in (1, 2, 4):
        req = (141.0 * pp - 671e9 / 8 / 1024 ** 3) * 0.95 / (per_token_gib * 2048)
        bs, _ = sched.trtllm_bench_limits(mla, h200, 671e9, 1.0, 1024, 1024, 1, 8, pp)
        assert bs == sched.finetune_setting(req, 1024, 1024, pp)[0]
    two = sched.trtllm_bench_limits(mla, h200, 671e9, 1.0, 1024, 1024, 1, 8, 2)[0]
    assert two > sched.trtllm_bench_limits(mla, h200, 671e9, 1.0, 1024, 1024, 1, 8, 1)[0]   # twice the KV memory


def test_nvfp4_moe_checkpoints_keep_attention_at_the_release_precision():
    """TensorRT Model Optimizer's NVFP4 MoE exports leave ``self_attn`` out of FP4 (nvidia/DeepSeek-R1-0528-NVFP4
    hf_quant_config.json): DeepSeek-R1 (released in FP8) keeps FP8 attention, a BF16-released MoE keeps BF16, a dense
    model's NVFP4 export quantises attention too, and FP8 serving is FP8 everywhere."""
    dsr1 = models.spec("DeepSeek-R1")
    assert dsr1.release_precision == "fp8" and models.spec("Qwen3-235B-A22B").release_precision is None
    assert sctx.attention_weight_precision(dsr1, "fp4") == "fp8"
    assert sctx.attention_weight_precision(models.spec("Qwen3-235B-A22B"), "fp4") == "bf16"
    assert sctx.attention_weight_precision(models.spec(LLAMA70), "fp4") == "fp4"
    assert sctx.attention_weight_precision(dsr1, "fp8") == "fp8"
    ctx = _ctx("DeepSeek-R1", "B200", "fp4")
    assert (ctx.attention_run_precision, ctx.attention_w_bytes, ctx.run_precision) == ("fp8", 1.0, "fp4")
    # the attention projections run at the FP8 rate and are stored in FP8: more time and more bytes than FP4 (the
    # FP4 product's slower ramp and longer fixed time, efficiency.dense_gemm_terms, narrow the gap to ~1.4x here)
    t_fp8 = float(kern.gemm_s(ctx, 2048.0, 4096, 7168, attention=True))
    t_fp4 = float(kern.gemm_s(ctx, 2048.0, 4096, 7168))
    assert t_fp8 > 1.3 * t_fp4
    P = ctx.params
    attn = ctx.s.layers * P["attention"]
    assert kern.dense_weight_bytes(ctx) == pytest.approx((P["dense_total"] - attn) * ctx.w_bytes + attn * 1.0)
    with pytest.raises(ValueError, match="release_precision"):
        models.spec({**LLAMA70, "release_precision": "int4"})


def _llama70_ctx(accelerator):
    return inf.serving_context(LLAMA70, accelerator, 4, "fp8", 1024, 1024)


def test_a_4_gpu_hgx_board_shares_each_gpus_nvlinks_among_its_three_peers():
    """HGX H100 4-GPU (data/hardware/systems.csv, MLPerf: '6x 4th Gen NVLink, 900GB/s', no NVSwitch): a pair drives 6 of
    a GPU's 18 links, three GPUs 12, all four 18; behind NVSwitches (HGX-H100, or the accelerator's name) every group
    drives all of them."""
    board, switched = _llama70_ctx("HGX-H100-4GPU"), _llama70_ctx("H100-SXM")
    assert board.domain == 4 and board.scaleup_mesh and switched.domain == 8 and not switched.scaleup_mesh
    assert not _llama70_ctx("HGX-H100").scaleup_mesh
    assert np.allclose(kern.scaleup_share(board, [1, 2, 3, 4, 8]), [1 / 3, 1 / 3, 2 / 3, 1, 1])
    assert np.allclose(kern.scaleup_share(switched, [1, 2, 4, 8]), 1.0)


def test_a_tensor_parallel_pair_on_a_4_gpu_board_all_reduces_at_a_third_of_the_rate():
    board, switched = _llama70_ctx("HGX-H100-4GPU"), _llama70_ctx("H100-SXM")
    tokens = np.array([8192.0])        # 8192 x 8192 BF16 values: 134 MB, bandwidth-bound
    t2_board, t2_switch = kern.tp_all_reduce_s(board, tokens, 2), kern.tp_all_reduce_s(switched, tokens, 2)
    lat = kern.tp_all_reduce_s(switched, np.array([1e-9]), 2)      # the latency terms alone
    assert (t2_board - lat) / (t2_switch - lat) == pytest.approx(3.0, rel=0.02)
    assert kern.tp_all_reduce_s(board, tokens, 4) == pytest.approx(kern.tp_all_reduce_s(switched, tokens, 4))
    assert kern.tp_all_reduce_s(board, tokens, 1) == 0.0


def test_the_layout_search_on_a_4_gpu_board_keeps_tensor_parallelism_on_the_board():
    f = inf.frontier(LLAMA70, "HGX-H100-4GPU", 8, "fp8", 1024, 1024, points=6, envelope=False)
    assert f["tp"].max() <= 4
    g = inf.frontier(LLAMA70, "H100-SXM", 8, "fp8", 1024, 1024, points=6, envelope=False)
    assert g["tp"].max() == 8
    # the same TP2 x DP2 point is slower on the board: its all-reduces cross 6 NVLinks, not 18
    e_board = inf.estimate(LLAMA70, "HGX-H100-4GPU", 4, "fp8", 1024, 1024, parallelism={"tp": 2, "dp": 2},
                           concurrency=256)
    e_switch = inf.estimate(LLAMA70, "H100-SXM", 4, "fp8", 1024, 1024, parallelism={"tp": 2, "dp": 2},
                            concurrency=256)
    assert e_board.output_tokens_per_s_per_gpu < e_switch.output_tokens_per_s_per_gpu
    assert e_board.time_breakdown_s["comm"] > 2 * e_switch.time_breakdown_s["comm"]   # latency terms do not triple
