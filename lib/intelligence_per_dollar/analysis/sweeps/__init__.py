"""Sweeps: a spec (``data/sweeps/*.yml``) -> samples -> one function call per sample -> a table,
run serially or on dask.distributed, cached on disk by inputs and model/data version.

* :mod:`.spec` -- the spec, validated (names, distributions, sample size, seed, provenance);
* :mod:`.derived` -- distributions computed from the book's data (the model's validated error);
* :mod:`.sampling` -- the samples;
* :mod:`.runner` -- serial, local-cluster or remote-cluster runs (:func:`run`);
* :mod:`.cache` -- the Parquet cache;
* :mod:`.sensitivity` -- rank correlations, PRCC and the region where a condition holds;
* :mod:`.gpu_ratio` -- the joint uncertainty of chapter 2's GPU ratio.

``from intelligence_per_dollar.analysis import sweeps; sweeps.run(sweeps.load_spec("gpu-ratio-10t"))``
"""

from intelligence_per_dollar.analysis.sweeps.cache import cache_dir, cache_key, cache_path, cached, store
from intelligence_per_dollar.analysis.sweeps.runner import SCHEDULER_ENV, SERIAL, compute, default_workers, run
from intelligence_per_dollar.analysis.sweeps.sampling import SAMPLE, draw
from intelligence_per_dollar.analysis.sweeps.sensitivity import encode, rank_sensitivity, region
from intelligence_per_dollar.analysis.sweeps.spec import (DISTRIBUTIONS, METHODS, Parameter, SweepSpec, load_spec,
                                                          resolve_function, spec_from_dict)

__all__ = ["SweepSpec", "Parameter", "DISTRIBUTIONS", "METHODS", "SAMPLE", "SCHEDULER_ENV", "SERIAL", "load_spec",
           "spec_from_dict", "resolve_function", "draw", "run", "compute", "default_workers", "cache_dir",
           "cache_key", "cache_path", "cached", "store", "encode", "rank_sensitivity", "region"]
