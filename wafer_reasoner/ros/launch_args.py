"""What the launch files check before they start a node; no ROS import (the launch files and the tests use it).

    OpaqueFunction(function=require_params_files, args=["params_file"])   # in a LaunchDescription, before the node

A parameters file that is missing, a folder or unreadable makes launch refuse to start, naming the argument and
the file (launch_ros alone would only warn and start the node on its defaults).
"""

from __future__ import annotations

import os

# launch matches choices case-sensitively; `use_sim_time:=True` is as valid as `true` (ParameterValue reads both)
BOOL_CHOICES = ("true", "false", "True", "False")


class LaunchArgumentError(RuntimeError):
    """A launch argument that cannot be used; the message names the argument, the value and the fix."""


def params_file_problem(path: str) -> str:
    """Why ``path`` cannot be a parameters file ("" when it can)."""
    if not path:
        return "no file given"
    if not os.path.exists(path):
        return "no such file"
    if not os.path.isfile(path):
        return "not a file"
    if not os.access(path, os.R_OK):
        return "not readable"
    return ""


def require_params_files(context, *names: str) -> list:
    """An OpaqueFunction body: raise LaunchArgumentError for the first of the launch arguments ``names`` whose
    parameters file cannot be used; nothing to add to the launch otherwise."""
    for name in names:
        path = context.launch_configurations.get(name, "")
        problem = params_file_problem(path)
        if problem:
            raise LaunchArgumentError(
                f"{name}:={path!r}: {problem}. Give a readable YAML parameters file "
                f"('/**: {{ros__parameters: {{...}}}}'), or leave {name} out for the package's default."
            )
    return []
