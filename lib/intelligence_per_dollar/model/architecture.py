"""Model shapes -> parameter counts, FLOPs per token, KV-cache bytes.

Pure functions of a :class:`ModelSpec`. Conventions:

* A *matmul parameter* is a weight that takes part in a matrix product (2 FLOPs per parameter
  per token in the forward pass, Kaplan et al. 2020, Table 1: C_forward ~ 2N). Norm weights and
  biases are parameters but not matmul parameters.
* *Active* parameters are those one token touches: in a mixture-of-experts (MoE) layer the
  ``top_k`` routed experts plus the ``shared_experts``, never the other routed experts.
* The forward FLOPs per token are ``2 x active matmul parameters (embeddings excluded) + 2 d V``
  for the output (LM-head) projection, plus the attention score and context products, whose
  cost grows with the sequence length (Narayanan et al. 2021, Eq. 3 / Appendix; Kaplan et al.
  2020, Table 1, the ``2 n_layer n_ctx d_attn`` term).
* Training = forward + backward = 3x forward (the backward pass computes gradients with respect
  to both activations and weights: two matrix products per forward one), i.e. ``6 N`` per token
  for the matmuls (Kaplan et al. 2020, Table 1) plus 3x the attention FLOPs. Recomputation is
  *not* counted here (model FLOPs); see :func:`training_flops_per_token`.

Attention variants: multi-head / grouped-query attention (``kv_heads`` <= ``heads``, Ainslie et
al. 2023) and DeepSeek's multi-head latent attention (MLA, DeepSeek-AI 2024, "DeepSeek-V2",
arXiv 2405.04434, section 2.1, Eqs. 9-19), selected by giving ``kv_lora_rank``.
"""

from __future__ import annotations

import math

import numpy as np

from intelligence_per_dollar.sources import checks
from intelligence_per_dollar.sources.models import ModelSpec

__all__ = [
    "total_params", "active_params", "embedding_params", "params_per_layer",
    "matmul_params_active", "matmul_flops_per_token", "attention_flops_per_token",
    "forward_flops_per_token", "training_flops_per_token", "kv_cache_bytes_per_token",
    "from_total_active", "is_moe", "is_mla", "head_dim", "moe_layers", "expert_groups_hit", "MAX_SEQ_LEN_TOKENS",
]

#: MLA rotary (decoupled RoPE) key/query dimension when the spec does not give one
#: (DeepSeek-V2/V3 use 64: arXiv 2405.04434 section 3.1.1 "d_h^R = 64").
DEFAULT_MLA_ROPE_HEAD_DIM = 64


# ---------------------------------------------------------------------------------------------
# Small derived quantities
# ---------------------------------------------------------------------------------------------

def is_moe(s: ModelSpec) -> bool:
    return s.experts > 0


def is_mla(s: ModelSpec) -> bool:
    return s.kv_lora_rank is not None


def head_dim(s: ModelSpec) -> int:
    """Per-head query/key (no-RoPE part for MLA) and value dimension."""
    return s.head_dim if s.head_dim is not None else s.d_model // s.heads


def rope_head_dim(s: ModelSpec) -> int:
    """MLA decoupled-RoPE dimension (0 for GQA, whose RoPE acts inside head_dim)."""
    if not is_mla(s):
        return 0
    return s.qk_rope_head_dim if s.qk_rope_head_dim is not None else DEFAULT_MLA_ROPE_HEAD_DIM


def moe_layers(s: ModelSpec) -> int:
    """Number of layers whose FFN is a mixture of experts."""
    return s.layers - s.dense_layers if is_moe(s) else 0


def expert_groups_hit(groups, top_k):
    """Expected number of distinct groups (ranks, or NVLink domains) a token's ``top_k`` experts fall in when the
    experts are spread evenly over ``groups`` groups and routing is uniform: ``n (1 - (1 - 1/n)^k)``, each group
    missed with probability ``(1 - 1/n)^k`` (at most ``k``; 1 for one group). A deduplicating dispatcher (DeepEP,
    HybridEP: DeepSeek-V3, arXiv 2412.19437, section 3.2.2) sends a token once per group it hits."""
    n = np.maximum(np.asarray(groups, float), 1.0)
    out = n * (1.0 - np.power(1.0 - 1.0 / n, top_k))
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# Parameters (in the style of Calculon's ``Llm.num_parameters``: one commented line per term)
# ---------------------------------------------------------------------------------------------

def _attention_params(s: ModelSpec) -> tuple[float, float]:
    """(matmul params, other params) of one attention block."""
    d, h, hd = s.d_model, s.heads, head_dim(s)
    other = 0.0
    if is_mla(s):
        r, c = rope_head_dim(s), s.kv_lora_rank
        # DeepSeek-V2 (arXiv 2405.04434) Eqs. 9-19.
        if s.q_lora_rank is not None:
            q = d * s.q_lora_rank                 # W^DQ: down-projection of queries (Eq. 12)
            q += s.q_lora_rank * h * (hd + r)     # W^UQ and W^QR: up-projection + RoPE queries
            other += s.q_lora_rank                # RMSNorm on the query latent
        else:
            q = d * h * (hd + r)                  # plain query projection (V2-Lite style)
        kv = d * (c + r)                          # W^DKV (Eq. 9) and W^KR: shared RoPE key (Eq. 15)
        kv += c * h * (hd + hd)                   # W^UK and W^UV: up-projections of keys and values
        other += c                                # RMSNorm on the KV latent
        o = h * hd * d                            # W^O output projection (Eq. 19)
        return float(q + kv + o), float(other)
    q = d * h * hd                                # W_Q
    kv = 2 * d * s.kv_heads * hd                  # W_K, W_V (kv_heads of them: GQA)
    o = h * hd * d                                # W_O
    if not s.gated_ffn:
        other += h * hd + 2 * s.kv_heads * hd + d  # GPT-style biases on Q, K, V and O
    return float(q + kv + o), float(other)


def _ffn_params(s: ModelSpec, hidden: int) -> tuple[float, float]:
    """(matmul params, biases) of one FFN (or one expert) of hidden size ``hidden``."""
    mats = 3 if s.gated_ffn else 2                # SwiGLU: gate, up, down; GPT: up, down
    bias = 0.0 if s.gated_ffn else float(hidden + s.d_model)
    return float(mats * s.d_model * hidden), bias


def params_per_layer(s: ModelSpec) -> dict[str, float]:
    """Parameter breakdown of one layer of each kind (matmul weights unless noted).

    Keys: ``attention`` (matmul), ``attention_other`` (biases, latent norms), ``norms`` (the
    two pre-norms), ``dense_ffn`` (a dense layer's FFN), ``expert`` (one routed or shared expert),
    ``router`` (the gating matrix, d_model x experts), ``moe_ffn_total`` (all experts + router),
    ``moe_ffn_active`` (top_k + shared experts + router), ``dense_layer`` and ``moe_layer_total``
    / ``moe_layer_active`` (whole layers).
    """
    attn, attn_other = _attention_params(s)
    norms = 2.0 * s.d_model                       # pre-attention and pre-FFN norm scales
    if not s.gated_ffn:
        norms *= 2                                # LayerNorm has a bias too
    dense, dense_b = _ffn_params(s, s.d_ff)
    out = {"attention": attn, "attention_other": attn_other, "norms": norms, "dense_ffn": dense,
           "dense_ffn_bias": dense_b,
           "dense_layer": attn + attn_other + norms + dense + dense_b}
    if is_moe(s):
        expert, expert_b = _ffn_params(s, s.expert_d_ff)
        router = float(s.d_model * s.experts)     # gating logits, one per routed expert
        total = (s.experts + s.shared_experts) * (expert + expert_b) + router
        active = (s.top_k + s.shared_experts) * (expert + expert_b) + router
        out.update({"expert": expert, "router": router, "moe_ffn_total": total,
                    "moe_ffn_active": active,
                    "moe_layer_total": attn + attn_other + norms + total,
                    "moe_layer_active": attn + attn_other + norms + active})
    return out


def embedding_params(s: ModelSpec) -> float:
    """Token embedding plus LM head (``2 V d``, or ``V d`` when tied)."""
    return float(s.vocab * s.d_model * (1 if s.tied_embeddings else 2))


def _dense_layer_count(s: ModelSpec) -> int:
    return s.dense_layers if is_moe(s) else s.layers


def _params(s: ModelSpec, moe_layer_key: str) -> float:
    """Dense layers + MoE layers (``moe_layer_key``: all experts or the active ones) + embeddings + final norm."""
    p = params_per_layer(s)
    n = _dense_layer_count(s) * p["dense_layer"]
    if is_moe(s):
        n += moe_layers(s) * p[moe_layer_key]
    final_norm = s.d_model * (1 if s.gated_ffn else 2)
    return float(n + embedding_params(s) + final_norm)


def total_params(s: ModelSpec) -> float:
    """All parameters, embeddings included."""
    return _params(s, "moe_layer_total")


def active_params(s: ModelSpec) -> float:
    """Parameters one token touches (routed top_k + shared experts), embeddings included."""
    return _params(s, "moe_layer_active")


def matmul_params_active(s: ModelSpec) -> float:
    """Active matmul parameters excluding embeddings and LM head (the ``N`` of 6N)."""
    p = params_per_layer(s)
    n = _dense_layer_count(s) * (p["attention"] + p["dense_ffn"])
    if is_moe(s):
        n += moe_layers(s) * (p["attention"] + (s.top_k + s.shared_experts) * p["expert"] + p["router"])
    return float(n)


# ---------------------------------------------------------------------------------------------
# FLOPs
# ---------------------------------------------------------------------------------------------

def matmul_flops_per_token(s: ModelSpec) -> float:
    """Forward matmul FLOPs per token: ``2 N_active + 2 d V`` (LM head).

    Kaplan et al. 2020, Table 1 (C_forward = 2N + 2 n_layer n_ctx d_attn; the attention term is
    :func:`attention_flops_per_token`); Narayanan et al. 2021, Eq. 3 counts the same weights for
    GPT (24 B s h^2 per layer forward + 2 B s h V for the logits).
    """
    return 2.0 * matmul_params_active(s) + 2.0 * s.d_model * s.vocab


#: Longest sequence the FLOP counts take (1e15 tokens, far past any context): with the model-size limit
#: (:data:`~intelligence_per_dollar.sources.models.MAX_WEIGHTS`) every count stays finite.
MAX_SEQ_LEN_TOKENS = 1e15


def attention_flops_per_token(s: ModelSpec, seq_len, causal: bool = True):
    """Forward FLOPs per token of the attention score (Q K^T) and context (P V) products.

    Per layer and token: ``2 * ctx * heads * d_qk`` for the scores and ``2 * ctx * heads * d_v``
    for the context, with ``ctx = seq_len`` for full (non-causal or unfused-masked) attention and
    ``ctx = (seq_len + 1) / 2`` on average under a causal mask that the kernel exploits (flash
    attention skips masked tiles). Narayanan et al. 2021, Eq. 3's ``4 B s^2 h`` per layer forward
    is the full-square case (``causal=False``). ``seq_len`` may be a numpy array.
    """
    seq = checks.array("seq_len", seq_len, low=1.0, high=MAX_SEQ_LEN_TOKENS)
    checks.boolean("causal", causal)
    ctx = (seq + 1.0) / 2.0 if causal else seq
    hd = head_dim(s)
    d_qk = hd + rope_head_dim(s)
    d_v = hd
    out = s.layers * 2.0 * ctx * s.heads * (d_qk + d_v)
    return float(out) if out.ndim == 0 else out


def attention_score_head_dim(s: ModelSpec) -> float:
    """Tensor-core FLOPs per attention score and pass over 4: ``(d_qk + d_v) / 2`` (the head dimension of
    GQA/MHA; MLA's 128 + 64 query/key and 128 value dimensions give 160). Flash attention's rate per FLOP
    depends on it (:func:`intelligence_per_dollar.model.efficiency.attention_head_dim_factor`)."""
    hd = head_dim(s)
    return (2.0 * hd + rope_head_dim(s)) / 2.0


def forward_flops_per_token(s: ModelSpec, seq_len, causal: bool = True):
    """Forward FLOPs per token: matmuls (incl. LM head) + attention."""
    return matmul_flops_per_token(s) + attention_flops_per_token(s, seq_len, causal)


def training_flops_per_token(s: ModelSpec, seq_len, causal: bool = True):
    """Model FLOPs per trained token: 3x forward (forward + 2x backward), i.e. 6N + attention.

    Kaplan et al. 2020, Table 1 (C ~ 6N per token); Narayanan et al. 2021, Eq. 3 without its
    recompute pass (their ``96 B s l h^2 (1 + s/6h + V/16lh)`` is 4x forward, i.e. it includes the
    extra forward pass of full recomputation; model FLOPs are 3/4 of that).
    """
    return 3.0 * forward_flops_per_token(s, seq_len, causal)


# ---------------------------------------------------------------------------------------------
# Bytes
# ---------------------------------------------------------------------------------------------

def kv_cache_bytes_per_token(s: ModelSpec, precision_bytes: float) -> float:
    """KV-cache bytes per token of context, over all layers.

    GQA/MHA: ``2 * kv_heads * head_dim * layers`` elements (keys and values).
    MLA: ``(kv_lora_rank + qk_rope_head_dim) * layers`` elements: the compressed latent and the
    shared RoPE key (DeepSeek-V2, arXiv 2405.04434, section 2.1.2 and Table 1).
    """
    checks.positive_number("precision_bytes", precision_bytes)
    if is_mla(s):
        elems = (s.kv_lora_rank + rope_head_dim(s)) * s.layers
    else:
        elems = 2 * s.kv_heads * head_dim(s) * s.layers
    return float(elems * precision_bytes)


# ---------------------------------------------------------------------------------------------
# A plausible architecture from totals
# ---------------------------------------------------------------------------------------------

def from_total_active(total_params: float, active_params: float, *, top_k: int = 8,
                      shared_experts: int = 1, expert_ratio: float = 2048 / 7168,
                      d_model_per_layer: float = 7168 / 61, head_dim_: int = 128, kv_heads: int = 8,
                      vocab: int = 163840, dense_layers: int = 1, d_model_multiple: int = 1024,
                      experts_multiple: int = 64) -> ModelSpec:
    """Derive a plausible MoE architecture with the given total and active parameter counts.

    Rules (each a stated assumption, defaults from DeepSeek-V3 / Kimi-K2, whose published
    configs share d_model 7168, 61 layers, expert FFN 2048, top-8 + 1 shared expert):

    1. SwiGLU experts of hidden size about ``expert_ratio * d_model`` (a multiple of 128);
       ``top_k`` routed + ``shared_experts`` active per token; GQA attention with
       ``head_dim_``-wide heads (``heads = d_model / head_dim_``) and ``kv_heads`` KV heads;
       ``dense_layers`` leading dense layers whose ``d_ff`` equals ``(top_k + shared_experts) *
       expert_d_ff``, so a dense layer costs what an MoE layer's active part costs (DeepSeek-V3:
       18432 = 9 x 2048).
    2. Depth and width keep the aspect ratio ``d_model / layers = d_model_per_layer`` (~117).
       ``d_model`` is the multiple of ``d_model_multiple`` that best matches the active count at
       that aspect ratio; ``layers`` is then set from the active count.
    3. The number of routed experts is fixed by the total count and is a multiple of
       ``experts_multiple`` (64: expert parallelism of 8, 16, 32 or 64 divides it, as
       DeepSeek-V3's 256 and Kimi K2's 384 experts do; a count like 232 = 8 x 29 would cap
       expert parallelism at 8). Since total / active fixes experts x expert size, hitting the
       total with such a count moves the expert hidden size away from rule 1's (finer or coarser
       experts, between 0.5x and 1.6x) and d_model a few multiples away from rule 2's (the
       layers re-solved for the active count); among the choices whose counts land within 2% of
       both targets, the one closest to rules 1 and 2 (sum of |log| distances from the expert
       ratio and the aspect ratio) wins; if none does, smaller multiples (32, 16, 8) are tried.

    The result matches ``active_params`` and ``total_params`` to within a few percent (the
    rounding); callers should report :func:`total_params` / :func:`active_params` of the result.
    """
    for name, v in (("total_params", total_params), ("active_params", active_params)):
        checks.positive_number(name, v)
    if active_params > total_params:
        raise ValueError(f"active_params={active_params:.3g} exceeds total_params={total_params:.3g}; "
                         f"allowed: active_params <= total_params")
    checks.positive_int("top_k", top_k)
    checks.non_negative_int("shared_experts", shared_experts)
    checks.non_negative_int("dense_layers", dense_layers)
    for name, v in (("expert_ratio", expert_ratio), ("d_model_per_layer", d_model_per_layer)):
        checks.positive_number(name, v)
    for name, v in (("head_dim_", head_dim_), ("kv_heads", kv_heads), ("vocab", vocab),
                    ("d_model_multiple", d_model_multiple), ("experts_multiple", experts_multiple)):
        checks.positive_int(name, v)

    def build(d: int, layers: int, experts: int, f: int | None = None) -> ModelSpec:
        if f is None:
            f = max(128, int(round(expert_ratio * d / 128)) * 128)
        return ModelSpec(layers=layers, d_model=d, heads=d // head_dim_,
                         kv_heads=min(kv_heads, d // head_dim_), d_ff=(top_k + shared_experts) * f,
                         vocab=vocab, experts=experts, top_k=top_k, expert_d_ff=f,
                         shared_experts=shared_experts, dense_layers=min(dense_layers, layers - 1),
                         gated_ffn=True, head_dim=head_dim_)

    active_params_fn = globals()["active_params"]
    total_params_fn = globals()["total_params"]

    def active_of(d: int, layers: int, f: int | None = None) -> float:
        return active_params_fn(build(d, layers, max(top_k, 8), f))

    best = None
    for d in range(d_model_multiple, 64 * d_model_multiple + 1, d_model_multiple):
        layers = max(2, int(round(d / d_model_per_layer)))
        err = abs(math.log(active_of(d, layers) / active_params))
        if best is None or err < best[0]:
            best = (err, d)
    d_best = best[1]

    def solve(d: int, f: int, mult: int):
        # layers from the active count at this width and expert size (active is linear in layers)
        per_layer = active_of(d, 3, f) - active_of(d, 2, f)
        base = active_of(d, 2, f) - 2 * per_layer
        layers = max(2, int(round((active_params - base) / per_layer)))
        s0 = build(d, layers, max(top_k, 8), f)
        per_expert = moe_layers(s0) * params_per_layer(s0)["expert"]
        experts = s0.experts + (total_params - total_params_fn(s0)) / per_expert
        experts = max(int(round(experts / mult)) * mult, mult, top_k)
        s1 = build(d, layers, experts, f)
        err = (abs(math.log(total_params_fn(s1) / total_params)) + abs(math.log(active_params_fn(s1) / active_params)))
        # distance from the stated proportions: expert size / d_model and d_model / layers
        dist = abs(math.log(f / (expert_ratio * d))) + abs(math.log(d / layers / d_model_per_layer))
        return err, dist, s1

    ds = [x for x in range(d_best - 4 * d_model_multiple, d_best + 5 * d_model_multiple, d_model_multiple)
          if x >= d_model_multiple and x % head_dim_ == 0]
    for mult in [m for m in (experts_multiple, 32, 16, 8) if m <= experts_multiple]:
        sols = []
        for d in ds:
            f0 = expert_ratio * d
            for i in range(-20, 15):
                f = max(128, int(round(f0 * 2 ** (i / 20) / 128)) * 128)
                err, dist, s1 = solve(d, f, mult)
                if err <= 0.02:
                    sols.append((dist, s1))
        if sols:
            return min(sols, key=lambda t: t[0])[1]
    f = max(128, int(round(expert_ratio * d_best / 128)) * 128)
    return solve(d_best, f, 8)[2]
