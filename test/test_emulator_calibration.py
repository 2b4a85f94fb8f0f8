"""Calibration on the named rows, validation against the rest, and the docs carrying the same table."""

import dataclasses

import pytest

from wafer_reasoner.emulator import calibration
from wafer_reasoner.emulator.figures import FIGURES
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

DOCS = SOURCE_CONFIG.parent / "docs" / "emulator.md"
CALIBRATION_ROWS = {"waferllm-8b-420", "waferllm-8b-660", "a100x1-8b", "a100x8-8b", "h200-70b-spec"}


@pytest.fixture(scope="module")
def validated(profiles, targets):
    return calibration.validate(profiles, targets)


def test_calibration_rows_are_the_named_subset():
    assert {row.key for row in FIGURES if row.role == "calibration"} == CALIBRATION_ROWS
    assert len(FIGURES) - len(CALIBRATION_ROWS) >= 10  # every other figure validates


def test_calibration_is_reproducible_and_independent_of_the_stored_constants(profiles, targets):
    first = calibration.fit(profiles, targets)
    assert calibration.fit(profiles, targets) == first
    scrambled = {name: dataclasses.replace(p, fabric_hop_latency_s=7e-9, routing_stage_latency_s=1e-6)
                 if p.kind == "wafer" else dataclasses.replace(p, memory_efficiency=0.3, allreduce_step_latency_s=0)
                 if p.kind == "gpu" else p for name, p in profiles.items()}
    again = calibration.fit(scrambled, targets)
    for (name, value), (_, other) in zip(first.wafer + first.gpu, again.wafer + again.gpu):
        assert other == pytest.approx(value, rel=1e-9), name
    assert again.acceptance_rate == pytest.approx(first.acceptance_rate, abs=1e-9)


def test_stored_constants_are_the_fitted_ones(profiles, validated):
    fitted, _ = validated
    assert calibration.stored_constants_match(profiles, fitted) == []
    values = fitted.values()
    assert 0 < values["fabric_hop_latency_s"] < 2e-9  # about one 1.1 GHz cycle per hop
    assert 0 < values["memory_efficiency"] <= 1 and 0 < values["acceptance_rate"] < 1


def test_calibration_rows_are_reproduced(validated):
    _, predictions = validated
    for p in predictions:
        if p.row.calibrates and p.row.key != "h200-70b-spec":
            assert p.error == pytest.approx(0.0, abs=1e-6), p.row.key
    spec = next(p for p in predictions if p.row.key == "h200-70b-spec")
    base = next(p for p in predictions if p.row.key == "h200-70b")
    assert spec.predicted / base.predicted == pytest.approx(182 / 51, rel=1e-6)  # the published speedup


def test_validation_median_error_is_within_25_percent(validated):
    _, predictions = validated
    assert calibration.median_abs_error(predictions) <= 0.25


def test_every_row_off_by_more_than_2x_is_explained_in_the_docs(validated):
    _, predictions = validated
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Rows off by more than 2x"):]
    for p in predictions:
        if p.off_by_2x:
            assert f"`{p.row.key}`" in section, p.row.key


def test_docs_carry_the_same_tables(validated):
    fitted, predictions = validated
    text = DOCS.read_text(encoding="utf-8")
    assert calibration.format_table(predictions) in text
    assert calibration.format_calibration(fitted) in text


def test_published_placement_facts_hold(profiles, targets):
    for fact, expected, placed in calibration.check_placements(profiles, targets):
        assert placed == expected, fact


def test_weighted_least_squares_by_hand():
    # seconds = 2x + 3y + 1 and = 1x + 1y + 0 observed 6 and 2 -> x = 1, y = 1
    assert calibration._weighted_least_squares([(2, 3, 1, 6), (1, 1, 0, 2)]) == pytest.approx((1.0, 1.0))
    with pytest.raises(calibration.CalibrationError, match="do not separate"):
        calibration._weighted_least_squares([(1, 2, 0, 3), (2, 4, 0, 6)])
