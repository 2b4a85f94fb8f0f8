"""Fixtures shared by the emulator tests: the hardware profiles and target models shipped in config/."""

import pytest

from wafer_reasoner.emulator import load_hardware, load_targets
from wafer_reasoner.runtime.resources import SOURCE_CONFIG


@pytest.fixture(scope="session")
def profiles():
    """{name: profile} from config/hardware.yaml."""
    return load_hardware(SOURCE_CONFIG / "hardware.yaml")


@pytest.fixture(scope="session")
def targets():
    """{name: TargetModel} from config/target_models.yaml."""
    return load_targets(SOURCE_CONFIG / "target_models.yaml")
