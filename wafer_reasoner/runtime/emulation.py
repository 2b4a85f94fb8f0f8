"""The emulated (target model, hardware, serving stack) triple a reasoner charges, built from the package's files.

    emulator = emulator_for("Llama-3.1-70B", "WSE-3")             # the hardware's default stack
    emulator = emulator_for("Llama-3.1-70B", "H200", "tensorrt-llm-2024-12")
    emulator = emulator_for()                                      # the triple config/emulator.yaml names
    reasoning = reasoning_for()                                    # config/emulator.yaml's reasoning budgets

Files are found by ``runtime/resources.py``; the emulator itself (``wafer_reasoner/emulator``) only reads the
paths it is given.
"""

from __future__ import annotations

from wafer_reasoner.emulator import EmulatorDataError, known_targets, load_hardware, load_stacks
from wafer_reasoner.emulator.datafiles import read_yaml
from wafer_reasoner.emulator.figures import load_figures
from wafer_reasoner.emulator.reasoning import reasoning_from_dict
from wafer_reasoner.emulator.settings import emulator_from_settings
from wafer_reasoner.runtime.resources import config_file, model_dir
from wafer_reasoner.understanding.clauses import split_clauses

SETTINGS_FILE = "emulator.yaml"
HARDWARE_FILE = "hardware.yaml"
STACKS_FILE = "stacks.yaml"
TARGETS_FILE = "target_models.yaml"
FIGURES_FILE = "published_figures.yaml"


def hardware_profiles(extra_paths=(), hardware_path=None) -> dict:
    """{name: profile} of config/hardware.yaml (or ``hardware_path``) and each extra file."""
    return load_hardware(config_file(HARDWARE_FILE, hardware_path), extra_paths=extra_paths)


def serving_stacks(extra_paths=(), stacks_path=None) -> tuple:
    """({name: stack}, {hardware: default stack}) of config/stacks.yaml (or ``stacks_path``) and the ``stacks``
    sections of each extra hardware file (a host bench writes one)."""
    return load_stacks(config_file(STACKS_FILE, stacks_path), extra_paths=extra_paths)


def target_models(planner_dir=None, targets_path=None) -> dict:
    """The presets of config/target_models.yaml (or ``targets_path``) and ``planner``: the planner model in
    ``planner_dir`` (default: the shipped one)."""
    return known_targets(config_file(TARGETS_FILE, targets_path), model_dir(planner_dir))


def published_figures(figures_path=None) -> tuple:
    """The published rows of config/published_figures.yaml (or ``figures_path``)."""
    return load_figures(config_file(FIGURES_FILE, figures_path))


def emulator_settings(settings_path=None) -> dict:
    return dict(read_yaml(config_file(SETTINGS_FILE, settings_path)))


def extra_files(settings: dict) -> list:
    extra = settings.pop("hardware_files", None) or []
    if not isinstance(extra, list):
        raise EmulatorDataError("emulator settings: 'hardware_files' must be a list of paths")
    return extra


def emulator_for(target_model: str | None = None, hardware: str | None = None, stack: str | None = None, *,
                 settings_path=None, planner_dir=None, hardware_path=None, targets_path=None, stacks_path=None):
    """The Emulator of config/emulator.yaml (or ``settings_path``), with the target model, hardware and stack named
    here when given (an empty stack: the hardware's default). EmulatorDataError names what is wrong."""
    settings = emulator_settings(settings_path)
    if hardware and not stack and hardware != settings.get("hardware"):
        settings["stack"] = None  # another hardware than the file's: its own default stack
    named = (("target_model", target_model), ("hardware", hardware), ("stack", stack))
    settings |= {key: value for key, value in named if value}
    extra = extra_files(settings)
    return emulator_from_settings(settings, hardware_profiles(extra, hardware_path),
                                  serving_stacks(extra, stacks_path), target_models(planner_dir, targets_path))


def reasoning_for(settings_path=None):
    """The reasoning budgets of config/emulator.yaml (or ``settings_path``): ReasoningSettings."""
    return reasoning_from_dict(emulator_settings(settings_path).get("reasoning"))


def query_class(utterance) -> str:
    """The query class a reasoning budget may depend on: ``single`` (one clause) or ``compound`` (several)."""
    if not isinstance(utterance, str):
        return "single"
    return "compound" if len(split_clauses(utterance)) > 1 else "single"


def emulated_details(timing, choice=None) -> dict:
    """What a plan record's ``emulated`` object says about the charged triple (the time is timings_ms.emulated_ms)
    and, when the model was asked, about best-of-N under the emulated deadline (``choice``: a DeadlineChoice)."""
    best_of_n = choice.to_dict() if choice is not None else {}
    return best_of_n | {
        "target": timing.target,
        "hardware": timing.hardware,
        "stack": timing.stack,
        "devices": timing.devices,
        "bound": timing.bound,
        "prompt_tokens": timing.prompt_tokens,
        "reasoning_tokens": timing.reasoning_tokens,
        "generated_tokens": timing.generated_tokens,
        "speculative": timing.speculative,
    }
