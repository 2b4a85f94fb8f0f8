"""Calibration and validation against published figures (figures.py).

The timing model is linear in each kind's two free constants while one bound holds, so each pair is a
closed-form weighted least-squares fit (relative error) over its calibration rows:

* wafer: seconds = hops x fabric_hop_latency_s + stages x routing_stage_latency_s + rest;
* gpu:   seconds = bytes / (tp x bandwidth) x (1 / memory_efficiency) + steps x allreduce_step_latency_s + rest;
* the speculative acceptance rate: bisection on the predicted speedup of a row over its baseline row.

Every other row is a validation point; the validation table shows predicted vs published with the error.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.emulator import Emulator, SpeculativeSettings
from wafer_reasoner.emulator.figures import (
    ACCEPTANCE,
    DECODE,
    DRAFT,
    DRAFT_TOKENS,
    FIGURES,
    GPU_CONSTANTS,
    ROW_CONTEXT_TOKENS,
    WAFER_CONSTANTS,
    PublishedFigure,
    figure,
)
from wafer_reasoner.emulator.hardware import WaferProfile, pick
from wafer_reasoner.emulator.placement import PlacementOptions, place
from wafer_reasoner.emulator.targets import with_precision

# Published placement facts, checked by --validate and the tests: (target, hardware, systems, source).
PLACEMENT_FACTS = (
    ("Llama-3.1-8B", "WSE-3", 1, "8B (16-bit) fits one CS-3 (Cerebras, Aug 2024)"),
    ("Llama-3.1-70B", "WSE-3", 4, "70B spans 4 CS-3 systems (Cerebras, Aug 2024)"),
)


class CalibrationError(RuntimeError):
    """The calibration rows give no physical solution (or the bound the fit assumes does not hold)."""


@dataclass(frozen=True)
class Calibration:
    wafer: tuple  # ((field, value), ...) for WAFER_CONSTANTS
    gpu: tuple  # ((field, value), ...) for GPU_CONSTANTS
    acceptance_rate: float  # of the DRAFT drafting for the speculative rows' target

    def values(self) -> dict:
        return {**dict(self.wafer), **dict(self.gpu), "acceptance_rate": self.acceptance_rate}


@dataclass(frozen=True)
class Prediction:
    row: PublishedFigure
    predicted: float
    bound: str
    devices: int

    @property
    def error(self) -> float:
        """predicted / published - 1."""
        return self.predicted / self.row.published - 1.0

    @property
    def off_by_2x(self) -> bool:
        ratio = self.predicted / self.row.published
        return ratio > 2.0 or ratio < 0.5


def row_emulator(row: PublishedFigure, profiles: dict, targets: dict, acceptance_rate: float = 0.0) -> Emulator:
    hardware = pick(profiles, row.hardware)
    target = with_precision(pick(targets, row.target, "target model"), row.bytes_per_param)
    speculative = None
    if row.speculative:
        draft = with_precision(pick(targets, DRAFT, "target model"), row.bytes_per_param)
        speculative = SpeculativeSettings(draft=draft, draft_tokens=DRAFT_TOKENS, acceptance_rate=acceptance_rate)
    options = PlacementOptions(grid=row.grid or "full", systems=row.systems, tensor_parallel=row.tensor_parallel)
    return Emulator(target, hardware, speculative=speculative, options=options)


def predict(row: PublishedFigure, profiles: dict, targets: dict, acceptance_rate: float = 0.0) -> Prediction:
    emulator = row_emulator(row, profiles, targets, acceptance_rate)
    if row.metric == DECODE:
        per_token_s, bound, _ = emulator.decode_step(ROW_CONTEXT_TOKENS)
        value = 1.0 / per_token_s
    else:
        value = emulator.prefill(row.prompt_tokens)
        bound = emulator.forward(row.prompt_tokens).bound
    return Prediction(row=row, predicted=value, bound=bound, devices=emulator.placement.devices)


def _weighted_least_squares(points: list) -> tuple:
    """Solve min sum(((a x + b y + c) - o) / o)^2 for (x, y); points are (a, b, c, o)."""
    saa = sab = sbb = sar = sbr = 0.0
    for a, b, c, observed in points:
        weight = 1.0 / observed**2
        residual = observed - c
        saa += weight * a * a
        sab += weight * a * b
        sbb += weight * b * b
        sar += weight * a * residual
        sbr += weight * b * residual
    determinant = saa * sbb - sab * sab
    if abs(determinant) <= 1e-12 * max(saa * sbb, 1e-300):
        raise CalibrationError("the calibration rows do not separate the two constants")
    return (sar * sbb - sab * sbr) / determinant, (saa * sbr - sab * sar) / determinant


def _linear_terms(row: PublishedFigure, profiles: dict, targets: dict) -> tuple:
    """(a, b, c, observed seconds per token) with seconds = a x + b y + c in the kind's two constants."""
    emulator = row_emulator(row, profiles, targets)
    cost = emulator.forward(1, ROW_CONTEXT_TOKENS)
    hardware = emulator.hardware
    if isinstance(hardware, WaferProfile):
        a, b = cost.hops, cost.routing_stages
        x0, y0 = hardware.fabric_hop_latency_s, hardware.routing_stage_latency_s
    else:
        if cost.memory_s < cost.compute_s:
            raise CalibrationError(f"row {row.key} is not memory-bound; memory_efficiency cannot be fitted on it")
        a, b = cost.memory_s * hardware.memory_efficiency, cost.allreduce_steps  # a: seconds at efficiency 1
        x0, y0 = 1.0 / hardware.memory_efficiency, hardware.allreduce_step_latency_s
    return a, b, cost.seconds - a * x0 - b * y0, 1.0 / row.published


def apply(profiles: dict, calibration: Calibration) -> dict:
    """Profiles with the calibrated constants in place (the host keeps its measured values)."""
    fitted = {"wafer": dict(calibration.wafer), "gpu": dict(calibration.gpu)}
    return {name: replace(profile, **fitted[profile.kind]) if profile.kind in fitted else profile
            for name, profile in profiles.items()}


def _fit_acceptance(profiles: dict, targets: dict) -> float:
    rows = [row for row in FIGURES if row.calibrates == ACCEPTANCE]
    if len(rows) != 1:
        raise CalibrationError("exactly one row calibrates the acceptance rate")
    row = rows[0]
    base = predict(figure(row.baseline), profiles, targets).predicted
    wanted = row.published / figure(row.baseline).published

    def speedup(rate: float) -> float:
        return predict(row, profiles, targets, rate).predicted / base

    low, high = 0.0, 1.0
    if not speedup(low) <= wanted <= speedup(high):
        raise CalibrationError(f"no acceptance rate gives the published speedup {wanted:.2f} on {row.key}")
    for _ in range(60):  # speedup grows with the acceptance rate
        middle = (low + high) / 2.0
        low, high = (middle, high) if speedup(middle) < wanted else (low, middle)
    return (low + high) / 2.0


def fit(profiles: dict, targets: dict) -> Calibration:
    """Fit every free constant on its calibration rows; deterministic (closed form and bisection)."""
    results = {}
    for constants in (WAFER_CONSTANTS, GPU_CONSTANTS):
        rows = [row for row in FIGURES if row.calibrates == constants]
        x, y = _weighted_least_squares([_linear_terms(row, profiles, targets) for row in rows])
        if constants == GPU_CONSTANTS:
            if x < 1.0:
                raise CalibrationError(f"the GPU rows imply memory efficiency {1 / x:.2f} > 1")
            x = 1.0 / x
        if x <= 0 or y < 0:
            raise CalibrationError(f"non-physical fit {constants} = ({x!r}, {y!r})")
        results[constants] = ((constants[0], x), (constants[1], y))
    partial = Calibration(wafer=results[WAFER_CONSTANTS], gpu=results[GPU_CONSTANTS], acceptance_rate=0.0)
    rate = _fit_acceptance(apply(profiles, partial), targets)
    return replace(partial, acceptance_rate=rate)


def validate(profiles: dict, targets: dict) -> tuple:
    """(calibration, [Prediction for every row]) with freshly fitted constants."""
    calibration = fit(profiles, targets)
    calibrated = apply(profiles, calibration)
    return calibration, [predict(row, calibrated, targets, calibration.acceptance_rate) for row in FIGURES]


def median_abs_error(predictions: list) -> float:
    """Median |predicted / published - 1| over the validation rows (calibration rows excluded)."""
    errors = [abs(p.error) for p in predictions if p.row.role == "validation"]
    if not errors:
        raise ValueError("no validation rows")
    return statistics.median(errors)


def check_placements(profiles: dict, targets: dict) -> list:
    """[(fact, expected systems, placed systems)] for PLACEMENT_FACTS."""
    results = []
    for target, hardware, systems, fact in PLACEMENT_FACTS:
        placement = place(pick(targets, target, "target model"), pick(profiles, hardware))
        results.append((fact, systems, placement.systems_needed))
    return results


def _value(metric: str, value: float) -> str:
    return f"{value:,.0f} tok/s" if metric == DECODE else f"{value:.3f} s"


def format_table(predictions: list) -> str:
    """The markdown validation table (docs/emulator.md carries the same text)."""
    lines = [
        "| row | model | hardware | setup | published | predicted | error | bound | role |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in predictions:
        row = p.row
        error = f"{p.error:+.1%}" + (" (>2x)" if p.off_by_2x else "")
        role = "calibration" if row.calibrates else "validation"
        lines.append(f"| {row.key} | {row.target} | {row.hardware} x{p.devices} | {row.setup} | "
                     f"{_value(row.metric, row.published)} | {_value(row.metric, p.predicted)} | {error} | "
                     f"{p.bound} | {role} |")
    count = sum(1 for p in predictions if p.row.role == "validation")
    lines.append("")
    lines.append(f"Median absolute error over the {count} validation rows: {median_abs_error(predictions):.1%}")
    return "\n".join(lines)


def format_calibration(calibration: Calibration) -> str:
    lines = ["| constant | fitted value | calibration rows |", "|---|---|---|"]
    for constants, pairs in ((WAFER_CONSTANTS, calibration.wafer), (GPU_CONSTANTS, calibration.gpu),
                             (ACCEPTANCE, (("acceptance_rate", calibration.acceptance_rate),))):
        keys = ", ".join(row.key for row in FIGURES if row.calibrates == constants)
        for name, value in pairs:
            lines.append(f"| {name} | {value:.3g} | {keys} |")
    return "\n".join(lines)


def stored_constants_match(profiles: dict, calibration: Calibration, rel: float = 5e-3) -> list:
    """Names of calibrated constants whose value in config/hardware.yaml differs from the fit by more than rel."""
    fitted = {"wafer": dict(calibration.wafer), "gpu": dict(calibration.gpu)}
    stale = []
    for profile in profiles.values():
        for name, value in fitted.get(profile.kind, {}).items():
            stored = getattr(profile, name)
            if abs(stored - value) > rel * abs(value):
                stale.append(f"{profile.name}.{name}: stored {stored:.4g}, fitted {value:.4g}")
    return stale


__all__ = ["Calibration", "CalibrationError", "EmulatorDataError", "Prediction", "apply", "check_placements",
           "fit", "format_calibration", "format_table", "median_abs_error", "predict", "validate"]
