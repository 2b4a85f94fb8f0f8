"""The layout the README's architecture section shows: one folder per concern, imports in one direction only,
rclpy only in ros/, and no module or function too long to read."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "wafer_reasoner"
LOWER = ("planner", "emulator", "understanding", "engine", "remote", "runtime", "sim")
# folder -> the project folders it may import (itself always); the README's diagram draws this
ALLOWED = {
    "planner": set(),
    "emulator": set(),
    "understanding": {"planner"},
    "engine": {"planner", "understanding"},
    "remote": {"planner"},  # the OpenAI-compatible backend: standard library only, no engine, no ROS
    "runtime": {"planner", "understanding", "engine", "emulator", "remote"},
    "sim": {"planner", "runtime"},
    "training": {*LOWER},
    "studies": {*LOWER, "training"},
    "cli": {*LOWER, "training", "ros"},  # ros: record and replay of bags (imported only by those commands)
    "demo": {*LOWER},
    "ros": {*LOWER, "studies", "demo"},  # never training: it needs torch and is no part of a robot
}
ROS_MODULES = {"rclpy", "std_msgs", "geometry_msgs", "nav_msgs", "diagnostic_msgs", "rcl_interfaces",
               "rosgraph_msgs", "sensor_msgs", "lifecycle_msgs", "visualization_msgs", "builtin_interfaces"}
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
# literal word lists and tables, exempt from the module length
LITERAL_TABLES = {"wafer_reasoner/training/speech_lexicon.py"}


def modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def folder_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ""


def imported(path: Path):
    """(module name, line) of every import in the file, lazy ones inside functions included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            yield name, node.lineno
            for alias in node.names:  # "from wafer_reasoner import engine" imports the folder engine
                if name == "wafer_reasoner":
                    yield f"wafer_reasoner.{alias.name}", node.lineno


def test_every_folder_is_in_the_import_order():
    folders = {folder_of(path) for path in modules()} - {""}
    assert folders == set(ALLOWED), "a new folder needs its place in ALLOWED and in the README's diagram"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_imports_go_one_way(path):
    folder = folder_of(path)
    if not folder:
        return
    for name, line in imported(path):
        parts = name.split(".")
        if parts[0] == "wafer_reasoner" and len(parts) > 1 and parts[1] in ALLOWED and parts[1] != folder:
            assert parts[1] in ALLOWED[folder], f"{path.relative_to(REPO)}:{line} imports {name}"
        if parts[0] in ROS_MODULES:
            assert folder == "ros", f"{path.relative_to(REPO)}:{line} imports {name}: only ros/ talks to ROS"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(REPO)))
def test_modules_and_functions_stay_short(path):
    relative = str(path.relative_to(REPO))
    text = path.read_text(encoding="utf-8")
    if relative not in LITERAL_TABLES:
        assert text.count("\n") <= MAX_MODULE_LINES, f"{relative} has {text.count(chr(10))} lines"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{relative}:{node.lineno} {node.name} has {length} lines"


def test_the_readme_diagram_lists_every_folder():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    for folder in ALLOWED:
        assert f"{folder}/" in section, folder
