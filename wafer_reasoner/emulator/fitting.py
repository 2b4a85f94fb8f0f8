"""Predicting a published row, and fitting a serving stack's software constants on its own rows.

Every predicted time is linear in each software constant while the acceptance rate is held (efficiencies enter
as their inverse): a decode step is max(memory / efficiency, compute) + launches + all-reduces (devices) or
collective latency (wafer), a first token is the prefill, plus the serving overhead when the row's client sat
across a network (``PublishedFigure.pays_serving_overhead``). So a stack's fitted constants
are a closed-form weighted least-squares fit on the relative error (exact when rows = constants); the
acceptance rate is fitted by a bracketed search on the speculative rows. Coefficients are read off the model by
moving one constant at a time (the model is exactly linear in it), so nothing here repeats a timing formula.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.emulator import Emulator, SpeculativeSettings
from wafer_reasoner.emulator.figures import DECODE, PublishedFigure
from wafer_reasoner.emulator.hardware import pick
from wafer_reasoner.emulator.placement import PlacementOptions
from wafer_reasoner.emulator.settings import stack_speculation
from wafer_reasoner.emulator.targets import with_group_precision

INVERSE = ("memory_efficiency", "compute_efficiency")  # fitted as 1 / value (time is linear in the inverse)
STEP = {"routing_stage_latency_s": 1e-7, "system_link_latency_s": 1e-6, "kernel_overhead_s": 1e-6,
        "allreduce_step_latency_s": 1e-6, "serving_overhead_s": 1e-2, "memory_efficiency": 1.0,
        "compute_efficiency": 1.0}


GOLDEN_STEPS = 48  # golden-section steps for the acceptance rate: the bracket shrinks to 1e-10


class CalibrationError(RuntimeError):
    """The rows give no physical solution (or do not depend on a constant they are said to fit)."""


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


def acceptance_from_length(length: float, draft_tokens: int) -> float:
    """The per-token acceptance rate a whose expected tokens per step (1 - a^(k+1)) / (1 - a) is ``length``."""
    if not 1.0 <= length <= draft_tokens + 1:
        raise EmulatorDataError(f"acceptance length {length} must be in [1, {draft_tokens + 1}]")
    low, high = 0.0, 1.0
    for _ in range(80):
        middle = (low + high) / 2.0
        tokens = draft_tokens + 1 if middle >= 1.0 else (1.0 - middle ** (draft_tokens + 1)) / (1.0 - middle)
        low, high = (middle, high) if tokens < length else (low, middle)
    return (low + high) / 2.0


def row_emulator(row: PublishedFigure, profiles: dict, stack, targets: dict) -> Emulator:
    """The Emulator of a published row under ``stack`` (the row's stack, possibly with other constants)."""
    hardware = pick(profiles, row.hardware)
    target = pick(targets, row.target, "target model")
    precision = dict(row.precision)
    if not precision and stack.bytes_per_param:
        precision = {"default": stack.bytes_per_param}
    target = with_group_precision(target, precision)
    speculative = stack_speculation(stack, target, targets) if row.speculative else None
    if speculative is not None and row.acceptance_length:
        rate = acceptance_from_length(row.acceptance_length, speculative.draft_tokens)
        speculative = SpeculativeSettings(speculative.draft, speculative.draft_tokens, rate)
    options = PlacementOptions(grid=row.grid or "full", systems=row.systems, tensor_parallel=row.tensor_parallel)
    return Emulator(target, hardware, stack, speculative=speculative, options=options,
                    serving=row.pays_serving_overhead)


def predict(row: PublishedFigure, profiles: dict, stack, targets: dict) -> Prediction:
    emulator = row_emulator(row, profiles, stack, targets)
    if row.metric == DECODE:
        per_token_s, bound, _ = emulator.decode_step(row.context_tokens)
        value = 1.0 / per_token_s
    else:
        value = emulator.first_token(row.prompt_tokens)
        bound = emulator.forward(row.prompt_tokens).bound
    return Prediction(row=row, predicted=value, bound=bound, devices=emulator.placement.devices)


def observed_seconds(row: PublishedFigure) -> float:
    """The row's published figure as seconds: per token for a decode rate, to the first token otherwise."""
    return 1.0 / row.published if row.metric == DECODE else row.published


def predicted_seconds(row, profiles, stack, targets) -> float:
    value = predict(row, profiles, stack, targets).predicted
    return 1.0 / value if row.metric == DECODE else value


def _variable(name: str, value: float) -> float:
    return 1.0 / value if name in INVERSE else value


def _value(name: str, variable: float) -> float:
    return 1.0 / variable if name in INVERSE else variable


def _with_variables(stack, names, variables):
    return replace(stack, **{name: _value(name, variable) for name, variable in zip(names, variables)})


def linear_terms(rows, names, profiles, stack, targets) -> list:
    """Per row (coefficients, constant term, observed seconds): predicted seconds = coefficients . x + constant,
    x the fit variables of ``names`` (1 / efficiency for efficiencies)."""
    base = [_variable(name, getattr(stack, name)) for name in names]
    terms = []
    for row in rows:
        at_base = predicted_seconds(row, profiles, stack, targets)
        coefficients = []
        for index, name in enumerate(names):
            moved = list(base)
            moved[index] += STEP[name]
            shifted = predicted_seconds(row, profiles, _with_variables(stack, names, moved), targets)
            coefficients.append((shifted - at_base) / STEP[name])
        constant = at_base - sum(c * x for c, x in zip(coefficients, base))
        terms.append((coefficients, constant, observed_seconds(row)))
    return terms


def solve_weighted(terms: list) -> list:
    """min sum(((a . x + c) - o) / o)^2 over x: normal equations on columns scaled to unit size, Gaussian
    elimination with pivoting."""
    size = len(terms[0][0])
    scales = [max(abs(coefficients[i] / observed) for coefficients, _, observed in terms) or 1.0
              for i in range(size)]
    matrix = [[0.0] * size for _ in range(size)]
    vector = [0.0] * size
    for coefficients, constant, observed in terms:
        a = [coefficients[i] / observed / scales[i] for i in range(size)]
        residual = (observed - constant) / observed
        for i in range(size):
            vector[i] += a[i] * residual
            for j in range(size):
                matrix[i][j] += a[i] * a[j]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(matrix[r][column]))
        if abs(matrix[pivot][column]) <= 1e-12:
            raise CalibrationError("the rows do not separate the constants being fitted")
        matrix[column], matrix[pivot] = matrix[pivot], matrix[column]
        vector[column], vector[pivot] = vector[pivot], vector[column]
        for row in range(size):
            if row != column:
                factor = matrix[row][column] / matrix[column][column]
                matrix[row] = [a - factor * b for a, b in zip(matrix[row], matrix[column])]
                vector[row] -= factor * vector[column]
    return [vector[i] / matrix[i][i] / scales[i] for i in range(size)]


def _bound(name: str) -> float:
    """The lowest fit variable: an efficiency is at most 1 (inverse >= 1), a latency at least 0."""
    return 1.0 if name in INVERSE else 0.0


def fit_linear(rows, names, profiles, stack, targets):
    """``stack`` with ``names`` fitted on ``rows`` (closed form; a constant that leaves its physical range is held
    at the bound and the rest refitted)."""
    free, held = list(names), {}
    for _ in range(len(names) + 1):
        if not free:
            break
        current = _with_variables(stack, list(held), list(held.values()))
        solution = solve_weighted(linear_terms(rows, free, profiles, current, targets))
        outside = [name for name, x in zip(free, solution) if x < _bound(name)]
        if not outside:
            return _with_variables(current, free, solution)
        for name in outside:
            held[name] = _bound(name)
            free.remove(name)
    return _with_variables(stack, list(held), list(held.values()))


def fit_acceptance(rows, profiles, stack, targets):
    """``stack`` with the acceptance rate that minimises the relative error of its speculative ``rows`` (the
    error grows away from the best rate on either side: golden-section search on [0, 1])."""
    def loss(rate: float) -> float:
        candidate = replace(stack, acceptance_rate=rate)
        return sum(((predicted_seconds(row, profiles, candidate, targets) - observed_seconds(row))
                    / observed_seconds(row)) ** 2 for row in rows)

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    low, high = 0.0, 1.0
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    loss_left, loss_right = loss(left), loss(right)
    for _ in range(GOLDEN_STEPS):
        if loss_left <= loss_right:
            high, right, loss_right = right, left, loss_left
            left = high - ratio * (high - low)
            loss_left = loss(left)
        else:
            low, left, loss_left = left, right, loss_right
            right = low + ratio * (high - low)
            loss_right = loss(right)
    return replace(stack, acceptance_rate=(low + high) / 2.0)


def speculative_rows(rows, stack) -> list:
    """Decode rows with the stack's own speculation and no stated acceptance (they inform its acceptance rate)."""
    return [row for row in rows if row.metric == DECODE and row.speculative and not row.acceptance_length
            and stack.speculation(row.target)]


def fit_stack(stack, rows, profiles, targets, rounds: int = 4):
    """``stack`` with its ``fitted`` constants fitted on ``rows`` (its own): the linear constants on the rows that
    do not speculate (all rows when every row does), then the acceptance rate on those that do, in turn."""
    linear = [name for name in stack.fitted if name != "acceptance_rate"]
    guessing = "acceptance_rate" in stack.fitted
    spec_rows = speculative_rows(rows, stack) if guessing else []
    if guessing and not spec_rows:
        raise CalibrationError(f"stack {stack.name} fits acceptance_rate but none of its rows speculates")
    plain = [row for row in rows if row not in spec_rows] or rows
    for _ in range(rounds if guessing and linear else 1):
        if linear:
            try:
                stack = fit_linear(plain if guessing else rows, linear, profiles, stack, targets)
            except CalibrationError as error:
                raise CalibrationError(f"stack {stack.name}: {error}") from None
        if guessing:
            stack = fit_acceptance(spec_rows, profiles, stack, targets)
    return stack
