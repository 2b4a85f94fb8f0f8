"""The ament_python package: package.xml, setup.cfg, and where pip and colcon-style installs put files."""

import ast
import configparser
import os
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXECUTABLES = ("demo_operator", "emergency_stop_relay", "reasoner_node", "sim_world", "wafer-reasoner")
EXEC_DEPENDS = {
    "rclpy", "std_msgs", "geometry_msgs", "nav_msgs", "diagnostic_msgs", "rosgraph_msgs", "builtin_interfaces",
    "lifecycle_msgs", "visualization_msgs", "action_msgs", "python3-numpy", "python3-yaml", "python3-onnxruntime-pip",
    "launch", "launch_ros",
}  # fmt: skip
# Python import name -> rosdep key, where they differ (a ROS package imports under its own name)
ROSDEP_KEYS = {"numpy": "python3-numpy", "yaml": "python3-yaml", "onnxruntime": "python3-onnxruntime-pip"}
# imported, deliberately not in package.xml: the extras a robot does not need, each imported only lazily or in
# its own folder (training, studies), and integrations that switch themselves on where installed
NOT_EXEC_DEPENDS = {
    "torch": "the [train] extra (wafer_reasoner/training)",
    "onnx": "the [train] extra: the engine's own export is written at training time (training/kv_export.py)",
    "all_minilm_l6_v2": "the [train] extra: the word-knowledge experiment's encoder (training/minilm.py)",
    "matplotlib": "the [study] extra (studies, figures)",
    "rosbags": "the [bags] extra: wafer-reasoner record / replay (no rosdep key; pip install rosbags)",
}
# imported by name where installed (a parameter names the action type), else the topic: optional on a robot
OPTIONAL_BY_NAME = {"navigation.action_type": "nav2_msgs", "gripper.action_type": "control_msgs"}
# needed without an import of their own
USED_WITHOUT_IMPORT = {"lifecycle_msgs": "rclpy.lifecycle's services and transition events (a LifecycleNode)"}
PACKAGE_SOURCES = ("setup.py", "setup.cfg", "package.xml", "resource", "wafer_reasoner", "launch", "config", "rviz")


def test_package_xml_is_format_3_ament_python_with_the_deps():
    root = ET.parse(REPO / "package.xml").getroot()
    assert root.tag == "package" and root.get("format") == "3"
    assert root.findtext("name") == "wafer_reasoner"
    assert root.findtext("version")
    assert root.findtext("export/build_type") == "ament_python"
    assert EXEC_DEPENDS <= {element.text for element in root.findall("exec_depend")}
    assert "python3-pytest" in {element.text for element in root.findall("test_depend")}
    assert (REPO / "resource" / "wafer_reasoner").is_file()


def _third_party_imports() -> dict:
    """{top-level module: first file importing it} over wafer_reasoner/ and launch/, lazy imports included."""
    found = {}
    sources = sorted((REPO / "wafer_reasoner").rglob("*.py")) + sorted((REPO / "launch").glob("*.py"))
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "wafer_reasoner":
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_import_is_declared_in_package_xml_and_every_declared_package_is_used():
    """rosdep installs what package.xml names: an import missing there is a ModuleNotFoundError on a robot."""
    root = ET.parse(REPO / "package.xml").getroot()
    declared = {element.text for element in root.findall("exec_depend")}
    imports = _third_party_imports()
    needed = {ROSDEP_KEYS.get(name, name): path for name, path in imports.items() if name not in NOT_EXEC_DEPENDS}
    missing = {key: path for key, path in needed.items() if key not in declared}
    assert not missing, f"imported but not an exec_depend in package.xml: {missing}"
    unused = declared - set(needed) - set(USED_WITHOUT_IMPORT)
    assert not unused, f"exec_depend in package.xml that nothing imports: {sorted(unused)}"
    assert set(NOT_EXEC_DEPENDS) <= set(imports), "an exemption for a module nothing imports"
    assert "rclpy.lifecycle" in (REPO / "wafer_reasoner" / "ros" / "reasoner_node.py").read_text()


def test_optional_action_packages_are_named_by_parameters_and_left_out_of_package_xml():
    from wafer_reasoner.ros.reasoner_params import PARAMETERS

    declared = {element.text for element in ET.parse(REPO / "package.xml").getroot().findall("exec_depend")}
    for parameter, package in OPTIONAL_BY_NAME.items():
        assert PARAMETERS[parameter].default.startswith(f"{package}/action/")
        assert package not in declared and package in (REPO / "package.xml").read_text()  # named in the comment


def test_setup_cfg_sends_colcon_scripts_to_lib():
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    assert config["develop"]["script_dir"] == "$base/lib/wafer_reasoner"
    assert config["install"]["install_scripts"] == "$base/lib/wafer_reasoner"


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory):
    """The package sources in a scratch directory, so builds never touch the shared working tree."""
    pytest.importorskip("setuptools")
    root = tmp_path_factory.mktemp("src") / "wafer_reasoner"
    root.mkdir()
    for name in PACKAGE_SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, root / name)
    return root


def test_wheel_puts_executables_in_lib_wafer_reasoner(source_copy, tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp_path),
            ".",
        ],
        cwd=source_copy,
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("wafer_reasoner-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        infos = {info.filename: info for info in archive.infolist()}
        data = next(
            name.split("/")[0] for name in infos if name.endswith(".data/data/share/wafer_reasoner/package.xml")
        )
        for exe in EXECUTABLES:
            info = infos[f"{data}/data/lib/wafer_reasoner/{exe}"]
            assert (info.external_attr >> 16) & stat.S_IXUSR, f"{exe} is not executable in the wheel"
            wrapper = archive.read(info).decode()
            assert wrapper.startswith("#!/bin/sh") and f'/../../bin/{exe}" "$@"' in wrapper
        assert f"{data}/data/share/ament_index/resource_index/packages/wafer_reasoner" in infos
        assert f"{data}/data/share/wafer_reasoner/config/scenarios/bring_red_cup.yaml" in infos
        assert f"{data}/data/share/wafer_reasoner/config/semantic_map.yaml" in infos
        assert f"{data}/data/share/wafer_reasoner/rviz/wafer_reasoner.rviz" in infos
        entry_points = archive.read(next(name for name in infos if name.endswith("entry_points.txt"))).decode()
    assert "sim_world = wafer_reasoner.ros.sim_world_node:main" in entry_points
    assert all(f"{exe} = " in entry_points for exe in EXECUTABLES)


def test_colcon_style_install_has_one_file_per_executable(source_copy, tmp_path):
    """What colcon's ament_python build runs: setup.py install with setup.cfg; no wrappers, no bin/."""
    egg_base = tmp_path / "egg"
    egg_base.mkdir()
    prefix = tmp_path / "install"
    subprocess.run(
        [sys.executable, "setup.py", "egg_info", "--egg-base", str(egg_base), "build", "--build-base",
         str(tmp_path / "build"), "install", "--prefix", str(prefix), "--record", str(tmp_path / "record.txt"),
         "--single-version-externally-managed"],
        cwd=source_copy,
        check=True,
        capture_output=True,
    )  # fmt: skip
    installed = sorted(path.name for path in (prefix / "lib" / "wafer_reasoner").iterdir())
    assert installed == sorted(EXECUTABLES)
    assert os.access(prefix / "lib" / "wafer_reasoner" / "sim_world", os.X_OK)
    assert not (prefix / "bin").exists()
    assert (prefix / "share" / "wafer_reasoner" / "package.xml").is_file()


def test_venv_install_layout():
    """After `make setup`: executables in <venv>/lib/wafer_reasoner, share/ found through the ament index."""
    prefix = Path(sys.prefix)
    if not (prefix / "share" / "wafer_reasoner" / "package.xml").exists():
        pytest.skip("wafer_reasoner is not pip-installed into this interpreter's prefix (run make setup)")
    for exe in EXECUTABLES:
        path = prefix / "lib" / "wafer_reasoner" / exe
        assert path.is_file() and os.access(path, os.X_OK), path
        assert os.access(prefix / "bin" / exe, os.X_OK)
    ament_index = pytest.importorskip("ament_index_python.packages")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AMENT_PREFIX_PATH", str(prefix))
        share = Path(ament_index.get_package_share_directory("wafer_reasoner"))
    assert share == prefix / "share" / "wafer_reasoner"
    assert (share / "config" / "scenarios" / "bring_red_cup.yaml").is_file()
