"""Fixtures shared by the emulator tests: the hardware profiles, serving stacks and target models shipped in config/,
and a maker of emulators on a profile's default stack."""

import pytest

from wafer_reasoner.emulator import Emulator, load_hardware, load_stacks, load_targets, stack_for
from wafer_reasoner.runtime.resources import SOURCE_CONFIG


@pytest.fixture(scope="session")
def profiles():
    """{name: profile} from config/hardware.yaml."""
    return load_hardware(SOURCE_CONFIG / "hardware.yaml")


@pytest.fixture(scope="session")
def stacks():
    """({name: ServingStack}, {hardware: default stack name}) from config/stacks.yaml."""
    return load_stacks(SOURCE_CONFIG / "stacks.yaml")


@pytest.fixture(scope="session")
def targets():
    """{name: TargetModel} from config/target_models.yaml."""
    return load_targets(SOURCE_CONFIG / "target_models.yaml")


@pytest.fixture(scope="session")
def emulator_on(profiles, stacks):
    """emulator_on(target, hardware name, stack name or None, **Emulator options): an Emulator on that hardware
    under that stack (None: the hardware's default)."""

    def make(target, hardware: str, stack: str | None = None, **options):
        profile = profiles[hardware]
        return Emulator(target, profile, stack_for(*stacks, profile, stack), **options)

    return make
