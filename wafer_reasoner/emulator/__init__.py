"""The wafer-scale timing emulator: the time a chosen target model would take on chosen hardware.

Pure Python (no ROS, no torch). Seams, one module each:
    targets.py     TargetModel, load_targets(), planner_target()       what runs (config/target_models.yaml)
    hardware.py    WaferProfile, DeviceProfile, load_hardware()        where it runs (config/hardware.yaml)
    placement.py   place(), placement_report()                        weights + KV cache onto cores / devices
    timing.py      forward() -> ForwardCost, speculative_step()        the cost formulas
    emulator.py    Emulator, EmulatedTiming, select()                  one query: prefill + decode
    figures.py, calibration.py                                         published rows, fit, validation table
docs/emulator.md has the formulas, the calibration rows and the validation table. The emulator imports nothing
of the project and reads only the files it is given (``runtime/resources.py`` finds the package's own);
``wafer-reasoner emulate`` is ``wafer_reasoner/cli/emulate.py``.
"""

from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.emulator import (
    EmulatedTiming,
    Emulator,
    SpeculativeSettings,
    known_targets,
    select,
)
from wafer_reasoner.emulator.hardware import DeviceProfile, WaferProfile, load_hardware
from wafer_reasoner.emulator.placement import PlacementOptions, place
from wafer_reasoner.emulator.targets import TargetModel, load_targets, planner_target

__all__ = [
    "DeviceProfile", "EmulatedTiming", "Emulator", "EmulatorDataError", "PlacementOptions", "SpeculativeSettings",
    "TargetModel", "WaferProfile", "known_targets", "load_hardware", "load_targets",
    "place", "planner_target", "select",
]
