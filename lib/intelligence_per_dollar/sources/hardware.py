"""Accelerators and systems: the sourced catalogue, loaded into typed records, and lookup.

The catalogue lives in ``data/hardware/accelerators.csv`` and ``data/hardware/systems.csv`` in
long format (one row per value, each with source URL, date read, kind and note). Where sources
disagree the file keeps every row and marks the one the book uses (``used=true``); the others
stay visible as :attr:`Accelerator.alternatives`. Like-for-like peak figures (dense FLOP/s, ridge
point, per watt) are computed from these records in :mod:`intelligence_per_dollar.model.peaks`, and
chapter 1's tables in :mod:`intelligence_per_dollar.analysis.hardware_tables`.

Conventions (SI throughout):

* ``*_dense_flop_per_s`` is the peak *without* 2:4 structured sparsity. Vendor headline figures
  are often sparse (2x dense) or, for Rubin, "Transformer Engine compute" (about 1.43x dense).
* ``scaleup_bytes_per_s_bidirectional`` is the NVLink bandwidth per GPU with both directions
  summed, as NVIDIA quotes it; collectives use the one-way half
  (:attr:`Accelerator.scaleup_bytes_per_s_one_way`).
* ``scaleout_bytes_per_s`` is one direction of the GPU's scale-out NIC.
* ``hbm_bytes`` is the datasheet capacity (what the hardware chapter compares); ``device_memory_bytes`` the total
  the driver reports (nvidia-smi), which capacity models use (:attr:`Accelerator.memory_capacity_bytes`).
* ``host_link`` / ``host_link_bytes_per_s``: the CPU-GPU link (PCIe or NVLink-C2C) and its rate in one
  direction (host to GPU); ``host_memory_bytes``: the host memory per GPU (the server's or superchip's CPU
  memory over its GPUs). Used to serve with weights offloaded to host memory (``model.serving_offload``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from intelligence_per_dollar.sources import checks, io

#: Precisions the book models, from narrowest to widest.
PRECISIONS = ("fp4", "fp8", "bf16", "tf32", "fp64")

#: Bytes per element for each precision (FP4 formats carry a per-block scale: NVFP4 stores one
#: FP8 scale per 16 values, i.e. 4.5 bits per value; MXFP4 one 8-bit scale per 32 -> 4.25 bits).
BYTES_PER_ELEMENT = MappingProxyType({"fp4": 4.5 / 8, "fp8": 1.0, "bf16": 2.0, "tf32": 4.0, "fp64": 8.0})

ACCELERATOR_IDS = ("A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe", "H800", "H100-NVL", "H20", "GH200-96GB", "H200",
                   "GH200-144GB", "H200-NVL", "B200", "GB200", "B300", "GB300", "VR200", "Rubin-Ultra")
SYSTEM_IDS = ("HGX-H100", "HGX-H200", "GB200-NVL72", "GB300-NVL72", "Vera-Rubin-NVL72",
              "Rubin-Ultra-NVL576", "HGX-H100-4GPU")
#: How a system's GPUs reach each other over NVLink (``System.scaleup_topology``): ``switch``, every GPU's links go
#: to NVSwitches, so any pair talks at the GPU's full NVLink rate; ``mesh``, the GPUs are wired to each other
#: directly, every pair by an equal share of each GPU's links (an HGX H100 4-GPU board: 6 of 18 NVLinks per pair).
SCALEUP_TOPOLOGIES = ("switch", "mesh")

#: Other names people use, mapped to catalogue ids (lookups are case-insensitive too).
ALIASES = MappingProxyType({
    "A100": "A100-80GB", "H100": "H100-SXM", "GH200": "GH200-96GB", "Rubin": "VR200", "R200": "VR200",
    "VR-NVL72": "Vera-Rubin-NVL72", "VR200-NVL72": "Vera-Rubin-NVL72", "NVL72-VR": "Vera-Rubin-NVL72",
    "Rubin Ultra": "Rubin-Ultra", "RubinUltra": "Rubin-Ultra",
})


def _pos(v: float) -> bool:
    return v > 0


_ACC_NUMERIC = {
    "fp4_dense_flop_per_s": _pos, "fp8_dense_flop_per_s": _pos, "bf16_dense_flop_per_s": _pos,
    "tf32_dense_flop_per_s": _pos, "fp64_flop_per_s": _pos, "headline_flop_per_s": _pos,
    "hbm_bytes": _pos, "hbm_bytes_per_s": _pos, "scaleup_bytes_per_s_bidirectional": _pos,
    "scaleup_domain_gpus": lambda v: v >= 1 and v == int(v), "scaleout_bytes_per_s": _pos,
    "power_w": _pos, "year": lambda v: 2000 <= v <= 2100, "sm_count": lambda v: v >= 1,
    "host_link_bytes_per_s": _pos, "host_memory_bytes": _pos, "device_memory_bytes": _pos,
}
_ACC_TEXT = ("headline_precision", "headline_counts", "memory_type", "scaleup_link", "host_link")
_ACC_REQUIRED = ("hbm_bytes", "hbm_bytes_per_s", "scaleup_domain_gpus", "power_w", "year")

_SYS_NUMERIC = {
    "gpus": lambda v: v >= 1 and v == int(v), "cpus": lambda v: v >= 0,
    "scaleup_domain_gpus": lambda v: v >= 1, "system_power_w": _pos,
    "headline_fp4_flop_per_s": _pos, "nvlink_aggregate_bytes_per_s": _pos, "hbm_bytes": _pos,
    "lpddr_bytes": _pos, "year": lambda v: 2000 <= v <= 2100,
}
_SYS_TEXT = ("accelerator", "cpu_model", "headline_counts", "scaleup_topology")
_SYS_REQUIRED = ("accelerator", "gpus", "scaleup_domain_gpus")


@dataclass(frozen=True)
class Accelerator:
    """One GPU package, with the value the book uses for each field and its provenance."""

    id: str
    year: int
    hbm_bytes: float
    hbm_bytes_per_s: float
    scaleup_domain_gpus: int
    power_w: float
    bf16_dense_flop_per_s: float | None = None
    scaleup_bytes_per_s_bidirectional: float | None = None
    fp4_dense_flop_per_s: float | None = None
    fp8_dense_flop_per_s: float | None = None
    tf32_dense_flop_per_s: float | None = None
    fp64_flop_per_s: float | None = None
    headline_flop_per_s: float | None = None
    headline_precision: str | None = None
    headline_counts: str | None = None
    scaleout_bytes_per_s: float | None = None
    memory_type: str | None = None
    scaleup_link: str | None = None
    sm_count: int | None = None
    host_link: str | None = None
    host_link_bytes_per_s: float | None = None
    host_memory_bytes: float | None = None
    device_memory_bytes: float | None = None
    provenance: Mapping[str, io.Provenance] = field(default_factory=dict, repr=False, compare=False)
    alternatives: Mapping[str, tuple[io.SourcedValue, ...]] = field(default_factory=dict, repr=False,
                                                                     compare=False)

    @property
    def scaleup_bytes_per_s_one_way(self) -> float:
        """NVLink bandwidth per GPU per direction: half the bidirectional figure.

        Raises ``ValueError`` when the catalogue has no figure (Rubin Ultra is unannounced).
        """
        if self.scaleup_bytes_per_s_bidirectional is None:
            raise ValueError(f"accelerator {self.id!r} has no scale-up bandwidth in the catalogue "
                             f"(field scaleup_bytes_per_s_bidirectional)")
        return self.scaleup_bytes_per_s_bidirectional / 2.0

    @property
    def memory_capacity_bytes(self) -> float:
        """Device memory a process can allocate from, B: the driver's total where the catalogue has it
        (``device_memory_bytes``, nvidia-smi ``memory.total``), else the datasheet ``hbm_bytes``. The datasheet
        figures are GiB-like (H100 "80 GB" reports 81,559 MiB = 85.5e9 B), so capacity models use this."""
        return self.device_memory_bytes or self.hbm_bytes

    def supports(self, precision: str) -> bool:
        """Whether the tensor cores run ``precision`` natively (has a dense peak for it)."""
        check_precision(precision)
        return getattr(self, f"{precision}_dense_flop_per_s" if precision != "fp64" else "fp64_flop_per_s") is not None


@dataclass(frozen=True)
class System:
    """A rack or server: a number of accelerators joined by one scale-up (NVLink) domain."""

    id: str
    accelerator: str
    gpus: int
    scaleup_domain_gpus: int
    cpus: float | None = None
    cpu_model: str | None = None
    system_power_w: float | None = None
    headline_fp4_flop_per_s: float | None = None
    headline_counts: str | None = None
    nvlink_aggregate_bytes_per_s: float | None = None
    hbm_bytes: float | None = None
    lpddr_bytes: float | None = None
    year: int | None = None
    scaleup_topology: str = "switch"
    provenance: Mapping[str, io.Provenance] = field(default_factory=dict, repr=False, compare=False)


#: Other names of the precisions, as engines and checkpoints write them (case-insensitive): the block-scaled 4-bit formats
#: (NVFP4, MXFP4) run on the FP4 tensor cores, MXFP8 and E4M3 on the FP8 ones, FP16 at the BF16 rate and size.
PRECISION_ALIASES = MappingProxyType({"nvfp4": "fp4", "mxfp4": "fp4", "mxfp8": "fp8", "e4m3": "fp8", "fp8_e4m3": "fp8",
                                      "bfloat16": "bf16", "fp16": "bf16", "float16": "bf16"})


def precision_id(value, name: str = "precision", allowed=PRECISIONS) -> str:
    """The book's name of a precision: ``value`` itself, any case (``"FP8"``), or one of
    :data:`PRECISION_ALIASES` (``"nvfp4"``, ``"MXFP4"`` -> ``"fp4"``). ``ValueError`` naming ``name``, the value and
    what is allowed otherwise."""
    key = value.strip().lower() if isinstance(value, str) else value
    key = PRECISION_ALIASES.get(key, key)
    if not isinstance(key, str) or key not in allowed:
        raise ValueError(f"{name}={checks.short(value)} is not allowed; allowed: {', '.join(allowed)} "
                         f"(any case), or {', '.join(PRECISION_ALIASES)}")
    return key


def check_precision(precision: str) -> None:
    """``ValueError`` unless ``precision`` is one of :data:`PRECISIONS`."""
    checks.choice("precision", precision, PRECISIONS)


def _build(cls, ident, fields, required, path, int_fields=()):
    missing = [f for f in required if f not in fields]
    if missing:
        raise io.DataError(f"{path}: '{ident}' lacks required field(s) {', '.join(missing)}")
    kwargs = {}
    for name, values in fields.items():
        v = values[0].value
        kwargs[name] = int(v) if name in int_fields else v
    prov = MappingProxyType({k: vs[0].provenance for k, vs in fields.items()})
    extra = {"provenance": prov}
    if cls is Accelerator:
        extra["alternatives"] = MappingProxyType({k: tuple(vs[1:]) for k, vs in fields.items() if len(vs) > 1})
    return cls(id=ident, **kwargs, **extra)


@functools.lru_cache(maxsize=4)
def _catalogue(data_dir: str) -> tuple[Mapping[str, Accelerator], Mapping[str, System]]:
    acc_path = io.data_path("hardware", "accelerators.csv")
    raw = io.read_long_catalogue(acc_path, "accelerator", _ACC_NUMERIC, _ACC_TEXT)
    accs = {k: _build(Accelerator, k, f, _ACC_REQUIRED, acc_path,
                      int_fields=("year", "scaleup_domain_gpus", "sm_count")) for k, f in raw.items()}
    sys_path = io.data_path("hardware", "systems.csv")
    raw_s = io.read_long_catalogue(sys_path, "system", _SYS_NUMERIC, _SYS_TEXT)
    systems = {}
    for k, f in raw_s.items():
        s = _build(System, k, f, _SYS_REQUIRED, sys_path, int_fields=("gpus", "scaleup_domain_gpus", "year"))
        if s.accelerator not in accs:
            raise io.DataError(f"{sys_path}: system '{k}' names accelerator '{s.accelerator}', "
                               f"which is not in {acc_path}")
        if s.scaleup_topology not in SCALEUP_TOPOLOGIES:
            raise io.DataError(f"{sys_path}: system '{k}' has scaleup_topology '{s.scaleup_topology}'; allowed: "
                               f"{', '.join(SCALEUP_TOPOLOGIES)}")
        if s.scaleup_domain_gpus > accs[s.accelerator].scaleup_domain_gpus:
            raise io.DataError(f"{sys_path}: system '{k}' has scaleup_domain_gpus {s.scaleup_domain_gpus}, more than "
                               f"its accelerator {s.accelerator}'s NVLink domain ({accs[s.accelerator].scaleup_domain_gpus})")
        systems[k] = s
    return MappingProxyType(accs), MappingProxyType(systems)


def catalogue() -> tuple[Mapping[str, Accelerator], Mapping[str, System]]:
    """Load (once) and return ``(accelerators, systems)`` keyed by id."""
    return _catalogue(str(io.data_dir()))


def accelerators() -> Mapping[str, Accelerator]:
    """Every accelerator in the catalogue, keyed by id."""
    return catalogue()[0]


def systems() -> Mapping[str, System]:
    """Every system (rack or server) in the catalogue, keyed by id."""
    return catalogue()[1]


#: Words that do not tell catalogue parts apart: vendor, the SXM form factor every catalogue part has,
#: and memory sizes (each catalogue id names one memory size). "H100 PCIe" or "H100 NVL" keep their
#: form-factor word, so they do not resolve to the SXM part.
_NOISE_WORDS = re.compile(r"nvidia|sxm\d?|\d+gb|hbm\d?e?")


def _canonical(name: str) -> str:
    """``name`` without case, separators and :data:`_NOISE_WORDS`: "NVIDIA H100 SXM5 80GB" -> "h100"."""
    words = re.split(r"[\s_\-/()]+", re.sub(r"(\d+)\s*gb\b", r"\1gb", name.lower()))
    return "".join(re.sub(r"[^a-z0-9]", "", w) for w in words if not _NOISE_WORDS.fullmatch(w))


def _stated_memory_gb(name) -> float | None:
    """The memory size a part's name states ("A100 40GB" -> 40.0), or None."""
    m = re.search(r"(\d+)\s*gb", name.lower()) if isinstance(name, str) else None
    return float(m.group(1)) if m else None


def _memory_agrees(gb: float, part) -> bool:
    """Whether ``gb`` stated in a name is within 10% of ``part``'s HBM (True when the part has none)."""
    mem = getattr(part, "hbm_bytes", None)
    return not mem or abs(gb * 1e9 / mem - 1.0) <= 0.10


def _check_memory_word(name, acc: "Accelerator") -> "Accelerator":
    """``acc``, unless ``name`` states a memory size ("A100 40GB") more than 10% off the catalogue part's."""
    gb = _stated_memory_gb(name)
    if gb is not None and not _memory_agrees(gb, acc):
        raise ValueError(f"accelerator={name!r} names {gb:.0f} GB of memory but the catalogue's {acc.id} has "
                         f"{acc.hbm_bytes / 1e9:.0f} GB; known: {', '.join(ACCELERATOR_IDS)}")
    return acc


def _by_memory_word(name: str, parts: Mapping[str, object]) -> str:
    """Of ``parts`` that differ only in memory size (A100-40GB, A100-80GB), the id whose size ``name`` states
    within 10%; without a size, the one an alias names (``"A100"`` -> A100-80GB), else the first."""
    gb = _stated_memory_gb(name)
    if gb is not None:
        for k, part in parts.items():
            if getattr(part, "hbm_bytes", None) and _memory_agrees(gb, part):
                return k
    aliased = [v for a, v in ALIASES.items() if v in parts and _canonical(a) == _canonical(name)]
    return aliased[0] if aliased else next(iter(parts))


def _resolve(name: str, known: Mapping[str, object], what: str):
    """Exact id, alias, then case-insensitive id, then the unique id with the same :func:`_canonical`
    form (``"H100 SXM5 80GB"``, ``"h200-sxm"``); anything else is a ``ValueError`` listing the ids."""
    if not isinstance(name, str):
        raise ValueError(f"{what}={name!r} must be a string; known: {', '.join(known)}")
    aliases_lower = {k.lower(): v for k, v in ALIASES.items()}
    key = ALIASES.get(name, aliases_lower.get(name.lower(), name))
    if key in known:
        return known[key]
    lower = {k.lower(): k for k in known}
    if key.lower() in lower:
        return known[lower[key.lower()]]
    canon = {**{_canonical(a): v for a, v in ALIASES.items() if v in known}, **{_canonical(k): k for k in known}}
    if _canonical(name) in canon:
        same = {k: v for k, v in known.items() if _canonical(k) == _canonical(name)}
        return known[_by_memory_word(name, same) if len(same) > 1 else canon[_canonical(name)]]
    raise ValueError(f"{what}={name!r} is not in the catalogue; known: {', '.join(known)}")


def get(name: str) -> Accelerator:
    """Look up an accelerator (or the accelerator of a system) by id or alias.

    Raises ``ValueError`` listing the known ids when the name is unknown.
    """
    accs = catalogue()[0]
    system = system_named(name)                # a system's id, alias or other spelling ("GB200 NVL72")
    if system is not None:
        return _check_memory_word(name, accs[system.accelerator])
    return _check_memory_word(name, _resolve(name, accs, "accelerator"))


def system_named(name) -> System | None:
    """The system ``name`` means where it names one rather than an accelerator (the rules of :func:`get`: a system's
    id or alias, or a name no accelerator answers to but a system does, "GB200 NVL72"), else None. The serving model
    takes its NVLink domain and topology from it (``HGX-H100-4GPU``: four H100 joined directly, no NVSwitch)."""
    if not isinstance(name, str):
        return None
    accs, syss = catalogue()
    key = ALIASES.get(name, name)
    if key in syss:
        return syss[key]
    try:
        _resolve(name, accs, "accelerator")
        return None
    except ValueError:
        pass
    try:
        return _resolve(name, syss, "system")
    except ValueError:
        return None


def get_system(name: str) -> System:
    """Look up a system (rack or server) by id or alias; unknown names list the known ones."""
    return _resolve(name, systems(), "system")
