"""Named models: ``data/models/models.csv`` -> validated :class:`ModelSpec` records.

:class:`ModelSpec` (a decoder-only transformer, dense or mixture-of-experts) is defined here, in the
sources layer, so that loaders and model functions share one type; :func:`spec` is the one edge
conversion of a dict into a spec. The catalogue is long format (``model, field, value, source_url,
date_read, kind, used, note``, read with :func:`io.read_long_catalogue`); its fields are the
:class:`ModelSpec` fields plus ``total_params_published`` / ``active_params_published``, the totals
the model's authors state (tests/data/test_catalogue.py checks each spec against them), and an optional
``hf_repo``, the model's Hugging Face repository.

Names are looked up forgivingly (:func:`resolve`): besides the catalogue id itself, a name matches in
any case, without an ``org/`` prefix, and without the suffixes Hugging Face repositories add to one
architecture (``-Instruct``, ``-Chat``, ``-hf``, ``-Base``, ``-FP8``, ``-FP4``, ``-NVFP4``, ``-it``,
``-pt``, ``-Thinking``, a leading ``Meta-`` and ``-MMDD``/``-YYMM`` date stamps such as ``-0528``,
``-2507``), compared with the catalogue id and with its ``hf_repo`` treated the same way. So
``"meta-llama/Llama-3.1-70B-Instruct"`` is Llama-3.1-70B, ``"meta-llama/Llama-4-Scout-17B-16E-Instruct"``
Llama-4-Scout, ``"DeepSeek-R1-0528"`` DeepSeek-R1. A version is never dropped (``Mistral-7B-v0.1``, with
another vocabulary, is not the catalogued v0.3), nothing is matched by prefix (``"Llama-3.1"`` is
refused, naming the three it could be), and a name two models share raises ``ValueError`` listing both
(an exact catalogue id always denotes itself). A precision in the name (``-FP8``, ``-NVFP4``) names a checkpoint
of the same architecture and is not carried over: the serving and training functions take ``precision`` apart.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Mapping

from intelligence_per_dollar.sources import checks, io

__all__ = ["ModelSpec", "spec", "names", "resolve", "get", "provenance", "published", "Published"]


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer, dense or mixture-of-experts.

    ``d_ff`` is the hidden size of the dense FFN (used by every layer of a dense model, and by the
    ``dense_layers`` leading layers of an MoE model). ``expert_d_ff`` is the hidden size of each
    routed or shared expert. ``gated_ffn`` selects SwiGLU-style FFNs (3 matrices: gate, up, down)
    or GPT-style (2 matrices, with biases). ``head_dim`` defaults to ``d_model // heads``.
    MLA is selected by ``kv_lora_rank``; ``q_lora_rank`` (optional) low-ranks the queries too.
    ``tied_embeddings``: input embedding shared with the LM head (GPT-2/3 style).
    ``local_attention_layers`` layers attend only to the last ``local_attention_window`` tokens
    (sliding-window or chunked local attention: GPT-OSS alternates 128-token windows, Llama 4 uses
    8192-token chunks in 3 of 4 layers). ``expert_weight_precision``: the checkpoint stores the
    routed experts in this precision whatever the serving precision (GPT-OSS ships MXFP4 experts).
    ``release_precision``: the precision the authors released every weight in when it is not BF16
    (DeepSeek-V3/R1 and Kimi K2 ship block-scaled FP8); None: BF16.
    """

    layers: int
    d_model: int
    heads: int
    kv_heads: int
    d_ff: int
    vocab: int
    experts: int = 0
    top_k: int = 0
    expert_d_ff: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    gated_ffn: bool = True
    head_dim: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    tied_embeddings: bool = False
    local_attention_window: int | None = None
    local_attention_layers: int = 0
    expert_weight_precision: str | None = None
    release_precision: str | None = None

    def __post_init__(self):
        _validate(self)

    def replace(self, **changes) -> "ModelSpec":
        return dataclasses.replace(self, **changes)


_FIELDS = tuple(f.name for f in dataclasses.fields(ModelSpec))
_REQUIRED = ("layers", "d_model", "heads", "d_ff", "vocab")
_BOOL_FIELDS = ("gated_ffn", "tied_embeddings")
_OPTIONAL_POSITIVE = ("head_dim", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "local_attention_window")
_NON_NEGATIVE = ("experts", "top_k", "expert_d_ff", "shared_experts", "dense_layers", "local_attention_layers")
_WEIGHT_PRECISIONS = ("fp4", "fp8", "bf16")
#: Largest weight count (an upper estimate from the sizes) a spec may have: FLOPs and bytes per token are a few times
#: the weights times at most a few million tokens of context, so every count the model derives stays a finite float.
MAX_WEIGHTS = 1e200


def _as_int(key, value, *, allow_zero: bool) -> int:
    """A size: an integer (Python or NumPy; a whole float as read from the CSV) >= 1 (>= 0 if allowed)."""
    return checks.integer(f"model[{key!r}]", value, low=0 if allow_zero else 1, whole_floats=True)


def _validate(s: ModelSpec) -> None:
    for k in ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab"):
        object.__setattr__(s, k, _as_int(k, getattr(s, k), allow_zero=False))
    for k in _NON_NEGATIVE:
        object.__setattr__(s, k, _as_int(k, getattr(s, k), allow_zero=True))
    for k in _OPTIONAL_POSITIVE:
        if getattr(s, k) is not None:
            object.__setattr__(s, k, _as_int(k, getattr(s, k), allow_zero=False))
    for k in _BOOL_FIELDS:
        object.__setattr__(s, k, checks.boolean(f"model[{k!r}]", getattr(s, k)))
    if s.kv_heads > s.heads or s.heads % s.kv_heads:
        raise ValueError(f"model['kv_heads']={s.kv_heads} must divide model['heads']={s.heads} "
                         f"(grouped-query attention shares each KV head among heads/kv_heads queries)")
    if s.head_dim is None and s.d_model % s.heads:
        raise ValueError(f"model['heads']={s.heads} does not divide model['d_model']={s.d_model}; "
                         f"give 'head_dim' explicitly")
    if s.experts == 0:
        for k in ("top_k", "expert_d_ff", "shared_experts", "dense_layers"):
            if getattr(s, k):
                raise ValueError(f"model[{k!r}]={getattr(s, k)} requires model['experts'] >= 1 "
                                 f"(a dense model has experts=0 and {k}=0)")
    else:
        if not 1 <= s.top_k <= s.experts:
            raise ValueError(f"model['top_k']={s.top_k} must be between 1 and model['experts']="
                             f"{s.experts} for a mixture-of-experts model")
        if s.expert_d_ff < 1:
            raise ValueError(f"model['expert_d_ff']={s.expert_d_ff} must be >= 1 when experts >= 1")
        if s.dense_layers >= s.layers:
            raise ValueError(f"model['dense_layers']={s.dense_layers} must be < model['layers']="
                             f"{s.layers} (at least one MoE layer)")
    if s.local_attention_layers > s.layers or (s.local_attention_layers > 0) != (s.local_attention_window is not None):
        raise ValueError(f"model['local_attention_layers']={s.local_attention_layers} must be between 0 and "
                         f"model['layers']={s.layers}, and > 0 exactly when model['local_attention_window'] is given")
    if s.expert_weight_precision is not None:
        checks.choice("model['expert_weight_precision']", s.expert_weight_precision, _WEIGHT_PRECISIONS)
        if s.experts == 0:
            raise ValueError("model['expert_weight_precision'] requires model['experts'] >= 1")
    if s.release_precision is not None:
        checks.choice("model['release_precision']", s.release_precision, _WEIGHT_PRECISIONS)
    if s.kv_lora_rank is None and (s.q_lora_rank is not None or s.qk_rope_head_dim is not None):
        raise ValueError("model['q_lora_rank'] / model['qk_rope_head_dim'] are MLA dimensions and "
                         "need model['kv_lora_rank'] too")
    def big(x) -> float:                    # an int past float64's range counts as infinite, not OverflowError
        try:
            return float(x)
        except OverflowError:
            return float("inf")
    width = max(big(s.d_model), big(s.heads) * big(s.head_dim or 1), big(s.d_ff),
                big(s.expert_d_ff) * max(big(s.experts), 1.0) + 1.0)
    weights = big(s.layers) * 4.0 * big(s.d_model) * width + 2.0 * big(s.vocab) * big(s.d_model)
    if not weights <= MAX_WEIGHTS:
        raise ValueError(f"model sizes (layers={checks.short(s.layers)}, d_model={checks.short(s.d_model)}, "
                         f"d_ff={checks.short(s.d_ff)}, vocab={checks.short(s.vocab)}) give "
                         f"{'over 1.8e308' if weights == float('inf') else f'about {weights:.3g}'} weights; "
                         f"allowed: at most {MAX_WEIGHTS:g}, so that FLOP and byte counts stay finite")


def spec(model: Mapping | ModelSpec | str) -> ModelSpec:
    """Validate a model description (a dict of the API's keys, a :class:`ModelSpec`, or the name of a
    catalogued model, :func:`names`, or a Hugging Face repository id of one, :func:`resolve`).

    An unknown name, unknown keys, missing required keys, non-integer or non-positive sizes, ``kv_heads`` not
    dividing ``heads``, ``top_k > experts`` ... raise ``ValueError`` naming the key, its value and
    what is allowed.
    """
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, str):
        found, candidates = _find(model)
        if found is None:
            raise ValueError(_not_found(f"model={checks.short(model)}", model, candidates,
                                        "is not a catalogued model", f"or a dict of {', '.join(_FIELDS)}"))
        return get(found)
    if not isinstance(model, Mapping):
        raise ValueError(f"model={model!r} must be a catalogued name, a dict of {', '.join(_FIELDS)} or a ModelSpec")
    unknown = sorted(set(model) - set(_FIELDS))
    if unknown:
        raise ValueError(f"model has unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(_FIELDS)}")
    missing = [k for k in _REQUIRED if k not in model]
    if missing:
        raise ValueError(f"model lacks required key(s) {', '.join(map(repr, missing))}")
    kw = dict(model)
    kw.setdefault("kv_heads", kw["heads"])
    for k in ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "head_dim", "local_attention_window",
              "expert_weight_precision", "release_precision"):
        if kw.get(k) in (0, None, ""):  # 0 means "not used" in flat tables
            kw[k] = None
    return ModelSpec(**kw)


# ---------------------------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------------------------

_INT_FIELDS = ("layers", "d_model", "heads", "kv_heads", "d_ff", "vocab") + _NON_NEGATIVE + _OPTIONAL_POSITIVE
_PUBLISHED = ("total_params_published", "active_params_published")
_SPEC_TEXT_FIELDS = ("expert_weight_precision", "release_precision")
#: Text fields: the spec's own, and ``hf_repo`` (the Hugging Face repository, an alias for :func:`resolve`).
_TEXT_FIELDS = _SPEC_TEXT_FIELDS + ("hf_repo",)


@dataclass(frozen=True)
class Published:
    """Parameter totals as the model's authors state them (not computed from the spec)."""

    total_params: float
    active_params: float


def _spec_of(path, name: str, fields: Mapping[str, list]) -> ModelSpec:
    kw = {}
    for field, values in fields.items():
        used = values[0]
        if field in _BOOL_FIELDS:
            kw[field] = io.parse_bool(path, used.row, "value", used.value)
        elif field in _INT_FIELDS or field in _SPEC_TEXT_FIELDS:
            kw[field] = used.value
    try:
        return spec(kw)
    except ValueError as ex:
        rows = ", ".join(str(v[0].row) for v in fields.values())
        raise io.DataError(f"{path}, rows {rows}: model '{name}': {ex}") from None


def _is_count(v: float) -> bool:
    return v >= 0 and v == int(v)


def _is_positive(v: float) -> bool:
    return v > 0


@functools.lru_cache(maxsize=4)
def _catalogue(data_dir: str) -> tuple[Mapping, Mapping, Mapping, Mapping]:
    """(specs, published totals, provenance, name index) of every model in ``data_dir``/models/models.csv.

    The name index maps each normalised name (:func:`_name_key` of a model's id and of its ``hf_repo``)
    to the ids that have it: more than one is an ambiguous name.
    """
    path = io.data_path("models", "models.csv")
    numeric = {**{f: _is_count for f in _INT_FIELDS}, **{f: _is_positive for f in _PUBLISHED}}
    raw = io.read_long_catalogue(path, "model", numeric, _BOOL_FIELDS + _TEXT_FIELDS)
    specs, pub, prov, index = {}, {}, {}, {}
    for name, fields in raw.items():
        missing = [f for f in _REQUIRED + _PUBLISHED if f not in fields]
        if missing:
            raise io.DataError(f"{path}: model '{name}' lacks field(s) {', '.join(missing)}")
        specs[name] = _spec_of(path, name, {f: v for f, v in fields.items() if f not in _PUBLISHED})
        pub[name] = Published(*(float(fields[f][0].value) for f in _PUBLISHED))
        prov[name] = {f: v[0] for f, v in fields.items()}
        aliases = [name] + ([str(fields["hf_repo"][0].value)] if "hf_repo" in fields else [])
        for key in {_name_key(a) for a in aliases}:
            index.setdefault(key, []).append(name)
    return specs, pub, prov, {k: tuple(v) for k, v in index.items()}


# ---------------------------------------------------------------------------------------------
# Name lookup
# ---------------------------------------------------------------------------------------------

#: Name parts that Hugging Face repositories add to one architecture (dropped anywhere after the first).
_DROPPED_PARTS = frozenset({"instruct", "chat", "hf", "base", "fp8", "fp4", "nvfp4", "it", "pt", "thinking"})
#: Release date stamps (DeepSeek-R1-0528, Qwen3-235B-A22B-Instruct-2507): dropped like the parts above.
_DATE_PART = re.compile(r"\d{4}")
_HINT = ("case, an org/ prefix and -Instruct/-Chat/-hf/-Base/-FP8/-FP4/-NVFP4/-it/-pt/-Thinking or date "
         "suffixes are ignored")


def _name_parts(name: str) -> tuple[str, ...]:
    """``name`` lower-cased, without an ``org/`` prefix, split on ``-`` (``_`` and spaces count as ``-``),
    without a leading ``meta`` (Meta-Llama-3.1-8B) and without the parts in :data:`_DROPPED_PARTS` or dates."""
    base = name.strip().lower().rsplit("/", 1)[-1]
    parts = [p for p in re.split(r"[-_\s]+", base) if p]
    if len(parts) > 1 and parts[0] == "meta" and parts[1].startswith("llama"):
        parts = parts[1:]
    return tuple(parts[:1] + [p for p in parts[1:] if p not in _DROPPED_PARTS and not _DATE_PART.fullmatch(p)])


def _name_key(name: str) -> str:
    return "-".join(_name_parts(name))


def _find(name) -> tuple[str | None, tuple[str, ...]]:
    """(the catalogue id ``name`` denotes or None, the ids it could mean when it denotes none alone).

    An exact id denotes itself. Otherwise the name's key (:func:`_name_key`) must be the key of exactly
    one model; when several share it they are the candidates (ambiguous), and when none has it the
    candidates are the models whose key begins with the name's parts or whose parts begin the name's
    (``Llama-3.1`` -> the three Llama 3.1 sizes), for the error message only: never taken."""
    specs, _, _, index = _catalogue(str(io.data_dir()))
    if not isinstance(name, str):
        return None, ()
    if name in specs:
        return name, ()
    parts = _name_parts(name)
    hits = index.get("-".join(parts), ())
    if len(hits) == 1:
        return hits[0], ()
    if hits:
        return None, hits
    near = []
    for key, ids in index.items():
        kp = tuple(key.split("-"))
        n = min(len(kp), len(parts))
        if n and kp[:n] == parts[:n]:
            near.extend(i for i in ids if i not in near)
    return None, tuple(i for i in specs if i in near)


def _not_found(label: str, name, candidates: tuple[str, ...], refusal: str = "is not allowed",
               extra: str = "") -> str:
    """The ``ValueError`` text for a name :func:`_find` could not resolve: ``label`` (``model='x'``)
    ``refusal``, the candidates if any, then the allowed ids (and ``extra`` alternatives)."""
    allowed = ", ".join(names()) + (f", {extra}" if extra else "")
    if not isinstance(name, str):
        return f"{label} {refusal} (a model name is a string); allowed: {allowed}"
    if candidates and _catalogue(str(io.data_dir()))[3].get(_name_key(name)):
        return (f"{label} is ambiguous: it names {', '.join(candidates)}; give one of those ids. "
                f"allowed: {allowed} ({_HINT})")
    if candidates:
        return (f"{label} {refusal} (it names no single model: did you mean {' or '.join(candidates)}?); "
                f"allowed: {allowed} ({_HINT})")
    return f"{label} {refusal}; allowed: {allowed} ({_HINT})"


def resolve(name: str) -> str:
    """The catalogue id that ``name`` denotes: the id itself, or a Hugging Face repository id or
    variant of it (see the module docstring). ``ValueError`` lists the allowed ids for an unknown name,
    and the candidates for an ambiguous or incomplete one (``"Llama-3.1"``, ``"DeepSeek"``)."""
    found, candidates = _find(name)
    if found is None:
        raise ValueError(_not_found(f"parameter model={checks.short(name)}", name, candidates))
    return found


def _lookup(table: Mapping, name: str):
    return table[resolve(name)]


def names() -> tuple[str, ...]:
    """Ids of the catalogued models, in file order."""
    return tuple(_catalogue(str(io.data_dir()))[0])


def get(name: str) -> ModelSpec:
    """The :class:`ModelSpec` of a catalogued model, by id or Hugging Face name (:func:`resolve`;
    ``ValueError`` lists the allowed ids)."""
    return _lookup(_catalogue(str(io.data_dir()))[0], name)


def published(name: str) -> Published:
    """The model's published total and active parameter counts (e.g. Kimi-K2: 1.04e12 / 32e9)."""
    return _lookup(_catalogue(str(io.data_dir()))[1], name)


def provenance(name: str) -> Mapping[str, io.SourcedValue]:
    """``{field: SourcedValue}`` (the used row of each field) for the book's tables."""
    return dict(_lookup(_catalogue(str(io.data_dir()))[2], name))
