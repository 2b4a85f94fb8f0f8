"""Calibration and leave-one-stack-out validation against published figures (figures.py, fitting.py).

1. Physics: the hardware constants no datasheet gives are fitted on named rows (``calibrates``): the wafer's
   per-hop fabric latency on WaferLLM's LLaMA3-8B at 420x420 and 660x660 cores (the same software on the same
   wafer with only the grid changed separates the per-hop term, which grows with the grid side, from the
   software's per-stage term). These rows are listed apart and never validate.
2. Software: each stack fits its ``fitted`` constants on its own rows; its ``pooled`` constants are the
   row-weighted median of the other stacks' fits (same kind of hardware and execution model, compiled or eager;
   any execution for the all-reduce latency; any kind for the serving overhead and the acceptance rate): each
   peer's fit counts once per published row it has, so a stack measured on twelve rows weighs twelve times one
   measured on one. The rest are stated with a source. Fitting and pooling repeat until nothing moves
   (deterministic).
3. Validation, leave one stack out: every row of a stack is predicted with the physics, the stack's published
   facts (layout, precision, parallelism, speculation), and every software constant taken from the other stacks
   (the row-weighted medians of their fits, refitted without the held-out stack's rows).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, replace

from wafer_reasoner.emulator.figures import DECODE
from wafer_reasoner.emulator.fitting import (
    CalibrationError,
    Prediction,
    fit_stack,
    observed_seconds,
    predict,
    predicted_seconds,
    solve_weighted,
)
from wafer_reasoner.emulator.hardware import WaferProfile, pick
from wafer_reasoner.emulator.placement import place
from wafer_reasoner.emulator.stacks import ANY_EXECUTION, ANY_KIND

# Published placement facts, checked by --validate and the tests: (target, hardware, systems, source).
PLACEMENT_FACTS = (
    ("Llama-3.1-8B", "WSE-3", 1, "8B (16-bit) fits one CS-3 (Cerebras, Aug 2024)"),
    ("Llama-3.1-70B", "WSE-3", 4, "70B spans 4 CS-3 systems (Cerebras, Aug 2024)"),
)
HOP = "fabric_hop_latency_s"
HOP_STEP, STAGE_STEP = 1e-9, 1e-7
MAX_ROUNDS = 60


@dataclass(frozen=True)
class Calibration:
    physics: tuple  # ((constant, value), ...) fitted on the calibration rows
    stacks: dict  # {name: ServingStack} with their fitted and pooled constants


@dataclass(frozen=True)
class Report:
    calibration: Calibration
    calibration_rows: tuple  # Prediction of each physics calibration row (fitted stacks)
    fitted: tuple  # Prediction of each validation row with its own stack's fitted constants
    held_out: tuple  # Prediction of each validation row, its stack left out
    held_stacks: tuple = ()  # ((name, ServingStack), ...): each validated stack as predicted when left out


# -- physics ------------------------------------------------------------------------------------------------------
def fit_physics(figures, profiles: dict, stacks: dict, targets: dict) -> tuple:
    """((fabric_hop_latency_s, value),): the per-hop latency fitted jointly with the rows' stack's per-stage
    latency on the rows that calibrate it (closed form)."""
    rows = [row for row in figures if HOP in row.calibrates]
    if len({row.stack for row in rows}) != 1 or len(rows) < 2:
        raise CalibrationError("the hop latency needs at least two rows of one stack (grid sizes apart)")
    stack = stacks[rows[0].stack]
    terms = []
    for row in rows:
        wafer = pick(profiles, row.hardware)
        base = predicted_seconds(row, profiles, stack, targets)
        hop = predicted_seconds(row, _with_hop(profiles, row.hardware, wafer.fabric_hop_latency_s + HOP_STEP), stack,
                                targets)
        stage = predicted_seconds(row, profiles, replace(stack, routing_stage_latency_s=stack.routing_stage_latency_s
                                                         + STAGE_STEP), targets)
        a = (hop - base) / HOP_STEP
        b = (stage - base) / STAGE_STEP
        constant = base - a * wafer.fabric_hop_latency_s - b * stack.routing_stage_latency_s
        terms.append(([a, b], constant, observed_seconds(row)))
    hop_s, stage_s = solve_weighted(terms)
    if hop_s <= 0 or stage_s < 0:
        raise CalibrationError(f"non-physical fit: hop {hop_s!r} s, stage {stage_s!r} s")
    return ((HOP, hop_s),)


def _with_hop(profiles: dict, name: str, hop_s: float) -> dict:
    return {**profiles, name: replace(profiles[name], fabric_hop_latency_s=hop_s)}


def apply_physics(profiles: dict, physics: tuple) -> dict:
    """Profiles with the fitted physics constants in place (wafers: the hop latency)."""
    values = dict(physics)
    return {name: replace(profile, fabric_hop_latency_s=values[HOP]) if isinstance(profile, WaferProfile)
            else profile for name, profile in profiles.items()}


# -- software -----------------------------------------------------------------------------------------------------
def peers(stack, constant: str, stacks: dict) -> list:
    """The other stacks whose fit of ``constant`` ``stack`` takes: those that fit it, of the same kind of hardware
    and the same execution model (compiled or eager; any execution for the all-reduce latency, any stack for the
    serving overhead and the acceptance rate).
    Not narrowed to the same hardware profile: the profile carries the physics, so what a stack fits is its
    software, which another profile's stack can share."""
    found = [other for other in stacks.values()
             if other.name != stack.name and constant in other.fitted and _pools_with(stack, other, constant)]
    return sorted(found, key=lambda other: other.name)


def _pools_with(stack, other, constant: str) -> bool:
    """Whether ``other``'s fit of ``constant`` speaks for ``stack`` (see ``peers``)."""
    if constant in ANY_KIND:
        return True
    if other.kind != stack.kind:
        return False
    return constant in ANY_EXECUTION or other.execution == stack.execution


def weighted_median(pairs) -> float:
    """The median of ``pairs`` of (value, whole-number weight), each value counted ``weight`` times."""
    values = sorted(value for value, weight in pairs for _ in range(weight))
    if not values:
        raise ValueError("no weighted values")
    return statistics.median(values)


def pooled_value(stack, constant: str, stacks: dict, rows_per_stack: dict) -> float:
    """The row-weighted median of the peers' fitted values (``peers``): each peer counts once per published row
    it has (``rows_per_stack``: {stack name: rows}), as if one value were fitted on all the peers' rows."""
    found = peers(stack, constant, stacks)
    if not found:
        raise CalibrationError(f"stack {stack.name}: no other stack fits {constant}")
    return weighted_median((getattr(other, constant), peer_weight(rows_per_stack, other.name)) for other in found)


def with_pooled(stack, stacks: dict, constants, rows_per_stack: dict) -> object:
    """``stack`` with ``constants`` taken from the other stacks in ``stacks`` (pooled_value)."""
    return replace(stack, **{constant: pooled_value(stack, constant, stacks, rows_per_stack)
                             for constant in constants})


def rows_of(figures, stack_name: str) -> list:
    return [row for row in figures if row.stack == stack_name]


def rows_per_stack(figures) -> dict:
    """{stack name: its published rows}: a peer's weight when its fits are pooled."""
    return dict(Counter(row.stack for row in figures))


def peer_weight(rows_per_stack: dict, name: str) -> int:
    """How many times a peer's fit counts in a pooled median: once per published row, at least once."""
    return max(rows_per_stack.get(name, 0), 1)


def fit_stacks(figures, profiles: dict, stacks: dict, targets: dict, exclude: str | None = None) -> Calibration:
    """Every stack but ``exclude`` (and the host's measured one) with its constants fitted and pooled, repeated
    until nothing moves."""
    current = {name: stack for name, stack in sorted(stacks.items()) if name != exclude and stack.kind != "cpu"}
    weights = rows_per_stack(figures)
    for _ in range(MAX_ROUNDS):
        updated = {}
        for name, stack in current.items():
            stack = with_pooled(stack, current, stack.pooled, weights)
            if stack.fitted:
                stack = fit_stack(stack, rows_of(figures, name), profiles, targets)
            updated[name] = stack
        settled = _stacks_close(current, updated)
        current = updated
        if settled:
            break
    return Calibration(physics=(), stacks=current)


def _close(a: dict, b: dict, rel: float = 1e-10) -> bool:
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= rel * max(abs(a[k]), 1e-300) for k in a)


def _stacks_close(a: dict, b: dict) -> bool:
    return all(_close(a[name].constants(), b[name].constants()) for name in a)


def fit(figures, profiles: dict, stacks: dict, targets: dict) -> Calibration:
    """Physics on the calibration rows, then every stack's software constants; deterministic."""
    physics = fit_physics(figures, profiles, stacks, targets)
    fitted = fit_stacks(figures, apply_physics(profiles, physics), stacks, targets)
    return replace(fitted, physics=physics)


def held_out_stack(stack, figures, profiles: dict, stacks: dict, targets: dict):
    """``stack`` with every fitted or pooled software constant taken from the other stacks' fits (made without
    its rows)."""
    others = fit_stacks(figures, profiles, stacks, targets, exclude=stack.name)
    return with_pooled(stack, others.stacks, (*stack.fitted, *stack.pooled), rows_per_stack(figures))


def validate(figures, profiles: dict, stacks: dict, targets: dict) -> Report:
    """Fit everything, then predict every validation row with its own stack fitted and with its stack left out."""
    calibration = fit(figures, profiles, stacks, targets)
    calibrated = apply_physics(profiles, calibration.physics)
    fitted_stacks = {**stacks, **calibration.stacks}
    validation = [row for row in figures if row.role == "validation"]
    held = {}
    for name in sorted({row.stack for row in validation}):
        held[name] = held_out_stack(stacks[name], figures, calibrated, stacks, targets)
    return Report(
        calibration=calibration,
        calibration_rows=tuple(predict(row, calibrated, fitted_stacks[row.stack], targets)
                               for row in figures if row.role == "calibration"),
        fitted=tuple(predict(row, calibrated, fitted_stacks[row.stack], targets) for row in validation),
        held_out=tuple(predict(row, calibrated, held[row.stack], targets) for row in validation),
        held_stacks=tuple(sorted(held.items())),
    )


def median_abs_error(predictions) -> float:
    """Median |predicted / published - 1| over ``predictions``."""
    errors = [abs(p.error) for p in predictions]
    if not errors:
        raise ValueError("no predictions")
    return statistics.median(errors)


def check_placements(profiles: dict, targets: dict) -> list:
    """[(fact, expected systems, placed systems)] for PLACEMENT_FACTS."""
    return [(fact, systems, place(pick(targets, target, "target model"), pick(profiles, hardware)).systems_needed)
            for target, hardware, systems, fact in PLACEMENT_FACTS]


def stale_constants(profiles: dict, stacks: dict, calibration: Calibration, rel: float = 5e-3) -> list:
    """'where.name: stored x, fitted y' for every stored constant that no longer reproduces its fit."""
    stale = []
    physics = dict(calibration.physics)
    for profile in profiles.values():
        if isinstance(profile, WaferProfile) and abs(profile.fabric_hop_latency_s - physics[HOP]) > rel * physics[HOP]:
            stale.append(f"{profile.name}.{HOP}: stored {profile.fabric_hop_latency_s:.4g}, fitted {physics[HOP]:.4g}")
    for name, fitted in calibration.stacks.items():
        for constant in (*fitted.fitted, *fitted.pooled):
            stored, value = getattr(stacks[name], constant), getattr(fitted, constant)
            if abs(stored - value) > rel * abs(value):
                stale.append(f"{name}.{constant}: stored {stored:.4g}, fitted {value:.4g}")
    return stale


__all__ = ["DECODE", "Calibration", "CalibrationError", "Prediction", "Report", "apply_physics", "check_placements",
           "fit", "fit_physics", "fit_stacks", "held_out_stack", "median_abs_error", "peer_weight", "stale_constants",
           "validate"]
