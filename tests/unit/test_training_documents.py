"""Packed documents with attention masked to each one (``training.estimate(document_tokens=...)``, session 53): a
causal flash-attention kernel spans the document, not the sequence, so its FLOPs follow the documents' length and its
efficiency drops where a document is shorter than the query chunk; unfused attention computes the whole masked square
whatever the documents."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intelligence_per_dollar.analysis import validation
from intelligence_per_dollar.model import training
from intelligence_per_dollar.model.training import compute

LLAMA8B = {"layers": 32, "d_model": 4096, "heads": 32, "kv_heads": 8, "d_ff": 14336, "vocab": 128256}
PAR = {"tp": 1, "pp": 1, "dp": 8, "cp": 1, "microbatch": 1, "recompute": "none", "zero": 1}


def _estimate(document_tokens=None, stack=None, seq_len=8192):
    return training.estimate(model=LLAMA8B, accelerator="H100-SXM", gpus=8, precision="bf16", seq_len=seq_len,
                             global_batch_tokens=32 * seq_len, parallelism=PAR, stack=stack,
                             document_tokens=document_tokens)


def _attention_s(est):
    return est.time_breakdown_s["step_attention_core_s"]


def test_short_documents_shorten_the_attention_and_nothing_else():
    """At 8,192 tokens, 512-token documents cost 1/16 of the scores; the kernel runs at the efficiency of a 512-token
    span (below the 8k one), so the attention core takes between 1/16 and 1/4 of its time; the GEMMs do not move."""
    full, docs = _estimate(), _estimate(document_tokens=512)
    ratio = _attention_s(docs) / _attention_s(full)
    assert 1 / 16 < ratio < 1 / 4
    assert docs.time_breakdown_s["step_gemm_s"] == pytest.approx(full.time_breakdown_s["step_gemm_s"], rel=1e-12)
    assert docs.step_time_s < full.step_time_s


def test_documents_as_long_as_the_sequence_change_nothing():
    full = _estimate()
    for docs in (8192, 65536):
        assert _estimate(document_tokens=docs).step_time_s == pytest.approx(full.step_time_s, rel=1e-12)


def test_the_span_is_the_shorter_of_sequence_and_documents():
    ctx = training.make_context(LLAMA8B, "H100-SXM", "bf16", 4096, 16 * 4096, None, "central", False,
                                document_tokens=1000)
    assert compute.attention_span(ctx) == 1000.0
    assert compute.attention_span(replace(ctx, document_tokens=0.0)) == 4096.0
    assert compute.attention_span(replace(ctx, document_tokens=9000.0)) == 4096.0


def test_unfused_attention_computes_the_masked_square_anyway():
    st_unfused = replace(training.MEGATRON_CORE, flash_attention=False)
    a, b = _estimate(stack=st_unfused, seq_len=2048), _estimate(document_tokens=256, stack=st_unfused, seq_len=2048)
    assert _attention_s(b) == pytest.approx(_attention_s(a), rel=1e-12)


@pytest.mark.parametrize("bad", [0, -5, float("nan"), True, "512", 2**30])
def test_bad_document_length_is_refused_with_its_name(bad):
    with pytest.raises(ValueError, match="document_tokens"):
        _estimate(document_tokens=bad)


@settings(max_examples=25, deadline=None)
@given(short=st.integers(min_value=64, max_value=8192), extra=st.integers(min_value=0, max_value=8192))
def test_shorter_documents_never_slow_the_step(short, extra):
    assert _estimate(document_tokens=short).step_time_s <= _estimate(document_tokens=short + extra).step_time_s + 1e-12


def test_squad_packed_rows_state_their_documents():
    """The NeMo fine-tuning rows on packed SQuAD carry 250-token documents with the estimate's derivation (17 set in
    session 53, three more in blind set 103), ProLong's two document-masked 64K rows their own estimate, and no other
    row carries any."""
    rows = [c for c in validation.runs() if "document_tokens" in c]
    assert len(rows) == 22
    squad = [c for c in rows if c["document_tokens"] == 250.0]
    assert len(squad) == 20
    older = [c for c in squad if "document_tokens 250 (session 53)" in c["note"]]
    assert len(older) == 17 and all("SQuAD" in c["note"] for c in older)
    assert all(c["id"].startswith("heldout103-c-nemoperf") and "-sft-" in c["id"] for c in squad if c not in older)
    prolong = [c for c in rows if c not in squad]
    assert [c["id"].startswith("heldout103-d-prolong") for c in prolong] == [True, True]
    assert all(c["document_tokens"] == 45000.0 and "ESTIMATED" in c["note"] for c in prolong)
    assert np.isfinite([validation.predict(c)[0] for c in rows]).all()
