"""The emulated (target model, hardware) pair a reasoner charges, built from the package's emulator files.

    emulator = emulator_for("Llama-3.1-70B", "WSE-3")     # config/emulator.yaml's other settings
    emulator = emulator_for()                              # the pair config/emulator.yaml names

Files are found by ``runtime/resources.py``; the emulator itself (``wafer_reasoner/emulator``) only reads the
paths it is given.
"""

from __future__ import annotations

from wafer_reasoner.emulator import Emulator, EmulatorDataError, known_targets, load_hardware, select
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.runtime.resources import config_file, model_dir

SETTINGS_FILE = "emulator.yaml"
HARDWARE_FILE = "hardware.yaml"
TARGETS_FILE = "target_models.yaml"


def hardware_profiles(extra_paths=(), hardware_path=None) -> dict:
    """{name: profile} of config/hardware.yaml (or ``hardware_path``) and each extra file."""
    return load_hardware(config_file(HARDWARE_FILE, hardware_path), extra_paths=extra_paths)


def target_models(planner_dir=None, targets_path=None) -> dict:
    """The presets of config/target_models.yaml (or ``targets_path``) and ``planner``: the planner model in
    ``planner_dir`` (default: the shipped one)."""
    return known_targets(config_file(TARGETS_FILE, targets_path), model_dir(planner_dir))


def emulator_settings(settings_path=None) -> dict:
    return dict(read_yaml(config_file(SETTINGS_FILE, settings_path)))


def emulator_for(target_model: str | None = None, hardware: str | None = None, *, settings_path=None,
                 planner_dir=None, hardware_path=None, targets_path=None) -> Emulator:
    """The Emulator of config/emulator.yaml (or ``settings_path``), with the target model and hardware named
    here when given. EmulatorDataError names what is wrong."""
    settings = emulator_settings(settings_path)
    settings |= {key: value for key, value in (("target_model", target_model), ("hardware", hardware)) if value}
    extra = settings.pop("hardware_files", None) or []
    if not isinstance(extra, list):
        raise EmulatorDataError("emulator settings: 'hardware_files' must be a list of paths")
    profiles = hardware_profiles(extra, hardware_path)
    target, profile, speculative, options = select(settings, profiles, target_models(planner_dir, targets_path))
    return Emulator(target, profile, speculative=speculative, options=options)


def emulated_details(timing, choice=None) -> dict:
    """What a plan record's ``emulated`` object says about the charged pair (the time is timings_ms.emulated_ms)
    and, when the model was asked, about best-of-N under the emulated deadline (``choice``: a DeadlineChoice)."""
    best_of_n = choice.to_dict() if choice is not None else {}
    return best_of_n | {
        "target": timing.target,
        "hardware": timing.hardware,
        "devices": timing.devices,
        "bound": timing.bound,
        "prompt_tokens": timing.prompt_tokens,
        "generated_tokens": timing.generated_tokens,
        "speculative": timing.speculative,
    }
