"""Pacing (wafer_reasoner/emulator/pacing.py): release time and lateness of a plan, pure arithmetic."""

import math

import pytest

from wafer_reasoner.emulator.pacing import EMULATED, OFF, PACING_MODES, check_mode, pace


def test_a_fast_host_holds_the_plan_until_query_time_plus_emulated_latency():
    release = pace(query_s=100.0, host_done_s=100.002, emulated_ms=30.0)
    assert release.release_s == pytest.approx(100.030)
    assert release.behind_ms == 0.0
    assert release.wait_s == pytest.approx(0.028)


def test_a_slow_host_releases_at_once_and_reports_how_far_behind_it_is():
    release = pace(query_s=100.0, host_done_s=100.250, emulated_ms=30.0)
    assert release.release_s == 100.250
    assert release.behind_ms == pytest.approx(220.0)
    assert release.wait_s == 0.0


def test_exactly_on_time_is_not_behind():
    release = pace(query_s=5.0, host_done_s=5.5, emulated_ms=500.0)
    assert (release.release_s, release.behind_ms, release.wait_s) == (5.5, 0.0, 0.0)


def test_zero_negative_or_unknown_emulated_time_never_holds_a_plan():
    for emulated_ms in (0.0, -3.0, math.nan, math.inf):
        release = pace(query_s=1.0, host_done_s=1.0, emulated_ms=emulated_ms)
        assert (release.release_s, release.behind_ms, release.wait_s) == (1.0, 0.0, 0.0)


def test_plans_keep_the_order_they_were_asked_in():
    first = pace(query_s=0.0, host_done_s=0.001, emulated_ms=500.0)
    second = pace(query_s=0.1, host_done_s=0.101, emulated_ms=10.0, not_before_s=first.release_s)
    assert second.release_s == first.release_s == pytest.approx(0.5)
    assert second.behind_ms == 0.0 and second.wait_s == pytest.approx(0.399)


def test_simulated_time_is_just_another_clock():
    # under use_sim_time the host may finish at the same simulated instant it was asked
    release = pace(query_s=12.0, host_done_s=12.0, emulated_ms=2.5)
    assert release.release_s == pytest.approx(12.0025) and release.behind_ms == 0.0


def test_times_must_be_finite():
    with pytest.raises(ValueError, match="query_s"):
        pace(query_s=math.nan, host_done_s=0.0, emulated_ms=1.0)
    with pytest.raises(ValueError, match="host_done_s"):
        pace(query_s=0.0, host_done_s=math.inf, emulated_ms=1.0)


def test_modes():
    assert PACING_MODES == (OFF, EMULATED) == ("off", "emulated")
    assert check_mode("emulated") == "emulated"
    with pytest.raises(ValueError, match="off, emulated"):
        check_mode("fast")
