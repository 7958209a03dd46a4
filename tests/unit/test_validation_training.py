from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.sources import hardware


@pytest.fixture(scope="module")
def table():
    return validation.training_table()


def test_rows_have_sources(table):
    assert len(table) >= 50
    for case in validation.runs():
        assert case["provenance"].source_url and case["citation"]


def test_torchtitan_rows_use_the_stack_their_notes_state():
    """A torchtitan row whose note states ``training.dtype=bfloat16`` (torchtitan then keeps parameters, gradients and
    AdamW moments in BF16 with no fp32 master) names a stack with BF16 states, and one stating DeepEP (a token sent
    once per destination rank) or the standard all-to-all (one copy per expert) names a stack that dispatches that
    way; the stacks of the other torch-native rows keep the fp32 master."""
    bf16 = ("training.dtype=bfloat16", 'training.dtype = ""bfloat16""', 'training.dtype = "bfloat16"')
    checked = 0
    for case in validation.runs():
        st, note = validation.STACKS[case["stack"]], case["note"]
        if not case["stack"].startswith("torchtitan"):
            continue
        if any(b in note for b in bf16):
            assert (st.grad_bytes, st.optimizer_state_bytes) == (2.0, 6.0), case["id"]
            checked += 1
        elif "training.dtype float32" in note:
            assert st.optimizer_state_bytes == 12.0, case["id"]
        if any(k in note for k in ("use_deepep=True", "ElasticBuffer dispatcher")):
            assert st.ep_dedup, case["id"]
            checked += 1
        if any(k in note for k in ('expert_parallel_comm_backend = "standard"', "standard AllToAll dispatcher",
                                   "standard all-to-all in the baseline")):
            assert not st.ep_dedup, case["id"]
            checked += 1
    assert checked >= 21


def test_pai_megatron_rows_use_the_split_and_overlap_their_page_states(monkeypatch):
    """XTuner's Pai-Megatron-Patch Qwen3-235B rows (set 93) count the embedding and the loss as a layer each in the
    pipeline split and run TP communication overlap only where the row names "tp overlap"; DeepEP rows dedup per
    destination. The stacks are Megatron-Bridge's with exactly those facts changed, and the facts move the model the
    way their physics says: the split takes the embedding and the loss off the busiest PP32 x VP3 stages (faster),
    and TP2 without communication overlap exposes the TP collectives (slower)."""
    rows = [c for c in validation.runs() if c["group"] == "heldout93-fw-xtuner-megatron-moe"]
    assert len(rows) == 11
    for c in rows:
        st = validation.STACKS[c["stack"]]
        assert st.embedding_and_loss_in_split, c["id"]
        assert st.tp_overlap == ("tp-overlap" in c["id"]), c["id"]
        assert st.ep_dedup == ("deepep" in c["id"]), c["id"]
    stated = ("account_for_embedding/loss_in_pipeline_split", "embedding and loss accounted", "把embedding和loss")
    split_rows = [c for c in validation.runs() if any(k in c["note"] for k in stated)]
    assert len(split_rows) == 13
    assert all(validation.STACKS[c["stack"]].embedding_and_loss_in_split for c in split_rows)
    assert validation.STACKS["pai-megatron-2025-alltoall"] == replace(
        validation.STACKS["mbridge-2026-alltoall"], tp_overlap=False, embedding_and_loss_in_split=True)
    assert validation.STACKS["pai-megatron-2025-deepep"] == replace(
        validation.STACKS["mbridge-2026"], tp_overlap=False, embedding_and_loss_in_split=True)

    def speed(case, **change):
        monkeypatch.setitem(validation.STACKS, "_probe", replace(validation.STACKS[case["stack"]], **change))
        return validation.predict(dict(case, stack="_probe"))[0]

    pp32 = next(c for c in rows if c["id"].endswith("tp1ep8pp32vp3-full-mbs4"))
    assert speed(pp32) > 1.05 * speed(pp32, embedding_and_loss_in_split=False)
    tp2 = next(c for c in rows if c["id"].endswith("tp2ep8pp8-sel-nooverlap"))
    assert speed(tp2) < 0.97 * speed(tp2, tp_overlap=True)


def test_korthikanti_table5(table):
    k = table[table.group == "korthikanti-t5"]
    assert len(k) == 8
    # 2.9% / 5.1% before the slowest-GPU wait (pipeline.slowest_gpu_s, session 15): the 530B and 1T rows on 280 and
    # 512 A100 were already a few per cent slow in the model and moved to +6% / +9%
    assert k.error.abs().mean() <= 0.04
    assert k.error.abs().max() <= 0.09


def _held_out(table):
    return table.group.isin(validation.held_out_groups(table.group.unique()))


def test_other_dev_cases_median(table):
    other = table[(table.group != "korthikanti-t5") & ~_held_out(table)]
    assert other.error.abs().median() <= 0.10


def test_held_out_cases_median(table):
    """The runs the model was judged on blind: 8.0% (set 1), 18% (set 2), 27% (set 4), 11% (set 5), 14% (set 6),
    28% (set 7: Megatron-Bridge MoE, Together's B200 cluster, NeMo long sequences), 7.1% (set 8: MLPerf Training
    logs, Megatron-MoE-ModelZoo Qwen3-235B, Megatron-LM's DeepSeek-V3 on GB200) and 8.0% (set 9: MLPerf Training v6.0
    logs), 6.9% (set 10: more MLPerf Training v6.0 logs, other submitters) and 13.4% (set 11: FlagPerf/FlagScale's
    Megatron launch scripts, MLPerf v5.1 Nebius), 9.0% (set 12: MLPerf v5.1 Dell and Nebius B200) and 7.2% (set 13:
    MLPerf v5.1 Supermicro, HPE and Cisco), 2.4% (set 14: MLPerf v5.1 Lambda's NVL72 rack, v6.0 HPE B200/GB300) and
    17.2% (set 15: Megatron-Bridge 26.08 and point-release MXFP8 rows, llm-foundry MPT on H100) and 6.1% (set 16:
    MLPerf GPT-3 175B step logs on 64 B200 to 10,752 H100) and 9.6% (set 17: MLPerf v5.0 Llama 3.1 405B on 512 GB200 and
    2,048-2,560 H100, v6.0 gpt-oss-20b on 8-72 GB200/GB300) when merged; 14.9% blind on set 18 (KempnerForge on 4-GPU
    H200 nodes, IBM's FSDP on 400 / 800 Gb/s per node), 8.2% once the rows carry their clusters' node size and NICs.
    All 255 with the non-GEMM kernel floors (compute.kernel_floors_s): 9.97% (10.3% without them). Set 19 (dgxc-benchmarking
    GPT-3 175B and Llama 3.1 8B on 8-2,048 H100, Nemotron-4 340B on 6,144 H100, LLaMA-65B on 2,048 A100): 8.2% blind,
    merged unchanged; all 265: 9.7%. Set 20 (TinyLlama and IBM fms-fsdp, PyTorch FSDP on A100): 4.8% blind, merged
    unchanged; all 269: 9.6%. Set 21 (MLPerf Training v6.0 Azure, GigaComputing, Lambda and Dell logs): 10.0% blind,
    merged unchanged; all 276: 9.6%. Set 22 (MLPerf Training v4.1-v6.0 Oracle, Nebius, Carina, University of Florida,
    Datacrunch logs; Nemotron-4 15B / 340B production ramps; torchao's float8 tables): 14.8% blind, merged unchanged;
    all 297: 10.1%, over the issue's 10% (the MLPerf rows 2-15% short, the Nemotron-4 15B ramp 57-77% fast).
    Session 15's wait for the slowest GPU (pipeline.slowest_gpu_s: same-SKU chips' sustained clocks spread by
    1.5%, Sinha et al. 2022; the step waits for the slowest of N within Tukey's fence): all 297 8.9%. Set 23 (MLPerf
    v5.1 / v6.0 NVIDIA, HPE, Inventec, Cisco, Supermicro logs; FlashAttention's GPT-3 on 8 A100, BigScience's 176-195B
    layouts on 384 A100, JAX-Toolbox Paxml on 256 A100 / H100), collected after that change: 9.8% blind (11.0% without
    it), merged unchanged; all 324: 9.2%. Set 24 (MLPerf Training v5.0-v6.0 Carina, NVIDIA, University of Florida,
    Cisco, HPE logs; NeMo 25.02 / 25.04 tables; Together's 512-B200 scorecard; FlagPerf; torchao's 2-layer Llama 4
    Scout; NeMo AutoModel's Moonlight), collected after session 18's chunked-prefill change (training unchanged since
    set 23): 11.4% blind, merged unchanged; all 353: 9.3%. Set 25 (MLPerf Training v5.1 / v6.0 Dell, University of
    Florida, Lenovo, CoreWeave, Cisco logs; NeMo 25.04's long-sequence table; Together's DGX Cloud recipe runs; DGX
    Cloud's Paxml GPT-3 175B on H100), collected after session 20 (training unchanged since set 23): 6.9% blind, merged
    unchanged; all 374: 9.1%. Set 26 (MLPerf Training v6.0 Lambda, Dell, ASUSTeK, HPE logs; Megatron-Bridge 26.04
    cells; torchtitan's A100 rows), collected in session 22 (training unchanged since set 23): 8.8% blind, merged
    unchanged; all 389: 9.0%. Set 27 (Megatron-Bridge 26.02 / 25.11 cells not taken before: dense FP8 on GB200 / GB300
    9-24% short, small-expert MoE 15-57% fast), collected in session 23 (training unchanged since set 23): 16.8%
    blind, merged unchanged; all 407: 9.8%. Session 23's BF16 gradient buffer of Megatron-Bridge's recipes
    (validation.MBRIDGE_PERF): 9.2%. Set 28 (MLPerf Training v3.0 / v3.1 GPT-3 175B logs on 512-10,752 H100, 7-18%
    short; the Megatron Core MoE report's DeepSeek-V3 / Qwen3-235B table on 256-1,024 GB200 / GB300 / H100, -13% to
    +35%), collected in session 24 (training unchanged since session 23): 12.4% blind, merged unchanged; all 418: 9.5%.
    Set 29 (Supermicro's MLPerf Training v6.0 Llama 3.1 8B and gpt-oss-20b logs on 8 B300 / 72 GB300, -8% to +4%),
    collected in session 25 (training unchanged since session 23): 6.3% blind, merged unchanged; all 421: 9.3%.
    Set 30 (InternLM's 2023 InternLM-7B tables on 8-1,024 A100 over 4 x 100 Gb RoCE per node: +4% to +12% on 8-128
    GPUs, +20% to +92% on 1,024 where its data-parallel exchange is exposed), collected in session 26 (training
    unchanged since session 25): 20.2% blind, merged unchanged; all 434: 9.8%.
    Set 31 (NeMo 24.07's unused H100 FP8 cells: Nemotron-3 8B / 22B pretraining, Llama 2 7B-70B SFT, -10% to +20%;
    MLPerf Training v5.1 Oracle and v6.0 HPE logs on 8 B200 / GB300, -4% to +6%), collected in session 27 (training
    unchanged since session 25): 6.2% blind, merged unchanged; all 442: 9.5%.
    Set 32 (Megatron-Bridge's model-verification cards: 5 tuned MoE benchmarks -15% to +25%, 11 functional runs the
    cards call sanity checks +0% to +1,868%; LLM Foundry's unused MPT cells, BigScience's BLOOM reshaping runs, a
    MaxText Llama 2 7B run), collected in session 27 (training unchanged since session 25): 17.2% blind, merged
    unchanged; all 472: 10.2%, above the 10% target for the first time since set 7.
    Set 33 (Megatron-Bridge 25.09 / early-25.11 / 26.02.01 and NeMo 24.03 long-sequence cells not taken before, -9%
    to +62%; MLPerf Training v5.1 Lenovo, University of Florida and Supermicro Llama 3.1 8B logs, -13% to +3%),
    collected in session 27 (training unchanged but for LLM Foundry's memory): 10.4% blind, merged unchanged; all 500:
    10.2%. Set 34 (Dell's MLPerf Training v6.0 logs on 4-16 B200 / B300 / GB300, -11% to +7%): 5.1% blind, merged
    unchanged; all 505: 10.1%. Set 35 (Megatron-Bridge 26.02.01's 405B NVFP4 at VP4, 19% short; Megatron-MoE-ModelZoo's
    Qwen3-235B with the 1F1B all-to-all overlap, 22% short): 20.8% blind, merged unchanged; all 507: 10.2%. Set 37
    (MLPerf Training v6.0 single-node logs: gpt-oss-20b on 8 B300 9-10% short, Llama 3.1 8B on 8 B200 5% long): 8.8%
    blind, merged unchanged; all 510: 10.2%. Set 39 (MLPerf Training v6.0 HPE / Dell Llama 3.1 8B NVFP4 logs on 8-72
    GB300, -6% to +7%; Modalities' FSDP scaling tables on A100 64GB, -16% to +15%, and on H100 64GB at half the A100
    rows' MFU, +19% to +37%; OLMo-core's README H100 table, +11% to +47%), collected in session 31 (training unchanged
    since session 25): 14.5% blind, merged unchanged; all 533: 10.5%. Session 31's data-parallel bucket tail
    (communication.bucket_tail_s): 9.9%, back under the 10% target. Set 40 (MLPerf Training v6.0 gpt-oss-20b on 8-72
    B200 / B300 / GB300, 9-19% short; Llama 3.1 8B FP8 on 8 H200 NVL, 18% / 27% short), collected after the tail:
    17.6% blind, merged unchanged; all 538: 9.97%. Set 41 (session 32: NeMo AutoModel's Qwen3-30B-A3B on 8-16 H100,
    iteration +36% to +71% long; Supermicro's MLPerf v6.0 logs, 7% to 20%): 36.4% blind; its AutoModel rows then took
    AutoModel's Transformer Engine attention (stack automodel-te, +20% to +55%): all 545: 10.16%, above the 10% target
    by 0.16 points (a bound here, not the target: the closing note says so). Set 42 (MLPerf v6.0 Supermicro logs on
    8 B200 / B300, -8% to +7%; GigaComputing's gpt-oss-20b on 72 GB300 with no layout stated, 41% short at the layout
    the model searched): 7.2% blind, merged unchanged; all 551: 10.01%. Session 33: the rows whose Megatron-Bridge
    recipe states the plain all-to-all dispatcher (stacks mbridge-2026-alltoall / -fp8cs-alltoall: no DeepEP dedup;
    Qwen3-235B FP8-CS on 256 H100 +30% / +37% -> -6% / -1%, GPT-OSS 120B on 64 B200 / B300 at EP64 +40% / +99% ->
    +25% / +82%): all 551: 9.92%. Set 43 (MLPerf v6.0 Nebius / GigaComputing / Cisco logs, -34% to +5%): 5.2% blind,
    merged unchanged; all 559: 9.89%, under the 10% target. Set 44 (Hugging Face nanotron's Ultra-Scale Playbook sweep,
    1.3B-80B on 8-512 H100, one benchmark step each: -1% to +31%, but the 80B rows +19% to +51% and 3.0x on 32 GPUs,
    the small models on 512 GPUs 3.9x / 2.8x): 18.5% blind, merged unchanged; all 574: 9.92%. Session 34: the pure-BF16
    model states of NeMo AutoModel's MoE models and KempnerForge (stacks automodel-te / automodel-flex /
    kempnerforge-fsdp2: optimizer_state_bytes 6, BF16 gradients) and the optimizer step's bytes per stack move no row by
    a point: 9.93%. Set 46 (MLPerf v4.0 GPT-3 step times +3% / +5%, AutoModel Llama 3.1 70B 17% short, Megatron-Bridge's
    Qwen3-8B card +7% and its functional SFT items 3.8x / 13x): 11.9% blind, merged unchanged; all 580: 9.93%. Set 49
    (Lambda's run of NVIDIA's MLPerf v4.0 GPT-3 code on 128 H100, 12% short; HPE's MLPerf v6.0 405B NVFP4 on one GB300
    rack at GBS 144, +5%): 8.4% blind, merged unchanged; all 582: 9.93%. Session 35: every data-parallel gradient
    bucket (and every FSDP unit) pays NCCL's flat-ring latency, p - 1 steps (collectives.ring_latency_s): MLPerf's
    Llama 3.1 8B at 256-1024 GPUs -19% to -60% -> -4% to -42%, the v4.0 GPT-3 rows +3% -> +13%: all 582: 9.75%. Set 50
    (the Megatron-LM baselines of MegaScale, 175B on 256-12,288 GPUs +1% to -14% and 530B +7% to +9%; Megatron-LM's
    README GPT-3 175B on 1,024 A100 +10%; the Zero Bubble paper's 1F1B baseline on 8-32 A100, 9% to 18% slow in the
    model): 9.7% blind, merged unchanged; all 607: 9.74%. Set 52 (the FlashAttention-2 paper's GPT-3 1.3B / 2.7B on 8
    A100, -2% to -6% with FlashAttention-2 and +21% / +24% with FlashAttention-1, which the model runs at FA2's rate;
    the FlashAttention paper's GPT-2 whole-run days, +42% to +62%; Megatron-LLaMA's LLaMA-13B on 32-512 A100, -2% to
    +44%): 12.8% blind, merged unchanged; all 625: 9.74%. Set 54 (Megatron-Core's MoE README, Mixtral 8x7B on 64 H100 at
    MCore v0.8 / v0.9, +10% / +3%): 6.3% blind, merged unchanged; all 627: 9.74%. Set 56 (session 36: the NeMo-Framework-
    Launcher README's GPT-3 5B on 8-160 A100, +1% to +12%, and its 175B on 64-512 A100, +39% to +42% with batch and
    layout unstated; dgxc-benchmarking's PaxML GPT-3 5B on 16-128 H100, 17% to 22% short): 17.8% blind, merged
    unchanged; all 644: 9.93%. Set 58 (NeMo pod logs of Google's gpu-recipes on 8x B200 VMs: Qwen2.5 7B / 32B -31% to
    +3%, Qwen3-30B-A3B FP8 at EP8 -51% / -50%, Llama 3.1 70B -43% to -5%, Mixtral 8x7B -15% / -19%; steps shorter in the
    model): 14.9% blind, merged unchanged; all 659: 9.98%. Set 60 (Together AI's B200 cluster worklogs: Llama 3.1 70B /
    405B and Grok-1 on 512 B200 -12% to +17%, Nemotron-4 340B / 15B on 256-512 B200 slower in the model by 12% to 28%,
    Qwen3-30B-A3B on 8 B200 33% short): 16.9% blind, merged unchanged; all 676: 10.24%. Session 36: Megatron-Core's
    MoE dispatchers sort the rows a rank receives by local expert and back (sort_chunks_by_idxs; the flex dispatcher's
    permute of DeepEP's output), two more passes over the routed rows (compute.permute_s, Stack.moe_expert_sort):
    Megatron-Bridge's Qwen3-30B-A3B / GPT-OSS rows 5-12 points closer, 69 of 104 MoE runs closer: all 676: 9.93%.
    Set 62 (MaxText log lines of gpu-recipes on 256 H100 / H200 / B200, +1% to +13%; SmolLM3 3B on 384 H100 +19%): 9.9%
    blind, merged unchanged; all 681: 9.90%. Set 64 (Google Cloud A4 NeMo 1 logs on B200 -7%; Together's 8-B200 Llama 3.1
    8B +1% / +7% and its second, degrading B200 cluster: Llama 3.1 70B +10%, 405B +91%, Nemotron-4 340B -11% to -33%,
    Qwen3-235B +31%; IBM/Meta float8 FSDP2 on 512 H100 +2% to +18%; torchtitan DeepSeek-V3 on 256 B200 with no layout
    stated +178%): 10.8% blind, merged unchanged; all 699: 9.98%. Set 67 (A100 runs of 2022-23: the Pythia suite's
    GPU-hours, StarCoderBase, BloombergGPT, GLM-130B; 17.5% blind) merged with the Pythia rows' stack corrected to
    GPT-NeoX with FlashAttention v1 (``flash-attn-2022`` / ``gpt-neox-2023``: FlashAttention v1 at half
    FlashAttention-2's rate, which also moved the FlashAttention papers' v1 rows 14-31 points closer): all 709:
    10.06%, above the 10% target by 0.06 points (353 of 709 within 10%). Session 39: PyTorch eager's unfused
    RMSNorm / rotary / SwiGLU chains priced (``Stack.fused_elementwise``; torchtitan's eager row and its A100 page's
    rows, eager as collected, take ``torchtitan-fsdp2-eager``, as later the rows whose notes state eager runs: IBM's
    "no torch.compile" FSDP, Hugging Face layers under DeepSpeed): all 709: 9.98% (355 within 10%). Set 70 (eager and
    compiled PyTorch-native FSDP runs: IBM / Meta's blog -19% to +46%, lightning-thunder within 8%, torchtitan PRs
    1690 / 778 -15% to +122%): 14.7% blind, merged unchanged; all 734: 10.04%, above the target by 0.04 points (366
    of 734 within 10%). Session 40: nanotron's own data-parallel traffic (fp32 gradient buckets reduced in backward, the
    parameters gathered after the optimizer step) and PyTorch FSDP's copies through HBM (FSDP2 per parameter, FSDP1's
    flat gradient; rows stating FSDP1 on ``fsdp1``, MaxText / Pax on ``xla-fsdp``): 10.02% (366 of 734 within 10%);
    the Zero Bubble rows' stated pipeline split (first and last stage one layer fewer, ``zero-bubble-2024``): 9.80%
    (372 of 734 within 10%). Set 72 (torchtitan's async-TP benchmark on 64-256 H100, NeMo 25.07 on GB200): 10.3% blind,
    merged unchanged; all 750: 9.80% (380 of 750 within 10%). Set 75 (XTuner's sequence-parallel benchmark, Llama 2
    7B / 70B and Yi-34B at 8k-1M tokens on A100): 16.7% blind, merged unchanged; all 764: 9.94% (383 of 764 within
    10%). Set 77 (BigScience's February 2022 topology benchmarks of 177-196B candidates on 384 A100, from the
    chronicles' earlier revision): 4.1% blind, merged unchanged; all 783: 9.87% (396 of 783 within 10%). Set 80 (NeMo
    25.02's GPT-3 175B FP8 on 512 H100): -6.4% blind, merged unchanged; all 784: 9.85% (397 of 784 within 10%). Set 81
    (llm.c's GPT-2 124M-1558M on 8 A100 / H100, the step times its scripts state): 18.0% blind, merged unchanged; all
    788: 9.87% (398 of 788 within 10%). Set 82 (torchtitan's chunked-loss Qwen3-14B on 8 H100, the Megatron-Bridge
    low-precision post's Llama 3 8B on 8 GB200, NeMo's long-sequence B200 rows): 6.4% blind, merged unchanged; all 797:
    9.74% (406 of 797 within 10%). Set 84 (NousResearch torchtitan's DeepEP / FlashAttention-4 / LLEP docs on B200,
    Megatron-LM issue 756's Mixtral on 16 H100, Swiss AI's 300M Llama on 32 GH200): 24.0% blind, merged unchanged;
    all 810: 9.90% (407 of 810 within 10%). Set 86 (Lambda's torchtitan fork on 8 B200 and 64 GB300, GPT-NeoX-20B on
    96 A100-40GB): 22.1% blind (two refused), merged with the B200 rows' chunked loss, which their notes state: all
    820 predicted: 10.02% (408 of 820 within 10%), the target missed by two runs. Set 88 (FlagPerf's Mixtral 8x7B on 32
    H100, the only new run a search found): +71% blind, merged unchanged; all 821 predicted: 10.03% (408 of 821 within
    10%), the target missed by three runs; session 43's separate torchtitan projections (Stack.fused_projections)
    left it there (10.03%, 408 of 821). Session 44: torchtitan's per-op selective AC recomputes a MoE layer's
    grouped-GEMM experts and keeps none of their outputs, and two of set 86's stacks were read from the upstream
    gpt_oss_20b entry its rows name (full recompute on B200, the chunked loss on GB300): all 822 predicted, none
    refused: 10.02% (410 of 822 within 10%; the median needs 412). Set 90 (ServiceNow Fast-LLM's Mistral-7B on
    32 H100, Hugging Face's July-2024 nanotron sweep of a 1B Llama on 8-64 H100): 36.5% blind, merged unchanged; all
    831 predicted: 10.08% (410 of 831 within 10%), the target missed by six runs. Set 92 (torchtitan's DeepSeek-V3
    with multi-token prediction on 256 GB300, MLPerf v6.0 Oracle / Quanta logs, PyTorch-native runs on 8 B200:
    torchtitan PR 1196, pith-train, Lambda's PR 4605 / 4604 sweeps, NousResearch PR 19): 25.4% blind over 22 (eight
    refused), merged with the stacks their notes state (pure-BF16 states for ``training.dtype=bfloat16``, the chunked
    loss, DeepEP's per-rank dispatch); set 86's B200 rows, which state ``training.dtype=bfloat16`` too, on the same
    BF16-state stack: all 861 predicted, none refused: 10.43% (417 of 861 within 10%), the target missed by fourteen
    runs. Set 93 (the MoE Parallel Folding paper's Megatron-Core runs on H100, Megatron-LM's MoE recipe PRs, XTuner's
    Pai-Megatron-Patch Qwen3-235B sweep on H800, 16-GPU NeMo logs on B200): 19.1% blind over 46, merged with the
    XTuner rows on the Pai-Megatron-Patch stacks their doc states: all 907 predicted, none refused: 10.59% (433 of 907
    within 10%), the target missed by twenty-one runs. Set 94 (25 non-best layouts of Hugging Face's nanotron sweep,
    one early step each: 21.6% blind, the 1.34B model at micro-batch 1 on 64-256 GPUs 2.5-4.4x) merged unchanged:
    all 932 predicted: 10.85% (441 of 932 within 10%), the target missed by twenty-five runs. Session 47 priced the
    loss's traffic over the logits and nanotron's compute-cost pipeline split: 10.58% (448 of 932 within 10%), the
    target missed by nineteen runs. Set 95 (the Apertus report's GH200 runs, the Vocabulary Parallelism paper's 1F1B
    baselines on A100, NeMo-Framework-Launcher's 24.05 / early-2024 H100 FP8 tables): 11.0% blind over 47, merged
    unchanged: all 979 predicted: 10.61% (470 of 979 within 10%), the target missed by twenty runs. Set 96 (FP8-LM's
    and MegaScale-MoE's Megatron-LM runs on H100 / H800, Lambda's GB300 GPT-OSS reports, Together's DeepSeek-V3
    worklog, ATorch, MarinFold and BioNeMo): 20.1% blind over 35, merged unchanged: all 1,014 predicted: 10.82% (480 of
    1,014 within 10%), the target missed by twenty-seven runs. Session 48 split a pre-core-0.10 Megatron's experts
    over TP (``uniform_expert_tp``): 10.82% (481 within 10%), twenty-six runs short. Set 97 (NVIDIA dgxc-benchmarking's
    NeMo 24.11 / 24.12 and MaxText tables on H100, MaxText's A3 Llama 2 7B, FlagPerf's ChatGLM3 DeepSpeed run,
    OLMo-core's 32B): 9.9% blind over 39, merged unchanged: all 1,053 predicted: 10.80% (501 of 1,053 within 10%), the
    target missed by twenty-six runs. Session 49 priced nanotron's fp32 gradient accumulation, a pass of its own every
    micro-batch (``grad_accumulation_bytes``): 10.56% (507 of 1,053 within 10%), the target missed by twenty runs.
    Set 98 (Megatron-Kwai's H800 runs, PaddlePaddle's A100 tables, FlagPerf's DeepSpeed Baichuan2-13B, nanoGPT and
    Megatron-Bridge threads): 14.1% blind over 33, merged unchanged: all 1,086 predicted: 10.82% (514 of 1,086 within
    10%), the target missed by twenty-nine runs. The NeMo launcher's 2024 runs on flash-attn 2, as its config set
    (``nemo-2024-launcher``): 10.53% (525 of 1,086 within 10%), eighteen runs short. Session 50 priced nanotron's eager
    SwiGLU and attention layout copies (``fused_activation``, ``qkv_layout_copies``): 10.50% (529 of 1,086 within 10%),
    fourteen runs short. Set 99 (Crusoe's torchtitan, torchtune, the LLaMA and DistFlashAttn papers, Megatron-Bridge's
    and prime-rl's Qwen3-235B, AWS's Megatron-Bridge MoE results on EFA, Pai-Megatron-Patch issue 658): 23.5% blind over
    50 (4 refused), merged: all 1,140 predicted: 10.62% (545 of 1,140 within 10%), the target missed by twenty-five
    runs. Set 100 (the LAER-MoE artifact's Megatron-LM baseline, NeMo-RL / torchtitan / Megatron-Bridge threads,
    Together's GB200 rack reports, VectorLM, a Hugging Face Accelerate blog and Scicom's DDP runs): 39.9% blind over 27
    (10 refused), merged: all 1,177 predicted: 11.02% (549 of 1,177 within 10%), the target missed by forty runs.
    Set 101 (model cards, NeMo AutoModel's Megatron-FSDP reports, Megatron-Bridge / Megatron-LM threads, AWS's Kimi-K2
    on B200, the DeepSpeed-on-Azure blog, the Paxml GPU README, Marin's and Thunder's notes): 11.9% blind over 39 (2
    refused and not merged), merged: all 1,216 predicted: 11.09% (565 of 1,216 within 10%), the target missed by
    forty-three runs. Session 52 then moved 177 rows to the stacks their own notes state (a review of every row:
    Transformer Engine's cuDNN attention in MaxText and Pax, Megatron-Kwai's unoverlapped FP32 reduction, PaddlePaddle's
    unfused projections, XTuner's Triton kernels, Apertus's and MLPerf's unoverlapped TP, AWS's all-to-all dispatcher,
    MLPerf's embedding and loss in the pipeline split and all-NVFP4 layers, stated natural routing, stated losses and
    reductions): 11.23% (565 of 1,216 within 10%), forty-three runs short. The stated stacks exposed errors the stand-ins
    had hidden (MLPerf's 405B with TP_COMM_OVERLAP False, its 8B NVFP4 with no BF16 layers, ATorch's TP 2 runs with
    FlashAttention-2). Session 53 priced FlexAttention's Triton kernel for Lambda's torchtitan rows that state it (no row
    crossed 10%). Set 102 (the vTrain artifact's Megatron-LM times, YaFSDP's FSDP1 baselines, swiss-ai's GH200 PRs,
    NeMo 24.12's summary, Lambda's MLPerf practice logs, dgxc's fine-tuning READMEs and four whole-run averages): 11.6%
    blind over 62, merged: 11.23% (593 of 1,278 within 10%), forty-six runs short. NeMo's packed-SQuAD fine-tuning
    rows then attended within each example (``document_tokens``): 11.19% (595 within), forty-four short. Sets 103-104
    and sessions 53-55 took it to 11.09% over 1,376 (647 within); session 56 put fifteen Megatron-Bridge MoE rows on
    the expert all-to-all overlap their presets state (10.84%, 655 within), and set 105 (GH200 and H100 paper
    baselines, cloud recipes, Olmo 3), 22.7% blind over 38 with 9 within, was merged unchanged: 11.09% over 1,414 (664
    within), forty-three runs short. The Alps GH200 rows then took the cluster's 660 W module limit the Apertus report
    states (nineteen rows): 10.74% (675 within), thirty-two short. Set 106 (Together's B200 jobs, a torchtitan tuning
    log on 8 B200, the vTrain artifact's single-node runs, CrossPipe, the DGX Station playbook, the Qwen README's
    fine-tuning profile), 45.5% blind over 38 with 7 within, was merged unchanged: 11.02% over 1,452 (682 within),
    forty-four runs short. The bound records that state."""
    held = table[_held_out(table)]
    assert len(held) == 1452 and held.error.count() == 1452 and held.error.abs().median() <= 0.1105


# Per-group bounds: a regression in the model fails here. The megatron-bridge max is loose
# because small-expert Qwen3 MoE runs are known outliers (launch-bound; see data/runs/README.md);
# megatron-bridge-unseen's because of GPT-OSS 120B on B200 (+108%, not understood). The groups
# merged for issue 12 (torchtitan-fsdp2, llama3-production, megatron-bridge-unseen, bloom) are
# bounded near their error now: torchtitan's H100s are 500 W, 96 GB HBM2e parts (power cap and
# HBM variant carried by the rows, data/runs/README.md). megatron-bridge's median rose from 8.8% to 12.0% when
# GB200 took its measured MAMF fraction (0.729) and FP4 its measured ratio (0.80): its GB200 Llama 3.1 405B
# rows went from -8% / -18% to -12% / -26% while the GB200 Llama 3 70B ones improved (+20% -> +15% / +8%).
# Overlapped collectives slowing the compute beside them (overlap_compute_slowdown, 18.9%; Lee et al. 2025) took
# the held-out median from 13.5% to 11.2% and tightened most bounds here; MaxText's two H100 rows moved the other
# way (-2% / +5% -> +5% / +15% in step time) and DeepSeek-V3's DualPipe row from -1% to -9%. BLOOM's row states its
# network since session 13 (4 x 100 Gb/s Omni-Path per 8-GPU node, 6.25 GB/s per GPU): +6% -> +1%.
# Session 23: Megatron-Bridge's performance recipes keep their gradient buffer in BF16 (validation.MBRIDGE_PERF,
# grad_reduce_in_fp32=False in every model family's common configs), 2 bytes per parameter less than the FP32 buffer:
# stated layouts the memory model had put into partial recompute run without it, and the Megatron-Bridge dense FP8
# rows on GB200 / GB300 came 3-9 points closer (held-out 9.76% -> 9.20%; sets 1-26 alone 9.00% -> 8.87%). Rows already
# fast moved further: GPT-OSS 120B BF16 on 64 B200 (25.11 +90% -> +108%, 26.04 +42% -> +59%), Megatron-LM's DeepSeek-V3
# baseline on GB200 (+89% -> +95%), Together's 512-B200 runs (iteration times 3 points shorter).
# Session 52 put 177 rows on the stacks their own notes state (data/runs/HELD_OUT.md, "Session 52"). Bounds it
# loosened: MLPerf's Llama 3.1 405B with TP_COMM_OVERLAP False on GB300 (+7% -> +29% in step time: the exposed TP
# collectives the model prices at 23 s of a 92 s step), MLPerf's Llama 3.1 8B NVFP4 logs with no BF16 layers (steps
# 4-14% short where the 16% kept-layer default had them within 7%), ATorch's TP 2 DeepSpeed runs with FlashAttention-2
# (-6% -> +21%), the 405B rows counting the embedding and loss in the pipeline split, natural routing and DP overlap
# where stated. Bounds it tightened: AWS's all-to-all rows, Apertus, Megatron-Kwai, nanoGPT, MCore's Mixtral README,
# the NeMo Llama 3.1 70B recipes on B200.
# Session 54: torchtitan's routed experts run PyTorch's BF16 torch._grouped_mm, about half the dense rate on Blackwell
# (ceiling torch_grouped_mm_fraction), and rows that state FlashAttention-4 run attention at the vendor rate.
# Tightened: NousResearch's DeepEP rows (+20% -> +5%), Lambda's B200 rows, PR 4605's compiled Qwen3 rows (+12-16% ->
# within 2%). Loosened: PR 4604's compiled GPT-OSS-120B rows (within 4% -> 18-23% slow), three of Lambda's GB300
# GPT-OSS-20B rows (11-24% slow; their sliding-window layers and packed documents, which shorten attention, are not
# priced), pith-train's Qwen3-30B-A3B row (-1% -> -14%) and Marin's grug MoE rows on 8 H100 (0-26% -> 19-39% fast),
# which state FlashAttention-4's CuTe kernels. prime-rl's B300 rows moved with both changes (-27% / -37% -> -25% /
# -34%).
# Session 56: the Megatron-Bridge MXFP8 presets of 26.06-26.08 (Qwen3-30B-A3B, Qwen3-235B-A22B, GPT-OSS-120B on GB200 /
# GB300) state the expert all-to-all overlap with full-iteration CUDA graphs (``moe_a2a_overlap=True``), and 15 rows
# moved to the overlap stacks. Tightened: the 26.08 Qwen3 cells (-19% to -29% -> within 10%), the model-verification
# cards' Qwen3 weak-scaling and 235B items. Loosened: the 26.06 GPT-OSS-120B cells on GB200 / GB300 (+5% / +7% ->
# +24% / +29%): GPT-OSS runs below the model on every Megatron-Bridge stack and precision (data/runs/HELD_OUT.md).
@pytest.mark.parametrize("group,median,worst", [
    ("megatron-t1", 0.05, 0.1), ("megatron-t2", 0.07, 0.11), ("h200-measured", 0.06, 0.06),
    ("nemo", 0.09, 0.12), ("mlperf-v4.0", 0.06, 0.07), ("mtnlg", 0.19, 0.21),
    ("megatron-bridge", 0.08, 1.34), ("deepseek-v3", 0.165, 0.165), ("torchtitan-fsdp2", 0.03, 0.305),
    ("llama3-production", 0.06, 0.07), ("megatron-bridge-unseen", 0.055, 1.1), ("bloom", 0.03, 0.03),
    ("mpt-foundry-fsdp", 0.06, 0.275), ("nemo-25x", 0.13, 0.3), ("automodel-fsdp2", 0.115, 0.265),
    # set 4 (HELD_OUT.md), merged at the error it had when first predicted: small-expert MoE on Megatron-Bridge and
    # torchtitan's power-limited B200 rows (cap not stated) are the known misses
    ("megatron-bridge-2604", 0.15, 0.63), ("megatron-bridge-2606", 0.24, 0.655), ("torchtitan-blackwell", 0.77, 0.87),
    # set 5, merged at the error it had when first predicted (blind): MPT-30B at 8k on 8 H100 is the worst (+49%)
    ("heldout5-dgxc", 0.13, 0.3), ("heldout5-dgxc-maxtext", 0.14, 0.19), ("heldout5-nemo2407", 0.08, 0.15),
    ("heldout5-torchtitan-a100", 0.065, 0.08), ("heldout5-automodel", 0.125, 0.175),
    ("heldout5-mbridge2511", 0.085, 0.105),
    ("heldout5-mpt", 0.115, 0.415),
    # set 6, merged at the error it had when first predicted (blind): NeMo 25.04's DeepSeek-V3 BF16 on 256 GB200 runs 3.4x
    # slower than predicted (958 tokens/s per GPU; Megatron-Bridge 25.11 runs the same model at 3,848 on GB300)
    ("heldout6-dgxc2504", 0.066, 0.22), ("heldout6-dgxc2504-moe", 0.21, 0.72), ("heldout6-moe-modelzoo", 0.17, 0.29),
    ("heldout6-nemo2407", 0.05, 0.115),
    # set 7, merged at the error it had when first predicted (blind): Megatron-Bridge's GPT-OSS 120B (+45% to +106%)
    # and Qwen3-30B on H100 (+111%) as in the earlier sets; Together AI's B200 cluster runs 9-45% slower than predicted
    # (its network is oversubscribed); NeMo 24.03's long-sequence Llama 2 7B rows +30% to +43%, 3-18% slow since session
    # 49 put the NeMo launcher's 2024 runs on flash-attn 2 (stack nemo-2024-launcher; its config set NVTE_FUSED_ATTN=0),
    # which also tightened heldout6, heldout33 and the heldout95 launcher groups below
    ("heldout7-mbridge", 0.31, 1.0), ("heldout7-together-b200", 0.19, 0.41), ("heldout7-torchtitan", 0.09, 0.255),
    ("heldout7-nemo-longseq", 0.135, 0.185),
    # set 8, merged at the error it had when first predicted (blind): MLPerf's Llama 3.1 8B on 512 GB300 (one
    # sequence per 8 GPUs per step, -55% in step time) and Megatron-LM's DeepSeek-V3 baseline on GB200 (the same
    # layout runs 1.96x faster after the optimizations the page describes; the final row is within 3%) are the misses
    ("heldout8-mlperf-train", 0.07, 0.53), ("heldout8-moe-modelzoo", 0.125, 0.205),
    ("heldout8-mcore-dsv3-gb200", 0.46, 0.87),
    # set 9 (step times, so + is too slow): MLPerf Training v6.0's DeepSeek-V3 on GB300 runs 1.55x GB200's rate per
    # GPU (TP1 without recompute against TP2 with it; the model gives 1.12x at the same FP8 peak). Blind, with the
    # default Megatron stack: GB300 +25%, GB200 -9% / -5%; with the EP all-to-all overlap and real routing the runs
    # state (stack mlperf-2026-moe): GB300 +12%, GB200 -19% / -16%
    ("heldout9-mlperf60-dsv3", 0.17, 0.175), ("heldout9-mlperf60-partners", 0.13, 0.13),
    ("heldout9-mlperf60-llama405b", 0.14, 0.21), ("heldout9-mlperf60-gptoss", 0.03, 0.04),
    # set 10, merged at the error it had when first predicted (blind, step times): CoreWeave's DeepSeek-V3 on 2,048-8,192
    # GB300 within 6% with the stack the MLPerf recipe states (mlperf-2026-moe); the miss is again the strong-scaling
    # corner, Llama 3.1 8B on 1,024 GB200 (one sequence per 16 GPUs per step: the model's step is 63% short)
    ("heldout10-mlperf60-llama8b", 0.07, 0.49), ("heldout10-mlperf60-gptoss", 0.21, 0.33),
    ("heldout10-mlperf60-dsv3-coreweave", 0.015, 0.09), ("heldout10-mlperf60-llama405b-coreweave", 0.095, 0.095),
    # set 11 (blind with the default Megatron-Core stack: FlagPerf +32% to +43%, FlagScale +43% / +91%; merged with the
    # stack their launch scripts state, no TP communication overlap or overlapped gradient reduce): Llama 3 8B at TP2 on
    # 8-16 H100 stays 23-30% over (Megatron-Core 0.6's attention backend is not stated); MLPerf v5.1 Nebius within 2%
    ("heldout11-flagperf-mcore", 0.2, 0.23), ("heldout11-flagperf-flagscale-h800", 0.085, 0.115),
    ("heldout11-mlperf51-nebius", 0.02, 0.025),
    # set 12, merged at its blind error: single-node B200 within 0-10%, two to four nodes over InfiniBand 8-12% short
    ("heldout12-mlperf51-dell", 0.05, 0.1), ("heldout12-mlperf51-nebius-multinode", 0.05, 0.05),
    # set 13, merged at its blind error: one B200 node within 1%; 64 H200 over InfiniBand 14% short and Cisco's 128 H100
    # in v5.1 37% short (the same system's v6.0 step, set 10, is 28% faster: -14%)
    ("heldout13-mlperf51-supermicro", 0.035, 0.035), ("heldout13-mlperf51-hpe-h200", 0.065, 0.065),
    ("heldout13-mlperf51-cisco-h100", 0.325, 0.325),
    # set 14, merged at its blind error: HPE's 16-32 B200/GB300 within 5%; Lambda's 72 GB300 in one NVL72 rack (CP2, one
    # micro-batch of 4,096 tokens per GPU) 21% short: the strong-scaling miss without an inter-node network
    ("heldout14-mlperf60-hpe-multinode", 0.065, 0.1), ("heldout14-mlperf60-hpe-gptoss", 0.07, 0.08),
    ("heldout14-mlperf51-lambda-gb300", 0.135, 0.135),
    # set 15, merged at its blind error: Megatron-Bridge 26.08's MXFP8 MoE rows on GB200/GB300 0-20% short; two point
    # releases off both ways (Llama 3 70B PP4 at micro-batch 2 -40%, the model recomputing where the run did not;
    # a B300 Qwen3-235B row 45% below its own 26.04 twin +86%); llm-foundry's MPT on H100 15-32% faster in the model
    ("heldout15-mbridge2608", 0.07, 0.105), ("heldout15-mbridge-point-releases", 0.4, 0.835),
    # (session 27's llm-foundry-2023 stack, MPT without dropout and with a fused cross entropy, moves them 0.4-1 point)
    ("heldout15-mpt-h100", 0.22, 0.305),
    # set 16, merged at its blind error: MLPerf GPT-3 175B within 1% on 64 B200 and 512 H100 (v4.1) and 10,752 H100 (v4.0);
    # v3.1's Eos runs (interleave unstated, searched) 7-11% short
    ("heldout16-mlperf31-gpt3", 0.035, 0.045), ("heldout16-mlperf40-gpt3", 0.115, 0.115),
    ("heldout16-mlperf41-gpt3", 0.055, 0.1),
    # set 17, merged at its blind error: Llama 3.1 405B (MLPerf v5.0) 6-10% short; gpt-oss-20b on 72 GB200/GB300 at one
    # micro-batch of 8,192 tokens per two GPUs 22-25% short, on 8 GB200 14% (the small-work-per-GPU miss of sets 8-14)
    ("heldout17-mlperf50-llama405b", 0.04, 0.074), ("heldout17-mlperf60-gptoss20b", 0.19, 0.215),
    # set 18 (blind 10%, 21% and 21%, predicted on 8-GPU nodes and the catalogue's NICs), merged with the clusters the
    # rows state: KempnerForge's 70B TP4 x FSDP on 4-GPU H200 nodes -28% / -33% -> -5%; IBM's FSDP on 400 / 800 Gb/s per
    # node 20% / 50% fast -> 11% / 37% (7B at HSDP, recorded as full sharding); one H200 with full recompute 24% slow.
    # Session 34: KempnerForge steps BF16 parameters in place (stack kempnerforge-fsdp2), so its Adam step moves 14
    # bytes per parameter instead of 28: its steps 0.5-1% shorter, the group median 10.0% -> 10.2%. Session 39: IBM's
    # rows ran without torch.compile (stack torchtitan-fsdp2-eager): H100 7B +32% -> +15%, 34B / 70B +10% / +6% ->
    # +3% / +1%; A100 7B +8% -> -2%, 34B / 70B -5% / -11% -> -10% / -15% (group 9.0% / 32% -> 6.5% / 15%)
    ("heldout18-kempnerforge-h200", 0.11, 0.285), ("heldout18-kempnerforge-scale", 0.015, 0.225),
    # Session 50: its eager GatedLinearUnit splits the merged gate/up output, whose backward concatenates the two
    # gradient halves (compute.GATE_UP_SPLIT_BWD_BYTES): 6.99% / 15.8% -> 7.4% / 16.1%
    ("heldout18-ibm-fsdp", 0.075, 0.165),
    # set 19, merged at its blind error: every row's step a little short in the model. dgxc-benchmarking's GPT-3 175B
    # (TP4 PP8 VP12) on 128-2,048 H100 6-13% (FP8 more than BF16), its Llama 3.1 8B (CP2) on 8-128 H100 within 6%;
    # Nemotron-4 340B's production stage on 6,144 H100 (micro-batch and interleave unstated, searched) 19% short;
    # LLaMA-65B's "around 380 tokens/s/GPU" on 2,048 A100 (layout unstated, searched): the model 10% fast
    ("heldout19-dgxc-gpt3-175b", 0.075, 0.095), ("heldout19-dgxc-llama31-8b", 0.04, 0.06),
    ("heldout19-nemotron4-340b-production", 0.155, 0.155), ("heldout19-llama1-65b-production", 0.04, 0.04),
    # set 20, merged at its blind error: PyTorch FSDP on A100 within 7%: TinyLlama 1.1B on 16 A100-40GB 3% fast, IBM
    # fms-fsdp's Llama 2 13B (HSDP, recorded as full sharding) / 34B / 70B (full recompute) on 128 A100 5-7% short
    ("heldout20-tinyllama", 0.01, 0.01), ("heldout20-fms-fsdp-readme", 0.085, 0.1),
    # set 21, merged at its blind error: MLPerf Training v6.0 partners. Azure's Llama 3.1 405B on 8,192 GB200 (NVFP4)
    # 14% short; gpt-oss-20b (MXFP8) on 8-16 B200 / B300 / GB300 3-14% short; Llama 3.1 8B (NVFP4) on 72 GB300 9% and
    # 16 B300 2% short
    ("heldout21-mlperf60-llama31_405b", 0.08, 0.08), ("heldout21-mlperf60-gpt_oss_20b", 0.085, 0.15),
    ("heldout21-mlperf60-llama31_8b", 0.03, 0.035),
    # set 22, merged at its blind error. MLPerf logs, every step short in the model: Oracle's GPT-3 175B on 1,536 /
    # 3,072 H100 over RoCE 4% / 21%, Nebius' 405B on 512 / 1,024 H200 2%, Carina's 405B on 512 / 2,496 GB200 3-8%,
    # University of Florida's 405B on 256 / 448 B200 11-12%, Llama 3.1 8B on 64 B200 (Oracle, Datacrunch) 13%, Nebius'
    # 8B NVFP4 and gpt-oss-20b on 64 B300 14-15% (the multi-node small-model gap). Nemotron-4 15B's production ramp on
    # 768-2,304 H100 (TP8, MFU read back to tokens/s) 57-77% fast and 340B's 1,536 / 3,072-GPU stages 17% fast with
    # Megatron-Core's TP overlap (stack nemo-2024); without it (megatron-lm-2024) 10-23% and 3%, but the runs do not
    # say. torchao's float8 Llama 3 8B on 8 H100 (part and power not stated; the catalogue's 700 W part) 35-58% fast,
    # its power-limited B200 row 159% (as the torchtitan-blackwell rows of the same table)
    ("heldout22-mlperf41-gpt3-oracle", 0.1, 0.19), ("heldout22-mlperf50-carina-gb200", 0.06, 0.066),
    ("heldout22-mlperf50-nebius-h200", 0.03, 0.03), ("heldout22-mlperf51-llama8b-b200-64", 0.075, 0.08),
    ("heldout22-mlperf51-uf-b200", 0.098, 0.102), ("heldout22-mlperf60-nebius-b300", 0.07, 0.07),
    ("heldout22-nemotron4-15b-production", 0.46, 0.56), ("heldout22-nemotron4-340b-ramp", 0.15, 0.15),
    ("heldout22-torchao-float8-h100", 0.285, 0.445), ("heldout22-torchao-mx-b200", 1.155, 1.155),
    # set 23, merged at its blind error (step times: - is short). MLPerf v6.0 NVIDIA DeepSeek-V3 on 2,048-8,192 GB200
    # (one layout, TP2 PP4 EP32) 26-43% short, more so with scale; v5.1 Llama 3.1 8B on 72 / 512 GB200 14% / 48% short
    # and v6.0 partners' 8B on 8-32 B300 / GB200 6-24% short (the strong-scaling gap); HPE's 405B on one GB300 NVL72
    # rack +6%, Inventec's gpt-oss-20b -9%. FlashAttention's GPT-3 125M-2.7B on 8 A100 within 10%, BigScience's
    # 176-195B layouts on 384 A100 within 15%, JAX-Toolbox Paxml on 256 GPUs (XLA FSDP, stack torchtitan-fsdp2 as the
    # closest preset): A100 within 7%, H100 15-64% fast (TE FP8 5B the worst)
    ("heldout23-mlperf60-dsv3-gb200-scale", 0.32, 0.44), ("heldout23-mlperf60-llama405b-hpe-nvl72", 0.286, 0.286),
    ("heldout23-mlperf60-llama8b-partners", 0.18, 0.25), ("heldout23-mlperf60-gptoss-inventec", 0.09, 0.09),
    ("heldout23-mlperf51-llama8b-gb200", 0.205, 0.31), ("heldout23-flashattn-gpt3-a100", 0.04, 0.10),
    ("heldout23-bigscience-tr11-prequel", 0.05, 0.16), ("heldout23-jaxtoolbox-pax", 0.19, 0.65),
    # set 24, merged at its blind error. MLPerf logs: Carina's 405B on 1,024-2,048 GB200 6% short, Llama 3.1 8B on
    # 8-256 GPUs within 21%, NVIDIA's 512-GB300 TP2 CP4 point 46% short (the strong-scaling gap of sets 8 and 23);
    # NeMo 25.02 / 25.04 tables within 17%; Together's 512 B200 (layouts searched, DeepSeek-V3 batch inferred):
    # Qwen3-235B / DeepSeek-V3 22-44% short; FlagPerf's DeepSpeed / Megatron-DeepSpeed Llama-2-7B 33-40% fast; torchao's
    # Llama 4 Scout cut to 2 layers on 4 B200 85-134% fast (a benchmark whose embedding and head are half the weights)
    ("heldout24-mlperf-train", 0.08, 0.47), ("heldout24-nemo-docs-2502-2504", 0.10, 0.18),
    ("heldout24-together-b200-512", 0.23, 0.44), ("heldout24-automodel-moonlight", 0.055, 0.055),
    # (session 39: the DeepSpeed row runs Hugging Face's layers eager, stack torchtitan-fsdp2-eager: +41% -> +21%)
    ("heldout24-flagperf-deepspeed", 0.235, 0.33), ("heldout24-torchao-llama4-b200", 0.67, 0.81),
    # set 25, merged at its blind error. MLPerf v5.1 / v6.0 Llama 3.1 8B logs on 8-64 B200 / B300 / GB300 within 11%,
    # Dell's gpt-oss-20b on 64 GB300 (layout searched) 47% short; NeMo 25.04's long-sequence Llama 3 8B within 8%;
    # Together's Qwen2.5-72B / gpt-oss-120b on 64 GB200 40-45% short, Grok-1 / Qwen3-30B within 4%; DGX Cloud's Paxml
    # GPT-3 175B on 128-2,048 H100 10-15% long
    ("heldout25-mlperf-train", 0.06, 0.445), ("heldout25-nemo-longseq", 0.05, 0.08),
    ("heldout25-together-dgxc", 0.113, 0.43), ("heldout25-dgxc-paxml", 0.164, 0.31),
    # set 26, merged at its blind error. MLPerf v6.0 Llama 3.1 8B logs on 8-72 B200 / B300 / GB200 / GB300 within 7%,
    # gpt-oss-20b MXFP8 8-9% short on 8 B300 and 21% short on 72 GB300; Megatron-Bridge 26.04's cells on 64-256
    # GB200 / GB300 -20% to +2%, Qwen3-235B on 256 H100 30% fast; torchtitan's A100 Llama 2 13B / 70B 8-12% fast
    # (-2% / +5% once session 39 priced their eager elementwise chains)
    ("heldout26-mlperf-train", 0.072, 0.22), ("heldout26-mbridge-2604", 0.135, 0.19),
    ("heldout26-torchtitan-a100", 0.03, 0.05),
    # set 70, merged at its blind error (the first set predicted with PyTorch eager's unfused chains priced): the IBM /
    # Meta blog's MFU with and without torch.compile, A100 -19% to +7% and H100 +1% to +46% (34B / 70B on 464 H100);
    # lightning-thunder's Llama 2 7B on 8 H100 within 8%, eager and compiled; torchtitan PR 1690's Qwen3 32B (+30% eager
    # at TP8) and PR 778's Llama 3 8B, whose development machine ran 2.4x slower than lightning-thunder's (+88% to +122%)
    ("heldout70-ibm-fsdp-compile", 0.105, 0.44), ("heldout70-thunder-litgpt-bench", 0.07, 0.095),
    ("heldout70-torchtitan-pr778", 0.735, 0.93), ("heldout70-torchtitan-qwen3-32b", 0.3, 0.315),
    # set 72, merged at its blind error (the first set predicted with PyTorch FSDP's copies priced): torchtitan's June
    # 2025 async-TP benchmark on 500 W H100, Llama 3.1 70B FSDP 32 x TP 8 within 4% in BF16 and float8 tensorwise, the
    # rowwise runs the source calls anomalous +30% / +44%, Llama 3.1 8B FSDP 8 x TP 8 +16% to +19% (rowwise +63% /
    # +69%); NeMo 25.07 on GB200 within 3%
    ("heldout72-torchtitan-asynctp", 0.14, 0.64), ("heldout72-nemo2507-gb200", 0.025, 0.055),
    # set 75, merged at its blind error: XTuner's sequence-parallel speed benchmark on A100 (Hugging Face layers under
    # DeepSpeed, Ulysses sequence parallelism recorded as cp), Llama 2 7B at 8k-1M tokens 8-22% short, Yi-34B -18% to
    # +23%, Llama 2 70B -22% to +43% (its 8k row without sequence parallelism); since session 52 on xtuner-2024 (the
    # Triton RMSNorm and rotary kernels its notes state, eager otherwise): 15% median, the 70B 8k row +49%
    ("heldout75-xtuner-seqpar", 0.17, 0.495),
    # set 77, merged at its blind error: BigScience's tr11 topology benchmarks (February 2022, Megatron-DeepSpeed on 384
    # A100) -27% to +4%, median 3.7%; its bf16 probe runs on 8-160 GPUs, the single second iteration of each, -33%
    ("heldout77-bigscience-tr11-topology", 0.045, 0.27), ("heldout77-bigscience-tr11-bf16-probe", 0.335, 0.345),
    # set 80, merged at its blind error: NeMo 25.02's GPT-3 175B FP8 on 512 H100, 6% short
    ("heldout80-nemo2502-h100", 0.065, 0.065),
    # set 81, merged at its blind error: llm.c's GPT-2 124M / 350M / 774M on 8 A100 17-19% long in step time (its
    # fused hand-written kernels, stood in for by the nemo-2024 stack), the 1558M on 8 H100 4% long
    ("heldout81-llmc-gpt2", 0.21, 0.235),
    # set 82, merged at its blind error: the Megatron-Bridge low-precision post's Llama 3 8B on 8 GB200, 6-9% short in
    # step time over BF16 / FP8-CS / MXFP8 / NVFP4; NeMo's long-sequence Llama 3 8B FP8 on 2-64 B200 at 8K-256K -6% to
    # +7%; torchtitan's chunked-loss Qwen3-14B TP4 DP2 on 8 H100 (eager, full recompute) 15% slow
    ("heldout82-mbridge-lowprec-blog", 0.066, 0.09), ("heldout82-nemo-longseq-b200", 0.04, 0.071),
    ("heldout82-torchtitan-chunked-loss", 0.165, 0.165),
    # set 84, merged at its blind error: NousResearch torchtitan's DeepEP Qwen3-30B-A3B on 8-128 B200 23-24% fast; its
    # FlashAttention-4 doc's SDPA baseline at TP8 on 8 B200 +5% (32k) to +47% (4k); its LLEP doc's eager 9.5B debug MoE
    # with natural routing 4.4x fast; Megatron-LM issue 756's Mixtral 8x7B (TP2 EP8 over two nodes) 46% short in step
    # time; Swiss AI's 300M Llama on 32 GH200 (the script's "~0.9 s") 75% short
    ("heldout84-nous-deepep", 0.055, 0.06), ("heldout84-nous-fa4", 0.185, 0.335), ("heldout84-nous-llep", 2.24, 2.24),
    # (session 48: 52% short once its core's experts split over TP, which halves their memory, so the search no
    # longer recomputes; 48% on the natural-routing stack its note states)
    ("heldout84-mlm-issue756", 0.485, 0.485), ("heldout84-swissai-300m", 0.65, 0.65),
    # set 86, merged with the B200 rows' chunked loss (their notes: ChunkedCELoss): Lambda's torchtitan fork,
    # GPT-OSS-20B and Qwen3-30B-A3B FSDP-only on 8 B200 45-46% fast; GPT-OSS-20B on 64 GB300 +8% to +61% compiled /
    # eager, its stock baseline 2.05x; GPT-NeoX-20B on 96 A100-40GB +20%. Session 44: the B200 GPT-OSS rows at the
    # stock entry's full recompute (+56% / +73% with the new per-op SAC search, +22% / +35% at full), the GB300 rows at
    # its chunked loss and per-op SAC recomputing the grouped-GEMM experts (selective at batch 8: +14% -> +7%; batch 24,
    # refused before: +3%)
    ("heldout86-lambda-tt-b200", 0.15, 0.25), ("heldout86-lambda-tt-gb300", 0.135, 0.85),
    ("heldout86-neox20b", 0.201, 0.201),
    # set 88, merged at its blind error: FlagPerf's Mixtral 8x7B Megatron-Core case on 32 H100 (TP8 PP2 DP2, EP1;
    # the source's own MFU 20.7%) 71% fast
    ("heldout88-flagperf-mixtral", 0.71, 0.71),
    # set 90, merged at its blind error: ServiceNow Fast-LLM's README throughput for Mistral-7B on 32 H100 (-12%);
    # Hugging Face's July-2024 nanotron bench_cluster sweep of a 1B Llama (24 layers, d 2048, MHA) on 8-64 H100:
    # TP / DP alone +24% to +36%, with pipeline stages +69% / +105%, TP8 x PP8 on 64 GPUs 5.4x, TP8 at micro-batch 32
    # (3.5x below the same layout at 8, as logged) 4.4x
    # (session 50: nanotron's eager SwiGLU and attention layout copies, bench-cluster 49.9% / 3.82x -> 41.8% / 3.65x;
    # Fast-LLM on its own stand-in without them, fast-llm-2025, unchanged)
    ("heldout90-fast-llm", 0.155, 0.155), ("heldout90-nanotron-bench-cluster", 0.42, 3.65),
    # set 92, merged with the stacks the rows state: MLPerf v6.0 Oracle's Llama 3.1 8B NVFP4 on 8 / 72 GB300 and
    # GPT-OSS-20B MXFP8 on 8 GB300 within 6.4%, Quanta's 8 B300 -0.5%; torchtitan's DeepSeek-V3 with multi-token
    # prediction on 256 GB300 14% / 26% short (the MTP layer is not in the spec); on 8 B200: pith-train's torchtitan
    # Qwen3-30B-A3B +1%, torchtitan PR 1196's Llama 3 8B +20% / +34%, Lambda's PR 4605 Qwen3-30B-A3B sweep +24% to
    # +84% (eager slower than compiled), its PR 4604 pure-BF16 GPT-OSS-120B sweep 0% to +125%, NousResearch PR 19's
    # standard-EP run +83%
    ("heldout92-mlperf60-oracle", 0.045, 0.075), ("heldout92-mlperf60-quanta", 0.01, 0.01),
    ("heldout92-torchtitan-dsv3-mtp", 0.21, 0.265), ("heldout92-pithtrain-issue79", 0.145, 0.145),
    ("heldout92-torchtitan-pr1196", 0.27, 0.345), ("heldout92-torchtitan-pr4605", 0.22, 0.585),
    ("heldout92-torchtitan-pr4604", 0.215, 0.77), ("heldout92-nous-pr19", 0.565, 0.565),
    # set 93: the MoE Parallel Folding paper's (arXiv 2504.14960) Mixtral-8x22B / Qwen2-57B-A14B / G8T8 on 64-1,024
    # H100 -10% to +24% (7.6% median); Megatron-LM PR 5728 / 5289 MoE recipes: full CUDA graph GB200 / GB300 Qwen3-235B
    # within 7%, partial graphs and B200 / B300 +41% to +53% (the H100 235B and B200 rows on the stacks their recipes
    # state: the embedding and loss in the pipeline split, DeepEP's host sync: +17% -> +27%, +55% -> +50%); XTuner's
    # Pai-Megatron-Patch Qwen3-235B on 256 H800 on the stacks its doc states, -16% to +66%; Pai issue 643's Qwen3-30B on 16 H800 +31% / +33%; Megatron-Bridge issue
    # 4439's Qwen3-30B MXFP8 on 8 B200 +29%; yangwhale's 16-GPU NeMo logs on B200 12-30% fast
    ("heldout93-moe-folding", 0.11, 0.24), ("heldout93-fw-mlm-moe-recipes", 0.23, 0.535),
    ("heldout93-fw-mlm-moe-recipes-pr5289", 0.455, 0.505), ("heldout93-fw-xtuner-megatron-moe", 0.165, 0.66),
    ("heldout93-fw-pai-issue643", 0.32, 0.335), ("heldout93-fw-mbridge-issue4439", 0.295, 0.295),
    ("heldout93-fw-yangwhale-a4-16gpu", 0.185, 0.3),
    # set 94: the nanotron sweep's non-best layouts on 8-512 H100 (one early step each): -29% to +51% but for the
    # 1.34B model at micro-batch 1 on 64-256 GPUs (2.5-4.4x: 2.7-7.4x below the same model on 8-32 GPUs) and the 3.57B
    # on 256 GPUs (+65%)
    # (session 50: nanotron's eager SwiGLU and attention layout copies, 12.2% / 3.06x -> 9.5% / 2.82x)
    ("heldout94-nanotron-sweep-modadd", 0.10, 2.83),
    # set 95 (predicted at 6ea4576, merged unchanged): Apertus on 1,024-4,096 GH200 (8k-32k context extension and
    # pretraining -4% to +34%; the 64k runs +75% / +208%), the Vocabulary Parallelism paper's 1F1B baselines on 8-32
    # A100 (-17% to +10%: the 256k-vocabulary rows of the 21B model 16-17% slow), NeMo-Framework-Launcher's 24.05
    # (-8% to +22%) and early-2024 (-25% to +33%) H100 FP8 tables (since session 53 their packed-SQuAD fine-tuning
    # rows attend within each 250-token example: the 13B rows moved from -13%/-16% to +5%/0%, the 7B and 70B rows from
    # +7%/-6% and +24%/+5% to +33%/+16% and +41%/+19%)
    ("heldout95-apertus", 0.165, 1.94), ("heldout95-vocab-parallel", 0.07, 0.17),
    ("heldout95-fw-nemolauncher-2405", 0.045, 0.19), ("heldout95-fw-nemolauncher-early2024", 0.15, 0.41),
    # set 96 (predicted at 1d67b77, merged unchanged): FP8-LM's Megatron-LM GPT 7B-175B on 32-128 H100 (+16% to +28%),
    # MegaScale-MoE's Megatron-LM baseline of a 352B MoE on 240-1,440 H800 (1.98-2.29x optimistic), Lambda's GB300
    # GPT-OSS (-12% to +44%), Together's DeepSeek-V3 MXFP8 on 512 B200 (-22%, -24%), ATorch's Llama 2 7B on 8-64 A100
    # (-19% to -5%), a generic NeMo 25.04 config on 8 H100 (+32% to +35%), BioNeMo's Llama 3.1 on B200 (-27% to +20%)
    # (MegaScale-MoE tightened from 0.545 / 0.99 once session 48 split the Megatron-LM baseline's experts over TP)
    ("heldout96-fp8lm", 0.21, 0.28), ("heldout96-megascale-moe", 0.503, 0.885),
    ("heldout96-fw-lambda-gb300-gptoss", 0.24, 0.415), ("heldout96-fw-together-dsv3-opt", 0.235, 0.245),
    ("heldout96-atorch-llama2", 0.152, 0.242), ("heldout96-marinfold-nemo", 0.32, 0.355),
    ("heldout96-bionemo-llama3", 0.19, 0.275),
    # set 97 (predicted at e0cac6b, merged unchanged): dgxc-benchmarking's NeMo 24.11 / 24.12 tables on 16-2,304 H100
    # (the model's step 3-10% short for the dense models, Grok-1 16-28% short), its MaxText Llama 3 70B table (the
    # model's step 19-21% long in BF16, 36-42% in FP8), MaxText's A3 Llama 2 7B (-10% to +11%), FlagPerf's ChatGLM3-6B
    # DeepSpeed run (+13%), OLMo-core's 32B (+4%, +11%). Session 52 priced the MaxText rows' stated cudnn_flash_te at
    # the vendor attention rate (xla-fsdp-te): the 70B table 11-27% long (was 19-42%), the A3 7B rows -3% to +19%
    # (was -10% to +11%); OLMo-core's stated fused loss (torchtitan-fsdp2-fused-loss) moves it by 0.3 points
    ("heldout97-dgxc2411", 0.09, 0.195), ("heldout97-dgxc2412", 0.055, 0.28),
    ("heldout97-dgxc-maxtext-llama3", 0.151, 0.252), ("heldout97-maxtext-a3-readme", 0.1, 0.19),
    ("heldout97-flagperf-chatglm3", 0.13, 0.13), ("heldout97-olmocore-readme-32b", 0.076, 0.113),
    # set 98 (predicted at aaa4a45, merged unchanged): Megatron-Kwai's H800 runs (+3% to +23%), PaddlePaddle's Llama /
    # Qwen / Baichuan 2 tables on 8 A100 on the Megatron stand-in (+10% to +54%), FlagPerf's DeepSpeed Baichuan2-13B on
    # 16 H800 without FlashAttention-2 (+55%, +92%), nanoGPT's GPT-2 124M on 8 A100 (step 22% short), Megatron-Bridge
    # threads' Qwen3-30B-A3B on 16 H100 (step 3% long to 48% short) and Llama 3.1 70B FSDP on 64 GB200 (+7%)
    ("heldout98-f-flagperf-baichuan2", 0.735, 0.92), ("heldout98-f-flagperf-paddle", 0.265, 0.545),
    ("heldout98-f-paddlenlp", 0.145, 0.305), ("heldout98-i-megatron-bridge-1976", 0.075, 0.075),
    ("heldout98-i-megatron-bridge-3862", 0.14, 0.14), ("heldout98-i-megatron-bridge-3880", 0.48, 0.48),
    ("heldout98-i-megatron-bridge-5094", 0.175, 0.23), ("heldout98-i-megatron-bridge-949", 0.03, 0.03),
    ("heldout98-i-nanogpt-110", 0.012, 0.012), ("heldout98-p-megatron-kwai", 0.078, 0.215),
    # set 99 (predicted at 43e3370; merged with issue 658's rows on Pai-Megatron-Patch's stack and its MoE-module
    # recompute searched, and the DistFlashAttn TP 16 rows priced since stated TP may span nodes): Crusoe's torchtitan
    # Llama 3.1 8B on 8-128 H100 / H200 / B200 / GB200 (-11% to +6%), torchtune's 3B on one A100 (-10% to +3%), the
    # LLaMA paper's 65B (+3%), DistFlashAttn's Megatron-LM baselines (2-21% short on one node; TP 16 over two nodes
    # joined by 100 Gb/s 42-72% long), Megatron-Bridge's and prime-rl's Qwen3-235B on GB200 / GB300 / B300 (26-37% slow;
    # prime-rl masks attention per packed document), AWS's Megatron-Bridge MoE runs on EFA (steps 2.5-5.9x the model's)
    # and Qwen3-8B (11-19% short), Pai-Megatron-Patch issue 658's Qwen3-235B on 256 H800 (-5% to +20% in step time)
    ("heldout99-f-crusoe-titan", 0.035, 0.115), ("heldout99-f-mbridge-card-q235", 0.05, 0.06),
    ("heldout99-f-primerl-perf", 0.295, 0.345), ("heldout99-f-torchtune", 0.095, 0.105),
    ("heldout99-i-aws-dsv3-b300", 0.7, 0.72), ("heldout99-i-aws-kimik2-b300", 0.685, 0.729),
    ("heldout99-i-aws-qwen3-235b-b300", 0.642, 0.743), ("heldout99-i-aws-qwen3-30b-h100", 0.702, 0.831),
    ("heldout99-i-aws-qwen3-8b", 0.15, 0.19), ("heldout99-i-pai658", 0.13, 0.2),
    ("heldout99-p-distflashattn", 0.21, 0.72), ("heldout99-p-llama1-65b", 0.035, 0.035),
    # set 100 (predicted at 5e186b4; merged with the LAER-MoE, VectorLM, Scicom and Megatron-Bridge PR 4330 rows on the
    # stacks their launch scripts and configs state): the LAER-MoE artifact's Megatron-LM baseline on 32 A100 under real
    # routing with a weak auxiliary loss (the model's step 41-57% short: the paper's own profile finds severe expert
    # imbalance and all-to-all time above 40% of the iteration, where the book's central load factor is 1.1), NeMo-RL
    # issue 966's Qwen3-30B-A3B SFT on 32 H200 (unpacked 4k 59% short; 32k packed 2.3x long, its documents' attention
    # not the full 32k causal square), torchtitan issue 1207's Llama 3 8B on 4 H100 (+39%, +80%), PR 4330's DeepSeek-V3
    # on 256 GB300 (+13%), Together's GB200 rack-readiness runs (37-41% short, as set 25's runs of the same jobs),
    # VectorLM's Llama 3 8B on 1-4 A100 (-7% to -18%), Hugging Face's Granite-7B FSDP / ZeRO-3 (+11%, +14%) and
    # Scicom's Qwen3-0.6B DDP on 4 H100 / H200 (-23%, -16%)
    ("heldout100-a-laer-moe", 0.525, 0.57), ("heldout100-b-mb4330", 0.13, 0.13),
    ("heldout100-b-nemorl966", 0.96, 1.32), ("heldout100-b-titan1207", 0.595, 0.8),
    ("heldout100-c-together-gb200-r01", 0.215, 0.394), ("heldout100-c-together-gb200-r07", 0.288, 0.41),
    ("heldout100-d-hf-ds-fsdp-blog", 0.13, 0.14), ("heldout100-d-scicom-ablation", 0.195, 0.23),
    ("heldout100-d-vectorlm", 0.105, 0.185),
    # set 101 (predicted at 4186aef; merged with the Paxml rows on xla-2023-noflash, the README's "reported without
    # flash attention"): NeMo AutoModel's Megatron-FSDP / FSDP2 Llama 3.1 70B on 64 H100 (1-11%), Megatron-LM's
    # Llama 3 8B FP8 analysis on 8 H200 (6-9% short), Megatron-Bridge's Qwen3-235B / DeepSeek-V3 threads on B200 / B300
    # (1-18%), Megatron-LM's DeepSeek-V3 proxy on 64 H100 (9-34% short: the expert-overlap arm), AWS's Kimi-K2 on 256
    # B200 over EFA (47-70% short, as set 99's AWS rows), Megatron-FSDP v1 / v2's Qwen3-30B-A3B on 8 GB200 (+97%,
    # +110%), a DeepSeek-V2-Lite Megatron-LM repo on 8 H100 (41% short: 32 local experts per rank), MPT-7B's and
    # StableLM-3B's model-card run averages (+55%, -10%), Paxml's 2023 GPT runs on A100 (+33% to +71% without flash
    # attention), Marin's grug MoE (0-26%), MarinFold's Levanter run (47% short), LitGPT / Thunder rows (2-12%);
    # StableLM-3B on gpt-neox-2023-fa2 since session 52 (its note's FlashAttention-2 and overlapped ZeRO-1): -10% -> +15%;
    # AutoModel's FSDP2 70B row on automodel-te-eager (its no_compile): +11% -> +20%
    ("heldout101-a-automodel-mfsdp-70b-cp2", 0.025, 0.025), ("heldout101-a-automodel-mfsdp-70b-eos", 0.016, 0.016),
    ("heldout101-a-automodel-mfsdp-70b-flags", 0.03, 0.03), ("heldout101-a-automodel-mfsdp-70b-noflag", 0.115, 0.198),
    ("heldout101-a-automodel-mfsdp-qwen3", 0.17, 0.17), ("heldout101-a-megatron-dsv2lite", 0.41, 0.41),
    ("heldout101-a-mpt7b-modelcard", 0.555, 0.555), ("heldout101-a-stablelm-3b-4e1t", 0.149, 0.149),
    ("heldout101-b-mbridge-issue3385", 0.146, 0.182), ("heldout101-b-mbridge-pr1760", 0.116, 0.168),
    ("heldout101-b-mlm-pr6311", 0.158, 0.158), ("heldout101-b-mlm-pr6429", 0.218, 0.344),
    ("heldout101-c-aws-kimik2-b200-2608", 0.545, 0.704), ("heldout101-c-deepspeed-azure-2022", 0.017, 0.017),
    ("heldout101-c-dgxc-qwen3-pretrain-example", 0.087, 0.087),
    ("heldout101-c-mlm-llama3-8b-h200-fp8-analysis", 0.08, 0.095),
    ("heldout101-c-mlm-mfsdp2-qwen3-30b-gb200", 1.035, 1.098), ("heldout101-d-litgpt-thunder-readme", 0.046, 0.07),
    ("heldout101-d-marin-grug-h100", 0.265, 0.39), ("heldout101-d-marinfold-exp108-levanter", 0.473, 0.473),
    ("heldout101-d-paxml-gpu-readme", 0.327, 0.712), ("heldout101-d-thunder-issue1364", 0.12, 0.12),
    # set 27, bounded at its error after session 23's BF16 gradient buffer (blind: 15.9% / 57%, 20.5% / 51%).
    # Megatron-Bridge 26.02 / 25.11 cells, blind: Llama 3 70B and Llama 3.1 405B FP8 on
    # 64-256 GB200 / GB300 9-24% short (H100 70B -2%); Qwen3-30B-A3B on 8 B200 / B300 / GB200 / GB300 16-51% fast,
    # GPT-OSS 120B BF16 on 64 GB300 / H100 42-57% fast, Qwen3-235B 5% (GB300) and 37% (H100) fast, DeepSeek-V3 12-13%
    ("heldout27-mbridge-2602", 0.14, 0.52), ("heldout27-mbridge-2511", 0.11, 0.38),
    # set 28, merged at its blind error: MLPerf Training v3.0 (the first FP8 round) and v3.1 GPT-3 175B logs on 512 /
    # 768 H100 18% / 11% short, 6,144 and Azure's 10,752 H100 7% short; the Megatron Core MoE report's DeepSeek-V3 on
    # 256 GB300 / GB200 MXFP8 +15% / +6%, GB200 BF16 -13%, 1,024 H100 blockwise FP8 +35%, Qwen3-235B on 256 H100 +12%
    ("heldout28-mlperf30-gpt3", 0.19, 0.19), ("heldout28-mlperf31-gpt3", 0.11, 0.11),
    ("heldout28-mlperf31-gpt3-azure", 0.015, 0.015), ("heldout28-mcore-moe-report", 0.155, 0.36),
    # set 29, merged at its blind error: Supermicro's MLPerf v6.0 logs, Llama 3.1 8B NVFP4 on 8 B300 +4% and 72 GB300
    # -6%, gpt-oss-20b MXFP8 on 8 B300 -8% (other submitters' rows of the same cells are in sets 21-26)
    ("heldout29-mlperf60-supermicro", 0.07, 0.096),
    # set 30, merged at its blind error: InternLM's InternLM-7B on 8-1,024 A100 (4 x 100 Gb RoCE per node), +4% to
    # +12% on 8-128 GPUs; on 1,024 with one micro-batch per step +31% / +65%, its optimizer sharded over all 1,024
    # ranks +57% / +92% (the data-parallel exchange the model hides behind backward is exposed in the run)
    ("heldout30-internlm-perf", 0.185, 0.885),
    # set 31, merged at its blind error: NeMo 24.07's unused H100 FP8 cells (Nemotron-3 8B on 64 GPUs +20%, 22B +8%;
    # Llama 2 7B / 13B / 70B SFT on 8-16 GPUs +5%, -10%, +7%), Oracle's MLPerf v5.1 Llama 3.1 8B on 8 B200 (+1%) and
    # HPE's v6.0 Llama 3.1 8B / gpt-oss-20b on 8 GB300 (+6% / -4%)
    ("heldout31-nemo2407-unused-cells", 0.065, 0.195), ("heldout31-mlperf51-oracle-b200x8", 0.084, 0.084),
    ("heldout31-mlperf60-hpe-gb300x8", 0.05, 0.075),
    # set 32, merged at its blind error: Megatron-Bridge's model-verification cards, the tuned benchmarks (Qwen3-30B-A3B
    # on 16 H100 +25%, on 32-256 GB300 -15%; DeepSeek-V3 on 1,024 H100 -12%) and the functional runs the cards call
    # sanity checks (natural routing, packed SFT, 32k sequences with context parallelism and full recompute: -0% to
    # +1,868%, the model has no term for what slows them); BigScience's BLOOM-176B reshaping restarts (iteration
    # time -2% to +27% long), LLM Foundry's MPT on 64 H100 (+16% to +23%) and 32-128 A100 (-7% to +7%), MaxText's
    # Llama 2 7B on 8 H100 (step 13% long). Session 38's expert tensor parallelism (experts split over TP where ep is 1,
    # in memory and in the grouped GEMMs) lets the search pick EP1 TP layouts for the functional GPT-OSS 20B runs:
    # median 2.63 -> 2.73
    ("heldout32-mbv-tuned", 0.04, 0.245), ("heldout32-mbv-functional", 2.895, 17.955),
    ("heldout32-bigscience-tr11-reshaping", 0.18, 0.305), ("heldout32-llm-foundry-scale", 0.07, 0.205),
    ("heldout32-jaxtoolbox-maxtext", 0.14, 0.14),
    # set 33, merged at its blind error: Megatron-Bridge's early 25.11 layouts (GPT-OSS 120B BF16 EP64 on 64 GB200 /
    # GB300 +62% / +48%, Llama 3.1 405B MXFP8 TP4 PP8 CP2 +27% / +30%), 25.09 (-8% to +27%), 25.11's FP8-MX values
    # (-2% to +10%), 26.02.01's NVFP4 70B (-9%); NeMo 24.03's Llama 2 7B FP8 long-sequence cells on 4-512 H100 +10% to
    # +32% (as set 7's cells of the same table); MLPerf v5.1 Llama 3.1 8B logs on 8-32 B200 / B300 (iteration time
    # -13% to +3%)
    ("heldout33-mbridge-2511-early", 0.175, 0.565), ("heldout33-mbridge-2509", 0.085, 0.27),
    ("heldout33-mbridge-2511-mx", 0.08, 0.11), ("heldout33-mbridge-260201", 0.10, 0.10),
    ("heldout33-nemo-longseq", 0.095, 0.2), ("heldout33-mlperf-train", 0.04, 0.13),
    # set 34, merged at its blind error: Dell's MLPerf Training v6.0 logs, Llama 3.1 8B NVFP4 on 8 B200 / B300 and 4 / 16
    # GB300 (iteration time -1% to +7% long), gpt-oss-20b MXFP8 on 4 GB300 (11% short)
    ("heldout34-mlperf-train", 0.075, 0.115),
    # set 35, merged at its blind error: Megatron-Bridge 26.02.01's 405B NVFP4 on 256 GB200 at VP4 (19% short), the
    # ModelZoo's Qwen3-235B on 256 H100 with the 1F1B all-to-all overlap (iteration 22% short)
    ("heldout35-mbridge-260201", 0.20, 0.20), ("heldout35-moe-modelzoo-overlap", 0.23, 0.23),
    # set 37, merged at its blind error: MLPerf Training v6.0 single-node logs (gpt-oss-20b on 8 B300 9-10% short,
    # Llama 3.1 8B on 8 B200 5% long)
    ("heldout37-mlperf-train", 0.09, 0.11),
    # set 39, merged at its blind error: MLPerf v6.0 Llama 3.1 8B NVFP4 on 8-72 GB300 (-6% to +7%; +8% at most with
    # the bucket tail below), Modalities' FSDP tables on A100 64GB (-16% to +15%) and H100 64GB (+19% to +37%),
    # OLMo-core's H100 table (+11% to +47%)
    ("heldout39-mlperf-train", 0.055, 0.1), ("heldout39-modalities-leonardo-a100", 0.13, 0.185),
    ("heldout39-modalities-mn5-h100", 0.26, 0.37), ("heldout39-olmocore-readme", 0.125, 0.305),
    # set 40, merged at its blind error: MLPerf v6.0 gpt-oss-20b MXFP8 on 72 GB300 / 8 B200 / 8 B300 (iteration 9-19%
    # short) and Llama 3.1 8B FP8 on 8 H200 NVL (18% / 27% short)
    ("heldout40-mlperf-train", 0.18, 0.28),
    # set 41: NeMo AutoModel's DeepEP / HybridEP Qwen3-30B-A3B runs on 8-16 H100 (blind +36% to +71% in iteration time;
    # +20% to +55% since the rows run AutoModel's Transformer Engine attention, stack automodel-te) and Supermicro's
    # MLPerf v6.0 logs (Llama 3.1 8B NVFP4 on 8 B200 +7%; gpt-oss-20b on 8 B200 / 72 GB300 16% / 20% short)
    ("heldout41-automodel-hybridep", 0.4, 0.6), ("heldout41-mlperf60-supermicro", 0.17, 0.20),
    # set 42, merged at its blind error: Supermicro's MLPerf v6.0 Llama 3.1 8B NVFP4 on 8 B300 / B200 (+4% to +7%) and
    # gpt-oss-20b on 8 B300 (8% short); GigaComputing's gpt-oss-20b on 72 GB300, layout not stated (41% short)
    ("heldout42-mlperf60-supermicro", 0.07, 0.094), ("heldout42-mlperf60-gigacomputing", 0.385, 0.385),
    # set 43, merged at its blind error: Nebius' MLPerf v6.0 Llama 3.1 8B NVFP4 and gpt-oss-20b MXFP8 on 8 B300, 2x4 and
    # 72 GB300 (-20% to +5%), GigaComputing's 8B on 8 B300 (-1%), Cisco's gpt-oss-20b FP8 on 64 H100 (34% short)
    ("heldout43-mlperf60-nebius", 0.06, 0.20), ("heldout43-mlperf60-gigacomputing", 0.02, 0.02),
    ("heldout43-mlperf60-cisco", 0.32, 0.32),
    # set 44, merged at its blind error: nanotron's Ultra-Scale Playbook sweep on 8-512 H100 (tokens/s -1% to +31%; the
    # 80B rows +19% to +51% and 3.0x on 32 GPUs; the 1.34B / 3.57B rows on 512 GPUs 3.9x / 2.8x)
    # (session 40: nanotron's fp32 gradient buckets reduced in backward and its parameter gather after the step, 0.19 ->
    # 0.187 / 2.88 -> 2.81)
    # (session 50: nanotron's eager SwiGLU and attention layout copies, 9.3% / 2.47x -> 6.4% / 2.25x)
    ("heldout44-nanotron-playbook", 0.07, 2.26),
    # set 46, merged at its blind error: MLPerf v4.0 GPT-3 175B step times on 512 / 11,616 H100 (+5% / +3%), NeMo
    # AutoModel's Llama 3.1 70B on 64 H100 (17% short), Megatron-Bridge's Qwen3-8B card (pretraining +7%, its
    # functional SFT items 3.8x / 13x: 102 and 34 model TFLOP/s/GPU measured, "sanity checks" in the card's words)
    ("heldout46-mlperf40-gpt3-steptime", 0.085, 0.115), ("heldout46-automodel-llama70b", 0.23, 0.23),
    ("heldout46-mbv-qwen3-8b", 3.765, 12.8),
    # set 49, merged at its blind error: Lambda's GPT-3 175B on 128 H100 (12% short), HPE's 405B NVFP4 on one GB300 rack
    # at GBS 144 (+5%)
    ("heldout49-mlperf40-lambda-gpt3", 0.12, 0.12), ("heldout49-mlperf60-hpe-405b-reduced-gbs", 0.269, 0.269),
    # set 50, merged at its blind error: MegaScale's Megatron-LM baselines, Megatron-LM's README GPT-3 example and the
    # Zero Bubble paper's 1F1B baseline (10-18% short until session 40 priced the split it states, the embedding and the
    # loss a layer each: +6% to +12%)
    ("heldout50-megascale", 0.08, 0.14), ("heldout50-megatron-readme-gpt3", 0.1, 0.1),
    ("heldout50-zero-bubble", 0.1, 0.125),
    # set 52, merged at its blind error: the FlashAttention papers' GPT runs on 8 A100 (FlashAttention-1 cells and
    # whole-run days are the misses), the flash-attn repository's GPT-2 step times, Megatron-LLaMA's LLaMA-13B
    ("heldout52-flashattn2-paper", 0.055, 0.07), ("heldout52-flashattn1-gpt2-owt", 0.3, 0.355),
    # (Megatron-LLaMA's Hugging Face / DeepSpeed baseline runs eager since session 39: +44% -> +31%)
    ("heldout52-flashattn-owt-steptime", 0.03, 0.045), ("heldout52-megatron-llama", 0.12, 0.315),
    # set 54, merged at its blind error: Megatron-Core's MoE README, Mixtral 8x7B on 64 H100
    ("heldout54-mcore-moe-readme", 0.038, 0.055),
    # set 56, merged at its blind error: the NeMo-Framework-Launcher README's GPT-3 5B / 175B scaling on A100 (its
    # 175B rows, batch and layout unstated, are the misses) and dgxc-benchmarking's PaxML GPT-3 5B on 16-128 H100
    # (on xla-fsdp-te since session 52, the NVTE_FUSED_ATTN=1 its notes state: the steps 20-25% short, were 16-20%)
    ("heldout56-nemo-launcher-a100", 0.085, 0.425), ("heldout56-dgxc-paxml-5b", 0.216, 0.252),
    # set 58, merged at its blind error: gpu-recipes NeMo logs on 8x B200 VMs (Qwen3-30B-A3B FP8 at EP8 the 2x miss)
    ("heldout58-gpurecipes-a4-custom", 0.145, 0.465), ("heldout58-yangwhale-a4-nemo", 0.15, 0.194),
    # set 60, merged at its blind error: Together AI's B200 worklogs (Nemotron-4 340B / 15B slower in the model)
    ("heldout60-together-b200-512", 0.14, 0.285), ("heldout60-together-b200-256", 0.215, 0.275),
    ("heldout60-together-b200-n4-15b", 0.15, 0.265), ("heldout60-together-b200-k8s", 0.335, 0.335),
    # set 62, merged at its blind error: MaxText log lines of gpu-recipes, SmolLM3's production run (nanotron on 384
    # H100: +19% until session 40 priced nanotron's own data-parallel traffic, +10%)
    ("heldout62-gpurecipes-maxtext", 0.085, 0.14), ("heldout62-smollm3", 0.015, 0.015),
    # set 64, merged at its blind error: the degrading B200 fabric's 405B row and the DeepSeek-V3 row without a layout
    # (+178%; +183% once session 38 split experts over TP at EP1, which the search then takes: TP8 PP8 EP1)
    ("heldout64-gpurecipes-a4-nemo1", 0.07, 0.075), ("heldout64-nebius-torchtitan-dsv3", 1.405, 1.405),
    ("heldout64-pytorch-float8-fsdp2", 0.031, 0.13), ("heldout64-together-flapping-256", 0.31, 0.335),
    ("heldout64-together-flapping-512", 0.14, 0.915), ("heldout64-together-k8s-llama8b", 0.045, 0.075),
    # set 67: whole-run averages from GPU-hours (Pythia, StarCoderBase) and papers' stated step time or utilisation;
    # BloombergGPT's SageMaker sharded data parallelism stands in as FSDP
    ("heldout67-pythia", 0.11, 0.26), ("heldout67-starcoder", 0.16, 0.16), ("heldout67-bloomberggpt", 0.425, 0.425),
    ("heldout67-glm130b", 0.17, 0.17),
    # session 56: the Alps GH200 rows at the cluster's 660 W module limit (swiss-ai's Megatron-LM PRs, the FOG paper)
    ("heldout102-b-swissai-pr29", 0.12, 0.12), ("heldout102-b-swissai-pr33", 0.05, 0.06),
    ("heldout104-a-swissai-pr10", 0.01, 0.01), ("heldout105-c-fog-fp8-gh200", 0.10, 0.21),
    # set 105 as first predicted: Olmo 3 within 8%, Google Cloud's NeMo recipes, COAT's FSDP baselines (max-batch runs)
    ("heldout105-d-olmo3-table34", 0.07, 0.075), ("heldout105-b-gcp-gpurecipes-nemo-dllogger", 0.09, 0.21),
    ("heldout105-c-coat-fp8-h100", 0.29, 1.07)])
# Session 31: the data-parallel bucket tail (communication.bucket_tail_s: Megatron-Core's last gradient bucket, the
# one holding the input embedding, is reduced after backward ends and gathered before the next forward starts)
# lengthens every overlapped ZeRO-0/1/2 step by that bucket's collectives. 73 cases moved closer and 15 further (by at
# most 2 points); HPE's MLPerf v6.0 8B rows on 16 B200 / GB300 and 8 GB300 were already long (+7.5% -> +8.2%,
# +5.5% -> +6.2%) and their max bounds moved with them.
# The non-GEMM kernel floors (compute.kernel_floors_s, session 12) lengthen every step a little: five groups whose
# step the model already put a few per cent long moved by 0.5-1 point (set 9's DeepSeek-V3, CoreWeave's, HPE's,
# Megatron-Bridge 26.08's, MLPerf v4.1's GPT-3) and their bounds with them; the strong-scaling misses they target
# shrank (MLPerf v6.0 8B on 1,024 GB200 64% -> 62% short, Lambda's 72 GB300 21% -> 19%) and are bounded tighter.
# The wait for the slowest GPU (pipeline.slowest_gpu_s, session 15: a 1.5% chip-to-chip spread of the sustained clock,
# the step paced by the slowest of its N GPUs) lengthens a step on 8 or more GPUs by 2-4% of its GEMM and attention
# time (0.9% on 2, 1.6% on 4). Most groups were short in the model and improved; their bounds were tightened to the
# new errors. Groups the model already put within a few per cent or slow moved the other way and their bounds with
# them: MLPerf's 405B on CoreWeave GB200 (+0.6% -> +2.6%), GPT-3 on 10,752 H100 (+0.8% -> +2.9%), Supermicro's 8 B200
# (+0.1% -> +1.8%), Llama 3 405B production on 8-16k H100 (-1% / 0% / -3% -> -4% / -3% / -6% in tokens/s), BLOOM
# (+1% -> -2%), DeepSeek-V3's 2,048 H800 (-9% -> -12%), fms-fsdp (-5% -> -8%); and, by up to 3-5 points at the max,
# DGX Cloud's MaxText, Megatron-Bridge 25.11, ModelZoo's long-context Qwen3 (.18 -> .21), MLPerf v6.0 DeepSeek-V3
# (median .14 -> .17) and 405B (.17 -> .21), CoreWeave's DeepSeek-V3 (.06 -> .08), HPE's B200 / GB300 rows, Megatron-
# Bridge 26.08 and its point releases, MLPerf v4.1 GPT-3 (.07 -> .10) and KempnerForge at scale (.18 -> .22).
# Session 36: Megatron-Core's dispatchers make two passes over the routed rows to group them by local expert and back
# (compute.permute_s, Stack.moe_expert_sort; not under HybridEP: mbridge-2026-a2a-overlap, mlperf-2026-moe): the
# Megatron-Bridge Qwen3-30B-A3B and GPT-OSS groups came 3-10 points closer (bounds tightened); groups the model already
# put slow moved away (Megatron-Bridge 26.08 .12 -> .20, the verification cards' tuned items .15 -> .23, ModelZoo's
# Qwen3-235B .08 -> .12) and their bounds with them.
# Session 33: rows whose Megatron-Bridge recipe states the plain all-to-all dispatcher (no DeepEP dedup across nodes)
# moved to the stacks mbridge-2026-alltoall / -fp8cs-alltoall; Qwen3-235B FP8-CS on 256 H100 (megatron-bridge,
# heldout26, heldout27) and GPT-OSS 120B at EP64 on 64 B200 / B300 (heldout7) came closer and their bounds with them.
# Session 40: PyTorch FSDP's own copies through HBM on the compute stream (communication.fsdp_copy_s; FSDP2 copies the
# gathered buffer out to every parameter at both unshards and the gradients into the fp32 reduce-scatter input, 14 bytes
# per parameter and micro-batch; FSDP1's flat parameter only concatenates the gradients, 4 bytes). Rows whose sources
# state FSDP1 moved to the stacks fsdp1 / fsdp1-eager, MaxText / Pax rows to xla-fsdp (no copies). 86 cases moved
# closer and 42 further: torch-native rows the model put fast came closer (OLMo-core 13B +28% -> +17%, AutoModel's
# Llama 3 70B +20% -> +10%, torchao's Llama 3 8B +33% -> +28%); those it put slow moved away and their bounds with them
# (torchtitan's A100 page -2..-6% -> -4..-8%, KempnerForge's H200 rows, AutoModel's tuned 70B -17% -> -23%, Modalities
# on Leonardo A100).
# Session 43: torchtitan's separate Q / K / V / output and gate / up projections (Stack.fused_projections False on
# the FSDP2 preset and the stacks built on it; FSDP1's, LLM Foundry's and flash-attn's stand-ins fuse them) moved 165
# runs, 102 closer and 63 further; four bounds moved with them (torchtitan's Dec-2024 H100 page 8.4% -> 8.9%, the
# JAX-Toolbox MaxText row 12.9% -> 13.1%, AutoModel's HybridEP Qwen3-30B rows 36.8% -> 37.9%, IBM / Meta's float8
# FSDP2 rows 3.00% -> 3.001%).
# Session 47: the loss's traffic over the logits (compute.loss_s: 52 bytes per vocabulary entry for Megatron's unfused
# vocab-parallel cross entropy, 40 for its compiled fusion, 64 / 26 for PyTorch's on fp32 / BF16 logits, 10 for a
# single-pass fused kernel, checked against Liger-Kernel's H100 NVL timings) and nanotron's compute-cost pipeline split
# (Stack.cost_balanced_split). Stacks state their loss: Megatron-Bridge's recipes Transformer Engine's fused kernel,
# NeMo 2024 the compiled fusion, Megatron-LM without the flag and nanotron the unfused chain; rows whose notes state a
# fused kernel (flash-attn's and llm.c's training code, TinyLlama) or a non-fused loss moved to stacks that say so.
# Narrow models with wide vocabularies moved most: nanotron's sweep (21.6% -> 15.3% median) and playbook rows (18.7% ->
# 15.1%), Pythia (14.9% -> 10.5%), FlashAttention's GPT-2 rows (38.5% -> 29.6%); Megatron-Core rows with large
# vocabularies slowed by 1-4 points (MoE Parallel Folding's Qwen2-57B rows: median 7.6% -> 11%; Zero Bubble's 1.5B
# PP8 rows, whose last stage carries the head, +6% -> -11%), and DeepSeek-V3's H800 row from -11.7% to -16.3% (its
# stack keeps the unfused loss: DeepSeek's report does not state its kernel).
def test_group_bounds(table, group, median, worst):
    g = table[table.group == group]
    assert len(g) > 0
    assert g.error.abs().median() <= median and g.error.abs().max() <= worst


def test_megatron_bridge_recipes_keep_bf16_gradients(monkeypatch):
    """Megatron-Bridge's performance recipes set grad_reduce_in_fp32=False: the validation stacks named for them hold
    2-byte gradients where Megatron-Core's default buffer is FP32, and nothing else about them changes. On the
    405B FP8-CS cell on 256 GB200 (TP4 PP16 VP4, the recipe runs no recompute) the gradient memory halves and the
    layout needs less recompute than with the FP32 buffer."""
    for name in ("mbridge-2026", "mbridge-2026-fp8cs", "mbridge-2026-actoffload", "mbridge-2026-a2a-overlap"):
        assert validation.STACKS[name].grad_bytes == 2.0
    assert validation.STACKS["nemo-2024"].grad_bytes == 4.0
    case = next(c for c in validation.runs() if c["id"] == "heldout26-mb2604-gb200-llama31-405b-fp8cs-256-tp4pp16vp4")
    _, bf16 = validation.predict(case)
    monkeypatch.setitem(validation.STACKS, "_fp32-grads", replace(validation.STACKS[case["stack"]], grad_bytes=4.0))
    _, fp32 = validation.predict({**case, "stack": "_fp32-grads"})
    g16, g32 = bf16.memory_breakdown_bytes["gradients"], fp32.memory_breakdown_bytes["gradients"]
    assert g16 == pytest.approx(g32 / 2)
    assert bf16.memory_breakdown_bytes["weights"] == pytest.approx(fp32.memory_breakdown_bytes["weights"])
    assert bf16.step_time_s < fp32.step_time_s          # less recompute fits


def test_runs_that_ran_are_not_refused(table):
    """Issue 12: torchtitan's Llama 3.1 8B with per-op selective AC at local batch 2 ran on 8 and 128
    H100 (62-82 GiB reserved) and fits. Runs the memory model puts over the usable device memory because their
    framework saves memory it does not count (NeMo AutoModel's BF16 Qwen3-30B-A3B on 8 H100 and Kimi-K2 on 256
    H100, issue 12's "refused though they ran") are predicted as stated layouts within the tolerance, flagged,
    and not refused. GPT-OSS 120B BF16 on 64 H100 and MPT-7B on 8 A100 fit since capacity is the driver's total
    (85.5 / 85.9 GB, not the datasheet's 80). LLM Foundry's MPT-30B at 8k sequence on 8 H100 (FSDP) fits since
    session 25: FSDP's fp32 parameter shard is the optimizer's master copy, with no BF16 shard beside it
    (``Stack.sharded_master_params``). LLM Foundry's MPT-3B in FP8 at 8k sequence on 8 H100, MPT-1B at micro-batch 20
    on 64 H100 and MPT-3B at micro-batch 6 on 128 A100-40GB fit since session 27: MPT trains without dropout and
    with a fused cross entropy (stack ``llm-foundry-2023``: ``Stack.dropout_masks``, ``fused_cross_entropy``). Of the
    eleven flagged at session 34's start, seven fit since (pure-BF16 model states, below); four remain, and sets 58,
    62, 77 and 81 added four, and set 81's fits since session 47 (llm.c's fused classifier); set 95 added three and
    set 98 two and set 99 three (torchtune's BF16 single-GPU fine-tune) and set 100 three (VectorLM's on one A100)
    and set 101 one (Thunder's Phi-3-mini on one H100) and set 102 one (NeMo 24.12's Llama 2 70B SFT on 16 H100, as
    24.07's) and set 104 two (nanochat's d20 speedruns on 8 H100). None
    is refused: set 86's GPT-OSS-20B at 24 x 8,192 tokens per GB300 with selective recompute (Lambda's torchtitan
    fork) was, at 678 GB, until session 44: the stock gpt_oss_20b entry its rows name chunks the loss (ChunkedCELoss)
    and per-op selective AC keeps none of the grouped-GEMM experts' outputs, 158 GB (the fork prints 70.8% of the
    GPU's memory). Set 92 came with eight refused, none since: Lambda's GPT-OSS-120B sweep on 8 B200 states
    ``training.dtype=bfloat16`` (torchtitan keeps parameters, gradients and AdamW moments in BF16, no fp32 master:
    251-299 GB with fp32 states, 135-175 GB in BF16), and its DeepEP Qwen3-30B-A3B run keeps DeepEP's dispatch output,
    one row per destination rank (5.25 of the 8 routed copies at EP 8) and one combined row, where the standard
    all-to-all keeps eight each way, and chunks the loss its notes state (242 GB as collected, 149 GB); three of the
    sweep's eager runs, flagged as over the memory as collected, fit with that chunked loss."""
    assert not (table.refused != "").any()
    assert set(table.case[~table.memory_fits]) == {
        # set 8: MLPerf v5.0's Llama 3.1 405B on 512 H100 (8 layers per stage, 8 in flight); Megatron-LM's
        # DeepSeek-V3 on 256 GB200 fits since session 23's BF16 gradient buffer
        "mlperf50-h100-llama31-405b-fp8-512",
        # set 22: MLPerf v5.0's 405B on 512 / 1,024 H200 (TP4 PP8 CP2 VP8), as the 512-H100 run above; their logs
        # print 105-109 GB where the model counts 148-152 GB (data/runs/training_memory.csv)
        "heldout22-mlperf50-nebius-h200-llama31-405b-fp8-512",
        "heldout22-mlperf50-nebius-h200-llama31-405b-fp8-1024",
        # set 31: NeMo 24.07's Llama 2 70B full SFT on 16 H100 (TP4 PP4, no data parallelism to shard the Adam
        # states over; the table states no recompute or offload)
        "nemo2407-llama2-70b-sft-h100-16",
        # set 58: Qwen2.5-32B BF16 on 16 B200 at PP2, micro-batch 1, no recompute: 187.6 GB in the model (weights
        # 32.8, FP32 gradient buffer 65.5, Adam shards 24.6, activations 64.7); its NeMo 1.x config runs Apex's
        # distributed fused Adam, whose gradient buckets the nemo-2024 stack counts at 4 bytes
        "heldout58-gpurecipes-b200-qwen25-32b-bf16-16-tp1pp2vp32-mbs1",
        # set 62: MaxText's Llama 3.1 70B FP8 on 256 B200, pure FSDP at micro-batch 8 x 8,192 with full remat: 179 GB in
        # the model, 171 GB of it activations (the layer inputs of 65,536 tokens, one layer's recompute and the FP32
        # logits), which XLA's buffer planning packs tighter than the stack's eager-PyTorch accounting
        "heldout62-gpurecipes-a4-maxtext-llama31-70b-b200-256-fp8",
        # set 77: BigScience's 181B candidate at TP8 PP2 DP24 on 384 A100, 83.2 GB in the model: the deepspeed-2021
        # stack keeps BLOOM's bf16 run's FP32 gradients (45.3 GB here), where this fp16 benchmark's DeepSpeed ZeRO-1
        # kept them in fp16 (the row records fp16 as bf16, the same A100 rate)
        "heldout77-bs-tr11-200bpre-181b-02-25-tp8pp2dp24-mbs2-gbs2016",
        # (set 81's llm.c GPT-2 350M at micro-batch 64 x 1,024 on A100-80GB fits since session 47: its rows run on the
        # stack llm-c-2024, whose fused classifier keeps the BF16 logits and writes their gradient in place, where
        # the stand-in stack stored FP32 logits and their gradient)
        # set 95: NeMo-Framework-Launcher's Llama 2 70B full SFT on 16 H100 from the 24.05 and early-2024 tables (the
        # same layout as set 31's 24.07 row above); the Vocabulary Parallelism paper's 1F1B baseline of its 21B model
        # on 32 A100 at 4,096 tokens and a 256k vocabulary, whose last stage holds the whole output layer and its
        # logits (the paper names that stage's memory as the baseline's problem)
        "heldout95-fw-nl2405-llama2-70b-sft-h100-16", "heldout95-fw-nlea-llama2-70b-sft-h100-16",
        "heldout95-vocabpar-1f1b-21b-pp32-s4096-v256k",
        # (set 86's GPT-OSS-20B on 64 GB300 at 7 and 24 x 8,192 tokens fit since session 44: the chunked loss of the
        # stock gpt_oss_20b entry, 206 / 158 GB in the model against 277 usable)
        # set 98: FlagPerf's Baichuan2-13B with DeepSpeed ZeRO-1 and full recompute on 16 H800 (77 of 80 GiB as
        # printed; 97 GB in the model): the torch-native stand-in keeps an unsharded fp32 gradient buffer (56 GB)
        "heldout98-f-flagperf-baichuan2-13b-h800-16-zero1-gas8",
        "heldout98-f-flagperf-baichuan2-13b-h800-16-zero1-gas64",
        # set 99: torchtune's Llama 3.2 3B full fine-tune on one A100 at 2 x 4,096 packed tokens without activation
        # checkpointing: torchtune's single-device recipe trains in BF16 (no fp32 master), where the stand-in stack
        # counts fp32 model states on one unsharded GPU
        "heldout99-f-torchtune-3b-packed", "heldout99-f-torchtune-3b-compile", "heldout99-f-torchtune-3b-chunkce",
        # set 100: VectorLM's Llama 3 8B full fine-tune on one A100 (FSDP at world size 1, the model and AdamW in BF16):
        # 8B parameters x (2 + 2 + 6) bytes of BF16 model states already fill the 80 GB before activations
        "heldout100-d-vectorlm-l3-8b-a100x1-s2048", "heldout100-d-vectorlm-l3-8b-a100x1-s4096",
        "heldout100-d-vectorlm-l3-8b-a100x1-s8192",
        # set 101: lightning-thunder issue 1364's Phi-3-mini (3.8B) in FP8 on one H100 through Thunder: the stand-in
        # stack counts fp32 master weights and AdamW moments unsharded on one GPU (61 GB) before activations
        "heldout101-d-thunder1364-phi3mini-h100x1-fp8",
        # set 102: NeMo 24.12's re-measurement of the NeMo 24.07 Llama 2 70B SFT row above (TP 4 PP 4 on 16 H100, DP 1:
        # no optimizer sharding), flagged as that row is
        "heldout102-c-nemo2412-llama2-70b-sft-h100-16",
        # set 97 at session 55: MaxText's Llama 3 70B at 2 x 8,192 tokens per GPU on 128 H100 with
        # remat_policy=save_qkv_proj: 82 GB in the model once the kept Q / K / V outputs (26.8 GB) are counted; 21 GB of
        # it is the FP32 logits and one layer's recompute, which XLA's buffer planning packs tighter (as set 62's row)
        "heldout97-dgxc-maxtext-llama3-70b-h100-128-bf16", "heldout97-dgxc-maxtext-llama3-70b-h100-128-fp8",
        # set 25 at session 55: Paxml's GPT-3 175B in FP8 on 128 H100 (FSDP 128, 2 x 2,048 tokens) with
        # SAVE_QKV_OUT_PROJ: 80.8 GB in the model once the kept attention-projection outputs (38.7 GB) are counted
        "heldout25-dgxcpax-gpt3-175b-h100x128-fp8-fsdp128-mbs2",
        # set 104: two nanochat d20 speedruns on 8 H100 at 32 x 2,048 tokens per GPU (65,536-entry vocabulary):
        # 95.6 GB in the model, 91 of it activations on the torchtitan stand-in, whose eager FP32 logits and their
        # gradient alone are 34 GB where nanochat's compiled step holds less
        "heldout104-d-nanochat-d20-h100x8-royam0820", "heldout104-d-nanochat-d20-h100x8-mileswangs",
        }
    # Session 34: NeMo AutoModel's MoE models (Qwen3-30B-A3B on 8 H100, Kimi K2 on 256 H100, GPT-OSS 20B / 120B) and
    # KempnerForge (Llama 3 8B on one H200, which reports 80.7 GiB allocated where the model now counts 77 GB) build
    # their models in BF16 and step them in place: 8 bytes of model state per parameter, not 16 (stacks
    # automodel-te / automodel-flex / kempnerforge-fsdp2), and they fit
    assert table.set_index("case").loc[["am-h100-qwen3-30b-8", "am-h100-kimik2-256", "am-h100-gptoss20b-8",
                                        "am-h100-gptoss120b-64", "kforge-h200-llama3-8b-1gpu",
                                        "heldout41-am-qwen3-30b-h100-8-ep8-deepep"], "memory_fits"].all()


@pytest.mark.parametrize("case,peak_gib", [
    ("tt-llama31-8b-h100-8-fsdp-compile", 77.0), ("tt-llama31-8b-h100-128-fsdp-compile", 62.0),
    ("trainy-llama31-8b-h200-32-fsdp-fp8", 47.96)])
def test_fsdp_memory_near_the_measured_peak(case, peak_gib):
    """Predicted memory against the peak torchtitan reports (reserved by the caching allocator, so
    above what tensors use): within -25% / +15% (torchtitan benchmark tables, row notes)."""
    c = next(x for x in validation.runs() if x["id"] == case)
    _, est = validation.predict(c)
    assert 0.75 <= est.memory_per_gpu_bytes / (peak_gib * 2**30) <= 1.15


def test_dense_blackwell_and_moe_cases_within_31_percent(table):
    """FP8/NVFP4 dense on Blackwell and the DeepSeek-V3 MoE rows on Megatron stacks, the chapter's
    closest analogues: median within 11%, every case within 32% (the worst, Megatron-Bridge 26.04's MXFP8
    DeepSeek-V3 on 256 B200, is off by 31.1%, 30.9% before session 47 priced the loss's traffic; overlap contention
    took the median from 9.2% to 10.3%, the Megatron-Bridge
    Llama 3.1 405B rows on GB200/GB300 moving 1-2 points further under). torchtitan's 405B runs (500 W H100s, another stack) are bounded by their group, and so are set 6's
    DGX Cloud NeMo 25.04 rows (early DeepSeek-V3 recipes: 958 tokens/s per GPU on GB200), ``heldout6-*``, and the
    baseline of Megatron-LM's DeepSeek-V3 GB200 optimization page (set 8: the same layout before the optimizations
    that doubled its speed; the final row is within 3%). An exception, not a rule (the other held-out sets' rows
    stay in): set 23's NVIDIA DeepSeek-V3 on 2,048-8,192 GB200, the largest DeepSeek-V3 runs in the table (one layout,
    steps 26-43% short, more so with scale, where CoreWeave's GB300 runs of set 10 are within 6%), is a known miss
    bounded by its group; and set 24's Together DeepSeek-V3 on 512 B200, whose layout is not stated (searched) and
    whose global batch is inferred, is no stated-layout analogue (22% / 34% short, bounded by its group). Set 28's
    DeepSeek-V3 on 1,024 H100 from the Megatron Core MoE report (blockwise FP8, +35% blind: its pipeline depth differs
    between the paper's Tables 17 and 20, and its MTP layer is not in the spec) is bounded by its group too, and so are
    set 64's torchtitan DeepSeek-V3 baseline on 256 B200 (no layout stated: searched, +178%) and the Llama 3.1 405B row
    of Together's second B200 cluster, whose reports call its fabric degrading (+91%; 47% below the first cluster's).
    Set 84's NousResearch LLEP baseline is a 9.5B DeepSeek-V3-style debug model (16 layers of width 2,048, eager,
    natural routing), no DeepSeek-V3-scale run: 4.4x fast, bounded by its group. Set 99's AWS DeepSeek-V3 on 256 B300
    ran on EFA at TP 8, where AWS's MoE runs take 2.5-5.9x the model's step (not explained: EFA's measured all-to-all
    bandwidth is 50-90% of its line rate): bounded by its group. Set 101's Megatron-LM PR 6429 runs a 14-layer
    DeepSeek-V3 proxy (3 dense layers assumed, one MTP layer not in the spec) at sequence 2,048 on 64 H100, whose
    expert-overlap arm is 34% short: no DeepSeek-V3-scale run, bounded by its group. Set 105's dgxc-benchmarking
    example job lines are the same DGX Cloud recipes as set 6 (DeepSeek-V3 BF16 on 128 GB200: 3.2x below the model),
    bounded as set 6 is; set 106's Together B200 DeepSeek-V3 job (33% short in step time) as set 24's Together rows."""
    g = table[table.case.str.contains("llama31-405b|dsv3|deepseek") & (table.group != "torchtitan-fsdp2")
              & ~table.group.str.startswith(("heldout6-", "heldout23-", "heldout24-together",
                                             "heldout64-nebius", "heldout64-together-flapping",
                                             "heldout84-nous-llep", "heldout99-i-aws", "heldout101-b-mlm-pr6429",
                                             "heldout105-b-dgxc-example-jobs", "heldout106-a-together"))
              & ~table.case.str.endswith("-baseline") & (table.case != "heldout28-mcoremoe-h100-dsv3-fp8blk-1024")]
    assert len(g) >= 9
    assert g.error.abs().max() <= 0.32 and g.error.abs().median() <= 0.11


def test_summary(table):
    s = validation.summary(table)
    assert "all" in s.index and np.isfinite(s.loc["all", "mean"])


def test_speed_error_inverts_iteration_times_and_keeps_refusals_as_nan():
    """A model twice as fast as measured is +100% in tokens/s and in iteration time alike (half the measured time);
    one 20% slow is -20% in throughput and a 1.25x iteration time."""
    t = pd.DataFrame({"unit": ["tokens_per_s_per_gpu", "iteration_s", "iteration_s", "tflops_per_gpu"],
                      "measured": [100.0, 2.0, 1.0, 400.0], "predicted": [200.0, 1.0, 1.25, np.nan]})
    s = validation.speed_error(t)
    assert s.iloc[:3].tolist() == pytest.approx([1.0, 1.0, -0.2]) and np.isnan(s.iloc[3])


def test_bias_table_groups_by_family_architecture_and_generation():
    """Hand-made cases: the lean is the signed median speed error per (family, architecture, generation), the
    share within 10% counts |error| <= 10%, refused cases drop out, and a bad ``within`` is refused by name."""
    t = pd.DataFrame({"family": ["A", "A", "A", "B", "B"], "architecture": ["dense"] * 3 + ["MoE"] * 2,
                      "generation": ["g"] * 5, "unit": ["tokens_per_s_per_gpu"] * 3 + ["iteration_s"] * 2,
                      "measured": [100.0, 100.0, 100.0, 1.0, 1.0], "predicted": [105.0, 130.0, 90.0, 0.5, np.nan]})
    t["error"] = t["predicted"] / t["measured"] - 1.0
    b = validation.bias_table(t).set_index("family")
    assert b.loc["A", "cases"] == 3 and b.loc["A", "lean"] == pytest.approx(0.05)
    assert b.loc["A", "share_within_10%"] == pytest.approx(2 / 3) and b.loc["A", "median_abs_error"] == pytest.approx(0.1)
    assert b.loc["B", "cases"] == 1 and b.loc["B", "lean"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="within=1.5"):
        validation.bias_table(t, within=1.5)


def test_bias_table_of_the_runs_covers_every_predicted_case(table):
    """Every predicted case falls in one row; the generations are those of the catalogue parts that ran."""
    b = validation.bias_table(table)
    assert b["cases"].sum() == int(table["error"].notna().sum())
    assert set(b["generation"]) <= {label for _, label in validation.GENERATIONS}
    assert validation.generation(hardware.get("H800")) == "Hopper (FP8)"
    assert validation.generation(hardware.get("GB300")) == "Blackwell or later (FP4)"
    assert validation.generation(hardware.get("A100-80GB")) == "Ampere (BF16)"


# ---- the memory model against the memory the runs report (data/runs/training_memory.csv, session 34) ----------------

@pytest.fixture(scope="module")
def memtable():
    return validation.memory_table()


def test_every_reported_memory_names_a_training_run_and_what_it_measures(memtable):
    from intelligence_per_dollar.sources import runs as run_files
    mem = run_files.training_memory()
    assert len(mem) == len(memtable) >= 70
    assert {m["run_id"] for m in mem} <= {c["id"] for c in validation.runs()}
    assert set(memtable.metric) <= set(run_files.MEMORY_METRICS) and memtable.measured_bytes.gt(1e9).all()
    parts = memtable[["weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes"]].sum(axis=1)
    assert (parts <= memtable.predicted_bytes * (1 + 1e-9)).all()
    assert all(m["provenance"].kind == "measured" and m["note"] for m in mem)


def test_memory_loader_names_the_bad_column(tmp_path):
    from intelligence_per_dollar.sources import io, runs as run_files
    head = "run_id,memory_bytes,metric,source_url,date_read,kind,note\n"
    row = "tt-llama31-8b-h100-8-fsdp-eager,8.8e10,{m},https://example.org/x,2026-12-05,measured,n\n"
    bad = tmp_path / "bad.csv"
    bad.write_text(head + row.format(m="peak"))
    with pytest.raises(io.DataError, match="metric"):
        run_files.training_memory(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text(head + row.format(m="reserved") * 2)
    with pytest.raises(io.DataError, match="appears twice"):
        run_files.training_memory(dup)
    unknown = [{"run_id": "no-such-run", "memory_bytes": 1e10, "metric": "reserved", "note": "", "provenance": None}]
    with pytest.raises(ValueError, match="no-such-run"):
        validation.memory_table(memory=unknown)


def test_memory_model_against_the_reported_memory(memtable):
    """The memory model sizes layouts (does a layout fit, how much to recompute); against the memory 73 runs report it
    is within a median 29% (session 34; 29.3% over 78 with set 86's five Lambda torchtitan rows, session 44: GPT-OSS-20B
    on B200 at full recompute within 8%, Qwen3-30B-A3B 30-43% under, the eager GB300 baseline 22% over; session 45:
    the B200 rows state ``training.dtype=bfloat16``, BF16 states without an fp32 master, and sit 20-27% / 53-60% under
    the fork's reserved peak, which the model does not explain), mostly under
    PyTorch's reserved peak (the caching allocator keeps freed blocks)
    and over MLPerf NeMo's 405B logs. Bounds: a regression fails; the book prints the table and its medians. The
    8-GPU torchtitan Llama 3.1 8B rows, the layouts the issue named, sit 5-22% under their reserved peak."""
    e = memtable.set_index("case").error
    assert memtable.error.abs().median() <= 0.30
    reserved = memtable[memtable.metric == "reserved"]
    assert reserved.error.median() < 0 and (reserved.error < 0).mean() >= 0.75
    for case in ("tt-llama31-8b-h100-8-fsdp-eager", "tt-llama31-8b-h100-8-fsdp-compile",
                 "heldout22-torchao-h100-llama3-8b-8-bf16"):
        assert -0.25 <= e[case] <= 0.0, case
    # KempnerForge's Llama 3 8B on one H200: 80.7 GiB allocated (86.7e9 B), the model 77 GB with BF16 states
    assert -0.15 <= e["kforge-h200-llama3-8b-1gpu"] <= 0.0
    assert set(memtable.case[~memtable.fits]) == {"heldout22-mlperf50-nebius-h200-llama31-405b-fp8-512",
                                                  "heldout22-mlperf50-nebius-h200-llama31-405b-fp8-1024"}


def test_alps_gh200_rows_run_at_the_clusters_module_power_limit(table):
    """Every GH200 row from CSCS Alps (Apertus, swiss-ai's Megatron-LM PRs, the FOG paper, set 106's CrossPipe) carries
    the 660 W module limit the Apertus report states for the cluster ('below the set power limit of 660 W'); the cap
    slows the predicted step, so the swiss-ai 8B baseline of PR 33 at TP 2 comes within 10% where the catalogue's
    1,000 W had it 17% fast."""
    rows = [c for c in validation.runs() if c["accelerator"] == "GH200-96GB"]
    assert len(rows) == 32 and all(c.get("power_cap_w") == 660.0 for c in rows)
    corrected = [c for c in rows if "Cluster fact corrected (session 56)" in c["note"]]
    assert len(corrected) == 19 and all("set power limit of 660 W" in c["note"] for c in corrected)
    case = next(c for c in rows if c["id"] == "heldout102-b-swissai-pr33-llama8b-gh200-256-tp2-mbs4-s4096")
    capped, _ = validation.predict(case)
    free, _ = validation.predict({k: v for k, v in case.items() if k != "power_cap_w"})
    assert capped < 0.9 * free                                           # tokens/s/GPU
    assert abs(table.set_index("case").loc[case["id"], "error"]) <= 0.10
