"""The calibration and validation tables (markdown) that ``wafer-reasoner emulate --validate`` prints and
docs/emulator.md carries: the physics constants, every stack's software constants and where each comes from,
the calibration rows, every validation row fitted and held out (leave one stack out), and the constants each
held-out stack is given beside its own fit."""

from __future__ import annotations

import re

from wafer_reasoner.emulator.calibration import Report, median_abs_error, peer_weight, peers, rows_per_stack
from wafer_reasoner.emulator.figures import DECODE
from wafer_reasoner.emulator.stacks import SOFTWARE

# The bounds the done-when of the emulator asks of the leave-one-stack-out validation.
LOSO_MEDIAN_BOUND = 0.15
MIN_VALIDATION_ROWS = 15
MIN_VALIDATION_STACKS = 3


def _value(metric: str, value: float) -> str:
    return f"{value:,.0f} tok/s" if metric == DECODE else f"{value:.3f} s"


def _number(value: float) -> str:
    return f"{value:.3g}"


def _error(prediction) -> str:
    return f"{prediction.error:+.1%}" + (" (>2x)" if prediction.off_by_2x else "")


def format_physics(report: Report, figures) -> str:
    lines = ["| constant | fitted value | calibration rows |", "|---|---|---|"]
    for name, value in report.calibration.physics:
        keys = ", ".join(row.key for row in figures if name in row.calibrates)
        lines.append(f"| {name} | {_number(value)} | {keys} |")
    return "\n".join(lines)


def constant_origin(stack, constant: str, stacks: dict, figures) -> str:
    """How a stack's constant is obtained: fitted on its rows, the row-weighted median of named peers, or
    stated."""
    rows = rows_per_stack(figures)
    if constant in stack.fitted:
        return f"fitted on {rows.get(stack.name, 0)} row(s)"
    if constant in stack.pooled:
        return "row-weighted median of " + ", ".join(f"{other.name} ({peer_weight(rows, other.name)})"
                                                     for other in peers(stack, constant, stacks))
    return "stated: " + dict(stack.sources).get(constant, "")


def format_stacks(report: Report, stacks: dict, figures) -> str:
    """Every stack's software constants (the fitted values) and where each comes from."""
    fitted = {**stacks, **report.calibration.stacks}
    lines = ["| stack | date | hardware | constant | value | from |", "|---|---|---|---|---|---|"]
    for name, stack in sorted(fitted.items()):
        for constant in SOFTWARE[stack.kind]:
            origin = constant_origin(stack, constant, fitted, figures)
            if constant in ("acceptance_rate",) and not stack.speculative:
                continue
            lines.append(f"| {name} | {stack.date} | {', '.join(stack.hardware)} | {constant} | "
                         f"{_number(getattr(stack, constant))} | {origin} |")
    return "\n".join(lines)


def format_calibration_rows(report: Report) -> str:
    lines = ["| row | model | hardware | stack | setup | published | predicted | error |",
             "|---|---|---|---|---|---|---|---|"]
    for p in report.calibration_rows:
        row = p.row
        lines.append(f"| {row.key} | {row.target} | {row.hardware} x{p.devices} | {row.stack} | {row.setup} | "
                     f"{_value(row.metric, row.published)} | {_value(row.metric, p.predicted)} | {_error(p)} |")
    return "\n".join(lines)


def format_validation(report: Report) -> str:
    """Every validation row: published, predicted with its own stack fitted, predicted with its stack held out."""
    lines = ["| row | model | hardware | stack | setup | published | stack fitted | held out | held-out error | "
             "bound |", "|---|---|---|---|---|---|---|---|---|---|"]
    for fitted, held in zip(report.fitted, report.held_out):
        row = held.row
        lines.append(f"| {row.key} | {row.target} | {row.hardware} x{held.devices} | {row.stack} | {row.setup} | "
                     f"{_value(row.metric, row.published)} | {_value(row.metric, fitted.predicted)} "
                     f"({fitted.error:+.1%}) | {_value(row.metric, held.predicted)} | {_error(held)} | "
                     f"{held.bound} |")
    lines += ["", summary(report)]
    return "\n".join(lines)


def format_held_constants(report: Report) -> str:
    """Each validated stack's fitted and pooled constants: its own fit beside the value it gets when left out
    (the medians of its peers' fits made without its rows). A held-out row's error follows from these ratios."""
    lines = ["| stack | constant | own fit | held out | held out / own |", "|---|---|---|---|---|"]
    for name, held in report.held_stacks:
        own = report.calibration.stacks[name]
        for constant in (*own.fitted, *own.pooled):
            mine, theirs = getattr(own, constant), getattr(held, constant)
            ratio = f"{theirs / mine:.2f}" if mine else ("-" if not theirs else "from 0")
            lines.append(f"| {name} | {constant} | {_number(mine)} | {_number(theirs)} | {ratio} |")
    return "\n".join(lines)


def tables(report: Report, stacks: dict, figures) -> dict:
    """{name: markdown table} of everything ``--validate`` prints, by the names docs/emulator.md marks them with."""
    return {"physics table": format_physics(report, figures),
            "calibration rows": format_calibration_rows(report),
            "stack constants": format_stacks(report, stacks, figures),
            "validation table": format_validation(report),
            "held-out constants": format_held_constants(report)}


# a table in the docs that --validate prints: the marker line, then the table (its lines start with "|"), and for
# the validation table an empty line and the summary sentence
_MARKER = re.compile(r"^<!-- (.+?): `wafer-reasoner emulate --validate` prints the same -->$")


def refresh_tables(text: str, fresh: dict) -> tuple:
    """``text`` (markdown) with every marked table replaced by its ``fresh`` one: (new text, names refreshed).
    A marker naming a table ``fresh`` lacks is an error."""
    lines, out, index, refreshed = text.split("\n"), [], 0, []
    while index < len(lines):
        out.append(lines[index])
        marker = _MARKER.match(lines[index])
        index += 1
        if not marker:
            continue
        name = marker.group(1)
        if name not in fresh:
            raise ValueError(f"the docs mark a table '{name}' that --validate does not print")
        while index < len(lines) and lines[index].startswith("|"):
            index += 1
        following = lines[index:index + 2]
        if len(following) == 2 and following[0] == "" and following[1].startswith("Leave-one-stack-out"):
            index += 2  # the validation table's summary, part of its text
        out.extend(fresh[name].split("\n"))
        refreshed.append(name)
    return "\n".join(out), refreshed


def summary(report: Report) -> str:
    stacks = sorted({p.row.stack for p in report.held_out})
    return (f"Leave-one-stack-out median absolute error over {len(report.held_out)} validation rows from "
            f"{len(stacks)} stacks: {median_abs_error(report.held_out):.1%} (with each stack's own fit: "
            f"{median_abs_error(report.fitted):.1%})")


def verdict(report: Report) -> tuple:
    """(ok, problems): the leave-one-stack-out bounds (LOSO_MEDIAN_BOUND, rows, stacks)."""
    problems = []
    median = median_abs_error(report.held_out)
    if median > LOSO_MEDIAN_BOUND:
        problems.append(f"median |error| {median:.1%} above {LOSO_MEDIAN_BOUND:.0%}")
    if len(report.held_out) < MIN_VALIDATION_ROWS:
        problems.append(f"{len(report.held_out)} validation rows, fewer than {MIN_VALIDATION_ROWS}")
    if len({p.row.stack for p in report.held_out}) < MIN_VALIDATION_STACKS:
        problems.append(f"fewer than {MIN_VALIDATION_STACKS} stacks validated")
    return not problems, problems
