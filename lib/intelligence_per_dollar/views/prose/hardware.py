"""Chapter 1's computed sentences (:mod:`intelligence_per_dollar.analysis.hardware_findings` results)."""

from __future__ import annotations

from intelligence_per_dollar.analysis import hardware_findings as hf
from intelligence_per_dollar.model import peaks
from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.views.notebook import si


def setup(accelerators, precision: str, baseline: str) -> str:
    return f"Comparing {len(accelerators)} accelerators at dense {precision}, against {baseline}."


def _pf(flop_per_s: float) -> str:
    return f"{flop_per_s / 1e15:.0f} PF"


def reconcile(rubin: hf.Reconciled, ultra: hf.Reconciled) -> str:
    """Section 1.2: the seed's headline ratio beside the dense one, and why they differ."""
    head, dense = rubin.ratio(hf.HEADLINE), rubin.ratio(hf.DENSE)
    new, old = hardware.get(rubin.new), hardware.get(rubin.old)
    nan = float("nan")
    return (f"The seed's comparison is **headline vs headline**: {head:.2f}x. "
            f"But the two headlines count different things (Rubin's counts adaptive compression, Blackwell's "
            f"counts 2:4 sparsity). Like for like, **dense FP4 vs dense FP4**, Rubin is "
            f"**{dense:.2f}x** its predecessor: the dense ratio is *{'larger' if dense > head else 'smaller'}* than the "
            f"headline one, because Blackwell's {_pf(old.headline_flop_per_s)} headline is "
            f"{peaks.headline_to_dense_ratio(old):.2f}x its dense rate while Rubin's {_pf(new.headline_flop_per_s)} is "
            f"only {peaks.headline_to_dense_ratio(new):.2f}x its dense training rate. "
            f"Rubin Ultra's {_pf(hardware.get(ultra.new).headline_flop_per_s)} is "
            f"{ultra.ratio(hf.HEADLINE) or nan:.2f}x Rubin's headline; dense vs dense the catalogue gives "
            f"{ultra.ratio(hf.DENSE) or nan:.2f}x (see the provenance table for how firm Rubin Ultra's figures are).")


def reconcile_takeaway(rubin: hf.Reconciled) -> str:
    """Takeaway of section 1.2."""
    head, dense = rubin.ratio(hf.HEADLINE), rubin.ratio(hf.DENSE)
    new, old = hardware.get(rubin.new), hardware.get(rubin.old)
    return (f"**Takeaway.** \"{_pf(new.headline_flop_per_s)[:-3]} vs {_pf(old.headline_flop_per_s)[:-3]}\" "
            f"{'understates' if dense > head else 'overstates'} Rubin's dense FP4 gain ({dense:.1f}x, not "
            f"{head:.1f}x), and it is the dense ratio that a training-time estimate must use. Rubin Ultra's "
            f"\"double\" is a headline ratio of a package with four dies against one with two.")


def ridge(acc, precision: str, ridge_flop_per_byte: float) -> str:
    """Worked number of section 1.4: the baseline's ridge point."""
    return (f"**Worked number.** {acc.id}: {si(peaks.dense_flop_per_s(acc, precision, fallback=True), 'FLOP/s')} "
            f"/ {si(acc.hbm_bytes_per_s, 'B/s')} = **{ridge_flop_per_byte:.0f} FLOP/byte**. "
            f"A kernel must do that many operations per byte it reads to keep the tensor cores busy; "
            f"a decode step at batch 1 does about 2 FLOP per weight byte in BF16.")


def rack(racks, precision: str, dense_ratio: float) -> str:
    """Section 1.5: the seed's racks compared, FLOP/s and power."""
    power = hf.system_ratio(racks, "system_power_w")
    kind = racks.set_index("system").loc[hf.SEED_NEW_SYSTEM, "power_kind"]
    return (f"Rack for rack, Vera Rubin NVL72 has **{dense_ratio:.2f}x** the dense {precision} FLOP/s of GB200 NVL72, "
            f"at {power:.2f}x the rack power ({kind} for Vera Rubin: NVIDIA has published no rack power).")


def per_dollar(per_usd_ratio: float, rack_ratio: float | None, precision: str) -> str:
    """Section 1.5: FLOP/s per dollar of the seed's racks at the analysts' central prices."""
    text = (f"At the central estimates, Vera Rubin NVL72 buys **{per_usd_ratio:.2f}x** the dense {precision} "
            f"FLOP/s per dollar of GB200 NVL72")
    if rack_ratio is None:
        return text + ". Chapter 4 turns this into a break-even price."
    return text + (f": much less than its {rack_ratio:.2f}x per rack, because the rack is estimated to cost about "
                   f"{rack_ratio / per_usd_ratio:.1f}x as much. Chapter 4 turns this into a break-even price.")


def measured(m: hf.Measured) -> str:
    """Takeaway of section 1.6: measured ceilings over datasheet peaks."""
    return (f"**Takeaway.** Large BF16 products reach about {m.best_bf16_gemm_fraction:.0%} of the datasheet peak "
            f"for a moment, but a sustained run hits the power cap, the clock falls from {m.peak_clock_mhz:,.0f} to "
            f"about {round(m.settled_clock_mhz, -1):,.0f} MHz, and the rate settles near "
            f"{m.sustained_bf16_fraction:.0%}. HBM delivers about {m.hbm_fraction:.0%} of its datasheet bandwidth. "
            f"Small and skinny products sit far below the peak: efficiency is a *curve* over shapes, not one number, "
            f"which is how the training and inference models in the next chapters use it.")
