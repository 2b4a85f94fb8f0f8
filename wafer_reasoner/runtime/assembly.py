"""A ready reasoner from flat parameter values: what reasoner_node's configure step and ``wafer-reasoner replay``
both build, so a replayed session runs the same core the node ran.

    reasoner = build_reasoner({"engine_candidates": 3, "limits.standoff_m": 0.5, ...}, places, map_file,
                              clock=node_clock)
    reasoner.core.on_scene(...)

``values`` holds every parameter of reasoner_node's table (``ros/reasoner_params.py``) by its full name; the
named places come from the semantic map (``ros/reasoner_params.py: semantic_map``). Raises
ConfigurationError (parameters or files that cannot be used; the message says which and how to fix it) or
ModelLoadError (the model folder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wafer_reasoner.emulator import EmulatorDataError
from wafer_reasoner.emulator.pacing import check_mode
from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.limits import LimitsError, SafetyLimits
from wafer_reasoner.planner.scene import Scene
from wafer_reasoner.runtime.backends import BACKENDS, EMBEDDED, describe, remote_planner, remote_settings
from wafer_reasoner.runtime.core import ReasonerCore
from wafer_reasoner.runtime.emulation import emulator_for, reasoning_for
from wafer_reasoner.runtime.resources import ResourceError, model_dir

LIMITS_PREFIX = "limits."
ENGINE_PREFIX = "engine_"
BACKEND_PREFIX = "backend_"
EXECUTOR_PREFIX = "executor."


class ConfigurationError(RuntimeError):
    """Parameters or files the reasoner cannot start with; the message says which and how to fix it."""


@dataclass(frozen=True)
class Reasoner:
    core: ReasonerCore
    model: object  # PlannerModel, or the remote backend (runtime/backends.py)
    places: tuple
    map_file: Path

    def summary(self) -> str:
        limits, emulator = self.core.limits, self.core.emulator
        return (f"planner model from {self.model.model_dir}, {len(self.places)} named places from {self.map_file}; "
                f"caps {limits.max_linear_speed_mps:g} m/s, {limits.max_angular_speed_radps:g} rad/s; emulating "
                f"{emulator.target.name} on {emulator.hardware.name} ({emulator.stack.name}), "
                f"pacing {self.core.pacing}{describe(self.model)}")


def with_prefix(values: dict, prefix: str) -> dict:
    """{name without prefix: value} of the values whose names start with ``prefix``."""
    return {name[len(prefix):]: value for name, value in values.items() if name.startswith(prefix)}


def build_reasoner(values: dict, places: tuple, map_file, *, clock=None) -> Reasoner:
    """Limits, executor, semantic map, model, emulator and the core, from the parameter values."""
    try:
        limits = SafetyLimits.from_mapping(with_prefix(values, LIMITS_PREFIX))
    except LimitsError as error:
        raise ConfigurationError(f"bad 'limits.*' parameters: {error}") from None
    try:
        executor = Executor(limits, **with_prefix(values, EXECUTOR_PREFIX))
    except ValueError as error:
        raise ConfigurationError(f"bad 'executor.*' / 'limits.*' parameters: {error}") from None
    try:
        pacing = check_mode(values["emulator.pacing"])
    except ValueError as error:
        raise ConfigurationError(f"bad 'emulator.pacing' parameter: {error}") from None
    model, deadline_ms = load_planner(values, places)
    try:
        emulator = emulator_for(values["emulator.target_model"], values["emulator.hardware"],
                                values["emulator.stack"], planner_dir=model.model_dir)
        reasoning = reasoning_for()
    except (EmulatorDataError, ResourceError) as error:
        raise ConfigurationError(
            f"bad 'emulator.*' parameters: {error}. `wafer-reasoner emulate --list` shows the known names."
        ) from None
    core = ReasonerCore(model, emulator, limits, executor, places=places, pacing=pacing, deadline_ms=deadline_ms,
                        clock=clock, reasoning=reasoning,
                        gripper_replies=values["manipulator_replies_to_gripper"],
                        reply_ids=values["manipulator_reply_ids"], queue_depth=values["speech_queue_depth"])
    return Reasoner(core, model, places, Path(map_file))


def load_planner(values: dict, places: tuple):
    """(planner, best-of-N deadline in emulated ms): the embedded engine (``backend: embedded``), or the remote
    backend with the engine as its fallback (loaded only when ``backend_fallback`` is ``embedded``)."""
    if values["backend"] not in BACKENDS:
        raise ConfigurationError(f"'backend' must be one of {BACKENDS}, got {values['backend']!r}")
    if values["backend"] == EMBEDDED:
        return load_model(values, places)
    backend_values = with_prefix(values, BACKEND_PREFIX)
    fallback_mode = backend_values.pop("fallback")
    embedded = load_model(values, places)[0] if fallback_mode == EMBEDDED else None
    try:
        settings = remote_settings({**backend_values, "base_url": values["base_url"]})
        planner = remote_planner(settings, fallback=embedded, fallback_mode=fallback_mode,
                                 model_dir=model_dir(values["model_dir"] or None))
    except ValueError as error:
        raise ConfigurationError(f"bad 'backend_*' / 'base_url' parameters: {error}") from None
    return planner, values[f"{ENGINE_PREFIX}deadline_ms"]


def load_model(values: dict, places: tuple):
    """(PlannerModel, best-of-N deadline in emulated ms); onnxruntime is imported only when a model is loaded."""
    from wafer_reasoner.engine.fast_engine import EngineConfig
    from wafer_reasoner.engine.planner_model import ENGINES, PlannerModel

    engine_values = with_prefix(values, ENGINE_PREFIX)
    deadline_ms = engine_values.pop("deadline_ms")  # emulated time: the core applies it, the host decodes every row
    try:
        engine_config = EngineConfig.from_params(engine_values, prefix="")
    except ValueError as error:
        raise ConfigurationError(f"bad 'engine_*' parameters: {error}") from None
    if values["engine"] not in ENGINES:
        raise ConfigurationError(f"'engine' must be one of {ENGINES}, got {values['engine']!r}")
    model = PlannerModel(values["model_dir"] or None, threads=values["engine_threads"], engine=values["engine"],
                         engine_config=engine_config)
    model.prepare(Scene(places=places))  # the map part of the prompt, computed once
    return model, deadline_ms
