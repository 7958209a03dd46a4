import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import collectives as co

NVL = co.Link(450e9, 0.8, 3e-6)
IB = co.Link(50e9, 0.9, 8e-6)


def test_ring_formulas():
    s = 1e9
    assert co.all_reduce_s(s, 8, co.Link(100e9)) == pytest.approx(2 * 7 / 8 * s / 100e9)
    assert co.all_gather_s(s, 8, co.Link(100e9)) == pytest.approx(7 / 8 * s / 100e9)
    assert co.all_reduce_s(s, 1, NVL) == 0
    assert co.p2p_s(s, co.Link(100e9, 1.0, 1e-6)) == pytest.approx(1e-6 + 0.01)


def test_vectorised_and_hierarchical():
    p = np.array([8, 16, 64, 512])
    t = co.hierarchical_all_reduce_s(1e9, p, 8, NVL, IB)
    assert t.shape == (4,) and np.all(np.diff(t) > 0)
    # inside one domain, hierarchical == flat on NVLink
    assert co.hierarchical_all_reduce_s(1e9, 8, 8, NVL, IB) == pytest.approx(co.all_reduce_s(1e9, 8, NVL))
    # an all-to-all spilling out of the NVLink domain is slower than one that stays inside
    assert co.hierarchical_all_to_all_s(1e9, 16, 8, NVL, IB) > co.hierarchical_all_to_all_s(1e9, 16, 72, NVL, IB)


@settings(max_examples=30, deadline=None)
@given(b=st.floats(0, 1e11), p=st.integers(1, 4096))
def test_nonnegative_and_bounded(b, p):
    t = co.all_reduce_s(b, p, IB)
    assert t >= 0
    assert t <= 2 * b / IB.effective_bytes_per_s + 2 * p * IB.latency_s + 1e-12


def test_bad_link():
    with pytest.raises(ValueError, match="efficiency"):
        co.Link(1e9, 1.5)
    with pytest.raises(ValueError):
        co.all_reduce_s(-1, 8, NVL)


@settings(max_examples=200, deadline=None)
@given(comm=st.floats(0, 10), compute=st.floats(0, 10), slowdown=st.floats(0, 1))
def test_overlap_never_beats_the_slower_side_nor_costs_more_than_the_collective(comm, compute, slowdown):
    """Overlap with contention (Lee et al. 2025): the pair ends no earlier than the contention-free max(C, W)
    and no later than running them one after the other (C + W); more contention never helps."""
    exposed = float(co.overlap_exposed_s(comm, compute, slowdown))
    assert max(0.0, comm - compute) - 1e-12 <= exposed <= comm + 1e-12
    assert float(co.overlap_exposed_s(comm, compute, slowdown + 0.1)) >= exposed - 1e-12
    assert float(co.overlap_exposed_s(comm, compute, 0.0)) == pytest.approx(max(0.0, comm - compute))


def test_overlap_worked_numbers_and_bad_input():
    # 1 s of all-gather under 10 s of GEMMs at 18.9% slowdown: the GEMMs do 1 / 1.189 s of work while it runs
    assert float(co.overlap_exposed_s(1.0, 10.0, 0.189)) == pytest.approx(1.0 - 1.0 / 1.189)
    # a collective longer than the slowed compute is exposed as without contention
    assert float(co.overlap_exposed_s(5.0, 1.0, 0.189)) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="slowdown"):
        co.overlap_exposed_s(1.0, 1.0, -0.1)


def test_one_shot_all_reduce_wins_only_for_small_messages():
    """The serving engines' one-shot kernel: two latency steps instead of a tree's 2 log2(p), but every rank reads
    all p - 1 peers' buffers, so a decode step's few KB go one-shot and a prefill's tens of MB stay on the ring."""
    link = co.Link(450e9, 0.8, 3e-6)
    small, big = 8 * 2880 * 2.0, 8192 * 8192 * 2.0
    assert co.one_shot_all_reduce_s(small, 8, link) == pytest.approx(2 * 3e-6 + 7 * small / 360e9)
    assert co.one_shot_all_reduce_s(small, 8, link) < co.all_reduce_s(small, 8, link) / 2
    assert co.one_shot_all_reduce_s(big, 8, link) > 2 * co.all_reduce_s(big, 8, link)
    assert co.one_shot_all_reduce_s(small, 1, link) == 0.0
