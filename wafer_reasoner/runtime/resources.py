"""Where the package's files are: config files, scenarios and the planner model, found in one documented order.

    config_file("emulator.yaml")              -> Path
    config_file("semantic_map.yaml", explicit=param_value)
    model_dir(explicit=param_value)           -> Path (the folder with planner.onnx)

Order, for every node, CLI and study:

1. an explicit path (a parameter or a command-line option) when one is given: used as it is, or an error;
2. the installed share folder: ``share/wafer_reasoner/config`` of the ament index (colcon, or a venv with
   ``AMENT_PREFIX_PATH`` set), else of this Python's prefix (``pip install`` puts data files there, so a shell
   with only ``.venv/bin`` on the path finds them too);
3. the source tree's ``config/`` (a checkout used without installing).

The planner model ships inside the Python package (``wafer_reasoner/models``), so step 2 and 3 are one folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from wafer_reasoner.engine import SHIPPED_MODEL_DIR

PACKAGE = "wafer_reasoner"
SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent  # the checkout (when running from one)
SOURCE_CONFIG = SOURCE_ROOT / "config"


class ResourceError(FileNotFoundError):
    """A file the package needs is not where it was looked for; the message lists every place."""


def _ament_share() -> Path | None:
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(PACKAGE))
    except (PackageNotFoundError, ValueError, LookupError, OSError):  # OSError: AMENT_PREFIX_PATH unset
        return None


def share_dirs() -> list:
    """Installed share folders of the package, most specific first (may be empty)."""
    found = [_ament_share(), Path(sys.prefix) / "share" / PACKAGE]
    unique = []
    for folder in found:
        if folder is not None and folder not in unique and folder.is_dir():
            unique.append(folder)
    return unique


def config_candidates(name: str) -> list:
    """Every place ``config/<name>`` is looked for, in order."""
    return [folder / "config" / name for folder in share_dirs()] + [SOURCE_CONFIG / name]


def config_file(name: str, explicit=None) -> Path:
    """``explicit`` when given (it must exist), else the first ``config/<name>`` of ``config_candidates``."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ResourceError(f"{path} does not exist or is not a file")
        return path.resolve()
    candidates = config_candidates(name)
    for path in candidates:
        if path.is_file():
            return path
    raise ResourceError(f"cannot find config/{name} (looked in {', '.join(str(p) for p in candidates)})")


def config_dir(name: str = "") -> Path:
    """The config folder (or its sub-folder ``name``, e.g. ``scenarios``) that ``config_file`` reads from."""
    for folder in [*(share / "config" for share in share_dirs()), SOURCE_CONFIG]:
        if (folder / name).is_dir():
            return folder / name
    raise ResourceError(f"cannot find the package's config/{name} folder (looked in the share folders and "
                        f"{SOURCE_CONFIG})")


def model_dir(explicit=None) -> Path:
    """The planner model's folder: ``explicit`` when given, else the model shipped in the package."""
    return Path(explicit).expanduser() if explicit else SHIPPED_MODEL_DIR


def scenario_file(value: str) -> Path | None:
    """A scenario: None for ''; a bare name ('bring_red_cup') is ``config/scenarios/<name>.yaml`` found as
    ``config_file`` finds files; anything else is a path, which must exist."""
    value = value.strip()
    if not value:
        return None
    if "/" in value or value.endswith((".yaml", ".yml")):
        return config_file("", explicit=value)
    return config_file(f"scenarios/{value}.yaml")
