"""The wafer-scale timing emulator: the time a chosen target model would take on chosen hardware under a chosen
serving stack.

Pure Python (no ROS, no torch). Seams, one module each:
    targets.py     TargetModel, load_targets(), planner_target()       what runs (config/target_models.yaml)
    hardware.py    WaferProfile, DeviceProfile, load_hardware()        where it runs: physics (config/hardware.yaml)
    stacks.py      ServingStack, load_stacks(), stack_for()             the software it runs under (config/stacks.yaml)
    placement.py   place(), placement_report()                        weights + KV cache onto cores / devices
    timing.py      forward() -> ForwardCost, speculative_step()        the cost formulas (+ wafer_timing.py)
    emulator.py    Emulator, EmulatedTiming                            one query: serving, prefill, reasoning, decode
    settings.py    select()                                            the triple named by config/emulator.yaml
    reasoning.py   ReasoningBudget, reasoning_from_dict()              hidden tokens a target thinks first
    figures.py, fitting.py, calibration.py, report.py                  published rows, fits, leave-one-stack-out
    deadline.py, pacing.py                                             best-of-N under a deadline; paced release
docs/emulator.md has the formulas, the calibration rows and the validation table. The emulator imports nothing
of the project and reads only the files it is given (``runtime/resources.py`` finds the package's own);
``wafer-reasoner emulate`` is ``wafer_reasoner/cli/emulate.py``.
"""

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.emulator import EmulatedTiming, Emulator, SpeculativeSettings
from wafer_reasoner.emulator.hardware import DeviceProfile, WaferProfile, load_hardware
from wafer_reasoner.emulator.placement import PlacementOptions, place
from wafer_reasoner.emulator.reasoning import ReasoningBudget, ReasoningSettings, reasoning_from_dict
from wafer_reasoner.emulator.settings import known_targets, select
from wafer_reasoner.emulator.stacks import ServingStack, load_stacks, stack_for
from wafer_reasoner.emulator.targets import TargetModel, load_targets, planner_target

__all__ = [
    "DeviceProfile", "EmulatedTiming", "Emulator", "EmulatorDataError", "PlacementOptions", "ReasoningBudget",
    "ReasoningSettings", "ServingStack", "SpeculativeSettings", "TargetModel", "WaferProfile", "known_targets",
    "load_hardware", "load_stacks", "load_targets", "place", "planner_target", "reasoning_from_dict", "select",
    "stack_for",
]
