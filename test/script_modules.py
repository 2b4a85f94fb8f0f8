"""Load a script that is not a package module (a bench, a launch file, a script under scripts/) for its tests."""

import importlib.util
from pathlib import Path


def load_script(path: Path, name: str | None = None):
    """The module of the Python file at ``path``, executed once under ``name`` (its file stem by default)."""
    spec = importlib.util.spec_from_file_location(name or Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
