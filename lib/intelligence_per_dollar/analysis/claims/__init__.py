"""The claims ledger and chapter 4's tables: every quantitative claim of the seed, checked by the
book's own functions, and the cost tables built from the same adapters.

Nothing in the ledger is typed in. Each row's *claim* (the quote, its primary source, the number
it asserts and the rule that judges it) is a row of ``data/claims/claims.csv``; the *estimate* is
computed by calling the chapters' functions, with an interval from :mod:`.uncertainty` wherever an
input has a low/central/high range; the *verdict* follows from the estimate by the explicit rules
of :func:`decide`. Modules, in the order data flows:

* :mod:`.definitions` -- the claims file, the systems compared, the ranged assumptions;
* :mod:`.verdicts` -- :func:`decide` and the one tolerance rule (:func:`meets_claim`);
* :mod:`.intervals` -- Monte Carlo intervals and their text;
* :mod:`.pretraining`, :mod:`.serving`, :mod:`.rl`, :mod:`.tasks` -- adapters to chapters 2, 3 and 4,
  reading the named workloads (:mod:`intelligence_per_dollar.sources.workloads`) and models;
* :mod:`.tables` -- chapter 4's tables (USD per GPU-hour, task cost, break-even, lifecycle);
* :mod:`.row`, :mod:`.rows_hardware`, :mod:`.rows_training`, :mod:`.rows_post_training`,
  :mod:`.rows_economics` -- one estimator per claim;
* :mod:`.ledger_table` -- :func:`ledger` and its views.

Everything a chapter or the CLI calls is re-exported here: ``from intelligence_per_dollar.analysis
import claims; claims.ledger()``.
"""

from intelligence_per_dollar.analysis.claims.definitions import (CANDIDATE_SYSTEM, COLUMNS, REFERENCE_SYSTEM, RULES,
                                                                 VERDICTS, Claim, all_assumptions, claims, overrides,
                                                                 parse_claims, section_link, workload_assumptions)
from intelligence_per_dollar.analysis.claims.intervals import mc_interval
from intelligence_per_dollar.analysis.claims.ledger_table import (ledger, ledger_view, relative_to_claim,
                                                                  verdict_counts)
from intelligence_per_dollar.analysis.claims.pretraining import (training_gpu_ratio, training_gpus,
                                                                 training_tokens_per_s_per_gpu)
from intelligence_per_dollar.analysis.claims.rl import (rl_campaign, rl_fleet, rl_gpu_hour_ratio, rl_step,
                                                        weight_sync_range)
from intelligence_per_dollar.analysis.claims.serving import (BLOG_SERVING_MODEL, mlperf_rack_comparison,
                                                             serving_cost_ratio_curve, serving_frontier,
                                                             serving_throughput_ratio,
                                                             serving_usd_per_mtok, throughput_at_interactivity,
                                                             usd_per_mtok)
from intelligence_per_dollar.analysis.claims.tables import (break_even_table, gpu_hour_intervals, lifecycle_table,
                                                            task_cost_by_system, task_cost_by_quality)
from intelligence_per_dollar.analysis.claims.tasks import (engineer_usd_per_issue, policy_table, swe_task_cost,
                                                           task_kwargs)
from intelligence_per_dollar.analysis.claims.verdicts import Verdict, claim_bar, decide, meets_claim

__all__ = ["VERDICTS", "RULES", "COLUMNS", "REFERENCE_SYSTEM", "CANDIDATE_SYSTEM", "BLOG_SERVING_MODEL", "Claim",
           "Verdict", "claims", "parse_claims", "section_link", "all_assumptions", "workload_assumptions",
           "overrides", "decide", "claim_bar", "meets_claim", "ledger", "ledger_view", "relative_to_claim",
           "verdict_counts", "mc_interval", "training_gpus", "training_gpu_ratio", "training_tokens_per_s_per_gpu",
           "serving_frontier", "throughput_at_interactivity", "usd_per_mtok", "serving_usd_per_mtok",
           "serving_cost_ratio_curve", "serving_throughput_ratio", "mlperf_rack_comparison", "rl_fleet", "rl_step",
           "rl_campaign",
           "rl_gpu_hour_ratio", "weight_sync_range", "task_kwargs", "swe_task_cost", "engineer_usd_per_issue",
           "policy_table", "gpu_hour_intervals", "task_cost_by_system", "task_cost_by_quality",
           "break_even_table", "lifecycle_table"]
