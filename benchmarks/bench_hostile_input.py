"""Hostile and extreme input (issue 14): how long each case of the issue takes now and what it
answers (a number, or the first line of the error). Every case should answer within a couple of
seconds with a ValueError (API) or exit 2 (CLI) naming the parameter, its value and what is allowed.

Run: ``python benchmarks/bench_hostile_input.py`` (the ``ipd report --out`` cases start the CLI:
~4 s each, mostly imports).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from intelligence_per_dollar.app import scenario as sc
from intelligence_per_dollar.model import architecture, economics, inference, post_training
from intelligence_per_dollar.sources import models, workloads

BILLION_LAUGHS = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
                  + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
                  + "01_hardware:\n  accelerators: *i\n")


def case(label: str, fn) -> None:
    t0 = time.perf_counter()
    try:
        out = f"-> {fn()!r}"
    except Exception as ex:  # noqa: BLE001 - a benchmark reports whatever happens
        out = f"{type(ex).__name__}: {str(ex).splitlines()[-1] if isinstance(ex, sc.ScenarioError) else ex}"
    print(f"{time.perf_counter() - t0:8.3f} s  {label}: {out[:240]}", flush=True)


def scenario_cases(tmp: Path) -> None:
    files = {"alias bomb (9 levels of 9)": BILLION_LAUGHS,
             "76 MB scenario": "description: " + "x" * 76_000_000 + "\n",
             "300k-item list (2.7 MB)": "01_hardware:\n  accelerators: [" + ", ".join(["H100-SXM"] * 300_000) + "]\n",
             "4,000 unknown names (under the limits)": "01_hardware:\n  accelerators: ["
             + ", ".join(f"gpu{i}" for i in range(4000)) + "]\n",
             'quoted "4096" for an integer': '02_training:\n  seq_len: "4096"\n'}
    for label, text in files.items():
        path = tmp / "s.yml"
        path.write_text(text)
        case(f"scenario, {label}", lambda p=path: len(str(sc.load(p))))
        try:
            sc.load(path)
        except sc.ScenarioError as ex:
            print(f"{'':10}(message: {len(str(ex)):,} characters)")


def model_cases() -> None:
    ds = models.get("DeepSeek-V3")
    rl = dict(workloads.rl().step_kwargs(), usd_per_gpu_hour=3.0, cpu_usd_per_hour=0.05, rollout_efficiency=0.7)
    sync = dict(senders=8, receivers=8, receiver_shard_gpus=8, link_bytes_per_s=5e10)
    task = dict(prefix_tokens=1000, output_tokens_per_step=100, tool_result_tokens_per_step=100,
                input_usd_per_mtok=1, output_usd_per_mtok=1)
    case("weight_sync_time_s(convert_bytes_per_s=-1)",
         lambda: post_training.weight_sync_time_s(1e12, **sync, convert_bytes_per_s=-1))
    case("weight_sync_time_s(convert_bytes_per_s=nan)",
         lambda: post_training.weight_sync_time_s(1e12, **sync, convert_bytes_per_s=float("nan")))
    case("inference.estimate(gpus=10**9)", lambda: inference.estimate(ds, "GB200", 10**9).output_tokens_per_s_per_gpu)
    case("inference.estimate(gpus=999999937, prime)",
         lambda: inference.estimate(ds, "GB200", 999999937).output_tokens_per_s_per_gpu)
    case("inference.estimate(gpus=10**12)", lambda: inference.estimate(ds, "GB200", 10**12))
    case("cost_per_successful_task(steps=10**9)", lambda: float(economics.cost_per_successful_task(1.0, 10**9, **task)))
    case("cost_per_successful_task(steps=10**12)", lambda: economics.cost_per_successful_task(1.0, 10**12, **task))
    case("rl_step(trainer_seq_len=256)",
         lambda: post_training.rl_step(models.get("Nemotron-3-Ultra"), "GB200", 144, 144, **rl, trainer_seq_len=256))
    case("inference.estimate(input_tokens=10**8): KV cache, not weights",
         lambda: inference.estimate(ds, "GB200", 72, input_tokens=10**8))
    case("inference.estimate on Rubin-Ultra", lambda: inference.estimate(ds, "Rubin-Ultra", 8))
    case("attention_flops_per_token(seq_len=True)", lambda: architecture.attention_flops_per_token(ds, True))
    case("models.spec(layers=np.int64(2))", lambda: models.spec(
        {"layers": __import__("numpy").int64(2), "d_model": 64, "heads": 4, "d_ff": 128, "vocab": 100}).layers)
    case("agentic_task_cost(detect_failures='yes')",
         lambda: economics.agentic_task_cost(0.9, 5, **task, detect_failures="yes"))


def cli_cases(tmp: Path) -> None:
    ipd = Path(sys.executable).parent / "ipd"
    (tmp / "afile").write_text("keep me")
    for out in (tmp / "afile" / "html", tmp / "afile", Path("/proc/ipd-no-such/html")):
        t0 = time.perf_counter()
        proc = subprocess.run([str(ipd), "report", "--no-progress", "--out", str(out)], capture_output=True, text=True)
        print(f"{time.perf_counter() - t0:8.3f} s  ipd report --out {out}: exit {proc.returncode}, "
              f"{proc.stderr.count(chr(10))} line(s): {proc.stderr.strip()[:200]}", flush=True)
    t0 = time.perf_counter()
    (tmp / "bomb.yml").write_text(BILLION_LAUGHS)
    proc = subprocess.run([str(ipd), "validate", str(tmp / "bomb.yml")], capture_output=True, text=True)
    print(f"{time.perf_counter() - t0:8.3f} s  ipd validate bomb.yml: exit {proc.returncode}", flush=True)


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        scenario_cases(Path(d))
        model_cases()
        cli_cases(Path(d))


if __name__ == "__main__":
    main()
