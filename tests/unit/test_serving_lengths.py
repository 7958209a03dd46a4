"""Output lengths that vary (model/serving_lengths.py): the in-flight length bias of a full batch and the
long tail that ends a finite run (model/serving_benchmarks.py)."""

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from intelligence_per_dollar.model import inference as inf
from intelligence_per_dollar.model import serving_benchmarks as sb
from intelligence_per_dollar.model import serving_lengths as sl
from intelligence_per_dollar.sources import workloads

LLAMA70 = dict(layers=80, d_model=8192, heads=64, kv_heads=8, d_ff=28672, vocab=128256)


@pytest.mark.parametrize("mean,cv,cap", [(294, 0.9, 1024), (3886, 1.2, 20000), (1000, 0.5, None)])
def test_lengths_have_the_asked_mean_spread_and_cap(mean, cv, cap):
    x = sl.lengths(mean, cv, cap, 4000)
    assert x.mean() == pytest.approx(mean, rel=2e-3)
    assert x.std() / x.mean() == pytest.approx(cv, rel=1e-2)
    assert x.min() >= 1 and (cap is None or x.max() <= cap)
    assert np.all(np.diff(x) >= 0)


def test_one_length_when_nothing_varies():
    assert set(sl.lengths(500, 0.0, None, 7)) == {500}
    assert sl.in_flight_position_tokens(500) == 250.0 and sl.in_flight_final_tokens(500) == 500.0


def test_in_flight_bias_is_the_renewal_result_without_a_cap():
    # log-normal, no cap: E[L^2] / E[L] = OSL (1 + cv^2) exactly (the quantile grid is within 1%)
    for cv in (0.3, 0.8, 1.5):
        assert sl.in_flight_final_tokens(1000, cv) == pytest.approx(1000 * (1 + cv * cv), rel=0.01)
        assert sl.in_flight_position_tokens(1000, cv) == pytest.approx(500 * (1 + cv * cv), rel=0.01)


def test_a_simulated_full_batch_holds_the_length_biased_context():
    # an independent check: the discrete-event schedule of many varied requests in a batch that stays full,
    # averaged over its decode iterations, holds ISL + E[L^2] / (2 E[L]) of context per running sequence
    isl, osl, cv, n, batch = 100, 400, 1.0, 20000, 64
    lengths = sl.lengths(osl, cv, None, n)[sl.admission_order(n)]
    m, d, p, x = sb.phases(isl, osl, n, batch, isl * batch + batch, lengths)
    full = d >= batch - 1                                   # the steady middle of the run
    held = np.sum((m * d * x)[full]) / np.sum((m * d)[full])
    assert held == pytest.approx(isl + sl.in_flight_position_tokens(osl, cv), rel=0.03)
    assert held > isl + osl / 2 * 1.5                       # far from the one-length answer


def test_every_request_emits_its_own_length():
    lengths = np.array([5, 1, 9, 3, 7])
    m, d, p, _ = sb.phases(8, 5, 5, 2, 16, lengths)
    # each admission emits a request's first token, each decode iteration one per running sequence
    assert np.sum(m * d) + np.sum(p) / 8 == lengths.sum()
    step = lambda d, p, x: 0.01 + 0 * d                     # noqa: E731
    assert sb.output_tokens_per_s(step, 8, 5, 5, 2, 16, lengths) == pytest.approx(lengths.sum() / (0.01 * m.sum()))
    with pytest.raises(ValueError, match="lengths must be 5 whole numbers"):
        sb.phases(8, 5, 5, 2, 16, np.array([5, 1, 0, 3, 7]))


def test_admission_order_mixes_long_and_short_requests():
    n = 1000
    order = sl.admission_order(n)
    assert sorted(order) == list(range(n))
    rank = np.empty(n, int)
    rank[order] = np.arange(n)                               # where each sorted length is admitted
    for top in (rank[-100:], rank[:100]):                    # the longest and the shortest tenth
        thirds = np.bincount(top * 3 // n, minlength=3)
        assert thirds.min() >= 30 and thirds.max() <= 37           # sorted order: 0, 0, 100


def test_a_long_tail_lowers_a_finite_run_more_than_the_steady_state():
    kw = dict(parallelism={"tp": 1})
    one = inf.estimate(LLAMA70, "H200", 1, "fp8", 800, 2000, **kw).output_tokens_per_s_per_gpu
    spread = dict(output_tokens_cv=1.0, output_tokens_max=16000)
    steady = inf.estimate(LLAMA70, "H200", 1, "fp8", 800, 2000, **spread, **kw).output_tokens_per_s_per_gpu
    finite = inf.estimate(LLAMA70, "H200", 1, "fp8", 800, 2000, requests=500, **spread, **kw)
    longer = inf.estimate(LLAMA70, "H200", 1, "fp8", 800, 2000, requests=5000, **spread, **kw)
    assert finite.output_tokens_per_s_per_gpu < longer.output_tokens_per_s_per_gpu < steady < one
    # the drain of a run that ends on a 16,000-token request takes ~16,000 small-batch iterations
    assert longer.output_tokens_per_s_per_gpu == pytest.approx(steady, rel=0.25)


@settings(max_examples=15, deadline=None)
@given(cv=st.floats(0.0, 1.2), more=st.floats(0.05, 0.5))
def test_more_spread_never_raises_steady_throughput(cv, more):
    kw = dict(parallelism={"tp": 2}, output_tokens_max=20000)
    a = inf.estimate(LLAMA70, "H200", 2, "fp8", 1000, 1000, output_tokens_cv=cv, **kw)
    b = inf.estimate(LLAMA70, "H200", 2, "fp8", 1000, 1000, output_tokens_cv=cv + more, **kw)
    assert b.output_tokens_per_s_per_gpu <= a.output_tokens_per_s_per_gpu * (1 + 1e-9)
    assert b.max_concurrency <= a.max_concurrency


@pytest.mark.parametrize("kw,msg", [(dict(output_tokens_cv=-0.1), "output_tokens_cv"),
                                    (dict(output_tokens_cv="1"), "output_tokens_cv"),
                                    (dict(output_tokens_cv=0.5, output_tokens_max=500), "output_tokens_max=500 is below"),
                                    (dict(output_tokens_cv=3.0, output_tokens_max=1500), "cannot be reached"),
                                    (dict(output_tokens_max=0), "output_tokens_max")])
def test_length_spread_is_validated(kw, msg):
    with pytest.raises(ValueError, match=msg):
        inf.estimate(LLAMA70, "H200", 2, "fp8", 1000, 1000, **kw)


def test_deepseek_r1_dataset_lengths_match_mlperfs_published_means():
    from intelligence_per_dollar.sources import runs, workloads
    ins, outs = workloads.length_sample("mlperf-deepseek-r1")
    assert len(outs) == 4388                                  # the benchmark's sample count
    # the reference outputs (32K cap) average 4043.45 (older README); clipped at v5.1's 20,000-token cap they
    # give v5.1's published mean 3886.2274: two independent checks of the file
    assert np.mean(outs) == pytest.approx(4043.45, abs=0.01)
    mean, cv = sl.spread(outs, 20000)
    assert mean == pytest.approx(3886.2274, abs=0.01)
    assert np.mean(ins) == pytest.approx(804, abs=1)
    rows = [c for c in runs.inference_runs() if "mlperf" in c["id"] and "deepseek-r1" in c["id"]]
    assert rows and all(c["output_tokens_cv"] == pytest.approx(cv, abs=5e-4) for c in rows)
    assert all(c["output_tokens_max"] == 20000 and c["output_tokens"] == round(mean) for c in rows)


def test_spread_is_validated():
    with pytest.raises(ValueError, match="sample must be"):
        sl.spread([])
    with pytest.raises(ValueError, match="sample must be"):
        sl.spread([3, 0, 5])
    with pytest.raises(ValueError, match="dataset='nope'"):
        __import__("intelligence_per_dollar.sources.workloads", fromlist=["x"]).length_sample("nope")



def test_sharegpt_file_is_vllms_default_sample():
    """data/workloads/lengths/sharegpt-vllm.csv: the first 1,000 requests are what `vllm bench serve --dataset-name
    sharegpt` sends by default; their prompts sum to the 215,196 tokens vLLM prints for that run with a Llama 3.1
    tokenizer (vllm-project/vllm issue 7567), an independent check of the file. Its outputs obey vLLM's sampling rules."""
    from intelligence_per_dollar.sources import workloads
    ins, outs = (np.asarray(v) for v in workloads.length_sample("sharegpt-vllm"))
    assert len(outs) == 2308 and ins[:1000].sum() == 215196
    assert outs.min() >= 4 and ins.min() >= 4 and ins.max() <= 1024 and (ins + outs).max() <= 2048
    mean, cv = sl.spread(outs)
    assert mean == pytest.approx(203.7, abs=0.1) and cv == pytest.approx(1.02, abs=0.005)


def test_a_dataset_gives_its_own_shape_rescaled_to_the_mean():
    x = sl.lengths(400, 0.0, None, 2308, "sharegpt-vllm")
    outs = np.sort(np.asarray(__import__("intelligence_per_dollar.sources.workloads",
                                         fromlist=["x"]).length_sample("sharegpt-vllm")[1], float))
    assert x.mean() == pytest.approx(400, rel=3e-3)
    # every request of the file, rescaled by 400 / its mean: the same spread and the same longest request
    assert x.std() / x.mean() == pytest.approx(outs.std() / outs.mean(), rel=1e-2)
    assert x.max() == pytest.approx(outs.max() * 400 / outs.mean(), rel=1e-2)
    # ShareGPT's tail is thinner than a log-normal's of the same spread: fewer requests past 5x the mean
    logn = sl.lengths(400, float(outs.std() / outs.mean()), None, 2308)
    assert (x > 2000).sum() < (logn > 2000).sum()
    # a cap clips the rescaled lengths and the mean still holds
    y = sl.lengths(400, 0.0, 1200, 1000, "sharegpt-vllm")
    assert y.max() <= 1200 and y.mean() == pytest.approx(400, rel=5e-3)


def test_a_dataset_burst_drains_on_its_tail():
    """A 1,000-request burst over ShareGPT's lengths ends on its longest answers, so it runs below the same burst of one
    length, and its steady state holds the length-biased context (E[L^2] / E[L] above the mean)."""
    kw = dict(parallelism={"tp": 1}, requests=1000)
    one = inf.estimate(LLAMA70, "H200", 1, "fp8", 215, 200, **kw).output_tokens_per_s_per_gpu
    ds = inf.estimate(LLAMA70, "H200", 1, "fp8", 215, 200, output_dataset="sharegpt-vllm", **kw)
    assert ds.output_tokens_per_s_per_gpu < 0.9 * one
    assert sl.in_flight_final_tokens(200, 0.0, None, "sharegpt-vllm") == pytest.approx(200 * (1 + 1.02 ** 2), rel=0.02)


@pytest.mark.parametrize("kw,msg", [(dict(output_dataset="nope"), "output_dataset='nope' must name a per-request length"),
                                    (dict(output_dataset="sharegpt-vllm", output_tokens_cv=0.5),
                                     "cannot go with output_dataset"),
                                    (dict(output_dataset=3), "output_dataset=3")])
def test_output_dataset_is_validated(kw, msg):
    with pytest.raises(ValueError, match=msg):
        inf.estimate(LLAMA70, "H200", 2, "fp8", 1000, 1000, **kw)


def test_run_rows_name_a_dataset_with_a_length_file(tmp_path):
    from intelligence_per_dollar.sources import io as sio, runs
    rows = [c for c in runs.inference_runs() if c["output_dataset"]]
    assert len(rows) >= 10
    assert {c["output_dataset"] for c in rows} == {"sharegpt-vllm", "mlperf-llama2-70b", "mlperf-llama3.1-405b"}
    assert all(c["output_dataset"].startswith("mlperf-") == ("mlperf" in c["id"]) for c in rows)
    text = sio.data_path("runs", "inference_runs.csv").read_text()
    bad = tmp_path / "runs.csv"
    assert ",sharegpt-vllm," in text
    bad.write_text(text.replace(",sharegpt-vllm,", ",sharegpt,", 1))
    with pytest.raises(sio.DataError, match="column 'output_dataset': output_dataset='sharegpt' must name"):
        runs.inference_runs(bad)
    # a row that names a dataset and a cv as well: the loader refuses it, naming the cv column
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if ",sharegpt-vllm," in line)
    cells = next(csv.reader([lines[i]]))
    header = next(csv.reader([next(line for line in lines if line.startswith("id,"))]))
    cells[header.index("output_tokens_cv")] = "0.5"
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    lines[i] = out.getvalue()
    bad2 = tmp_path / "runs2.csv"
    bad2.write_text("\n".join(lines) + "\n")
    with pytest.raises(sio.DataError, match="column 'output_tokens_cv': '0.5' cannot go with output_dataset"):
        runs.inference_runs(bad2)


def test_a_dataset_spread_reaches_the_steady_state_and_the_frontier():
    """The dataset's lengths also set the steady state (a full batch holds its long answers: more KV cache per
    sequence, longer attention reads) and the frontier, not only finite runs."""
    kw = dict(parallelism={"tp": 1}, concurrency=64)
    one = inf.estimate(LLAMA70, "H200", 1, "fp8", 215, 200, **kw)
    ds = inf.estimate(LLAMA70, "H200", 1, "fp8", 215, 200, output_dataset="sharegpt-vllm", **kw)
    assert ds.output_tokens_per_s_per_gpu < one.output_tokens_per_s_per_gpu
    assert ds.max_concurrency < one.max_concurrency
    f1 = inf.frontier(LLAMA70, "H200", 1, "fp8", 215, 200, parallelism={"tp": 1}, points=8)
    f2 = inf.frontier(LLAMA70, "H200", 1, "fp8", 215, 200, parallelism={"tp": 1}, points=8, output_dataset="sharegpt-vllm")
    assert f2.output_tokens_per_s_per_gpu.max() < f1.output_tokens_per_s_per_gpu.max()


def test_every_length_file_states_its_source():
    """Each per-request length file carries its provenance in its header comments: where it was read, when, and its kind."""
    from intelligence_per_dollar.sources import io as sio, workloads
    names = workloads.length_sample_names()
    assert {"mlperf-deepseek-r1", "sharegpt-vllm"} <= set(names)
    for name in names:
        head = [l for l in sio.data_path("workloads", "lengths", f"{name}.csv").read_text().splitlines()
                if l.startswith("#")]
        text = "\n".join(head)
        assert "# source_url: https://" in text and "# date_read: 2026-" in text and "kind: measured" in text, name


@pytest.mark.parametrize("name,samples,mean_in,mean_out,cv_out,max_out", [
    ("mlperf-llama2-70b", 24576, 222.33, 218.89, 0.787, 1016),
    ("mlperf-llama3.1-405b", 8313, 9428.6, 684.7, 0.381, 1830)])
def test_mlperf_length_files_are_the_whole_datasets(name, samples, mean_in, mean_out, cv_out, max_out):
    """The MLPerf llama2-70b and llama3.1-405b length files hold every sample of their MLCommons datasets: the counts
    and means their headers state (input means 222 and 9,429: the MLPerf rows' input_tokens; the 405B output mean
    685: its rows' output_tokens)."""
    ins, outs = workloads.length_sample(name)
    o = np.asarray(outs, float)
    assert len(ins) == len(outs) == samples
    assert np.mean(ins) == pytest.approx(mean_in, abs=0.05) and o.mean() == pytest.approx(mean_out, abs=0.05)
    assert o.std() / o.mean() == pytest.approx(cv_out, abs=0.001) and o.max() == max_out
