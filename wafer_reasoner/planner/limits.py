"""Safety limits: the numbers every plan is checked against before anything is published.

The unit is in every field name so a params file cannot mix degrees and radians by accident.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


class LimitsError(ValueError):
    """Safety limits that cannot be used; the message names the field and why."""


@dataclass(frozen=True)
class SafetyLimits:
    workspace_min_x_m: float = -10.0  # navigation goals must lie inside this box (scene frame)
    workspace_max_x_m: float = 10.0
    workspace_min_y_m: float = -10.0
    workspace_max_y_m: float = 10.0
    max_linear_speed_mps: float = 0.5  # every published cmd_vel is clamped to these
    max_angular_speed_radps: float = 1.0
    max_scene_age_s: float = 2.0  # perception older than this is not planned against
    max_wait_s: float = 60.0  # longest wait() step
    max_rotate_deg: float = 360.0  # largest |rotate()| step
    standoff_m: float = 0.6  # distance of the stand-off pose from a navigation target
    max_reach_m: float = 0.9  # horizontal distance the arm reaches from the base

    def __post_init__(self) -> None:
        for item in fields(self):
            _require_number(item.name, getattr(self, item.name))
        if self.workspace_min_x_m >= self.workspace_max_x_m:
            raise LimitsError("workspace_min_x_m must be below workspace_max_x_m")
        if self.workspace_min_y_m >= self.workspace_max_y_m:
            raise LimitsError("workspace_min_y_m must be below workspace_max_y_m")
        for name in (
            "max_linear_speed_mps",
            "max_angular_speed_radps",
            "max_scene_age_s",
            "max_rotate_deg",
            "max_reach_m",
        ):
            if getattr(self, name) <= 0:
                raise LimitsError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("max_wait_s", "standoff_m"):
            if getattr(self, name) < 0:
                raise LimitsError(f"{name} must not be negative, got {getattr(self, name)}")
        # the robot stops standoff_m short of what it picks, so it must be able to reach that far
        if self.standoff_m > self.max_reach_m:
            raise LimitsError(f"standoff_m ({self.standoff_m}) must not exceed max_reach_m ({self.max_reach_m})")

    @classmethod
    def from_mapping(cls, data) -> SafetyLimits:
        """Limits from a params mapping; missing fields keep their defaults, unknown fields are errors (typos)."""
        if not hasattr(data, "keys"):
            raise LimitsError(f"safety limits must be a mapping, got {type(data).__name__}")
        known = {item.name for item in fields(cls)}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise LimitsError(f"unknown safety limit(s) {unknown}; known: {sorted(known)}")
        return cls(**{key: data[key] for key in data})

    def contains_xy(self, x: float, y: float) -> bool:
        """True when (x, y) is a finite point inside the workspace box (edges included)."""
        return (
            math.isfinite(x)
            and math.isfinite(y)
            and self.workspace_min_x_m <= x <= self.workspace_max_x_m
            and self.workspace_min_y_m <= y <= self.workspace_max_y_m
        )


def _require_number(name: str, value) -> None:
    # bool is an int subclass; `standoff_m: true` in YAML is a mistake, not 1 metre
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LimitsError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise LimitsError(f"{name} must be finite, got {value}")
