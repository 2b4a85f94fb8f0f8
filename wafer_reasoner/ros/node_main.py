"""The life of a node process: init, make the node, spin until Ctrl-C or an outside shutdown, clean up."""

from __future__ import annotations

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation

RCLError = rclpy_implementation.RCLError  # what rcl failures raise (bad arguments, no DDS participant, ...)

ARGUMENTS_HINT = ("check the --ros-args (a --params-file must name a readable YAML file with "
                  "'/**: {ros__parameters: {...}}', or the node's name in place of /**)")


def run_node(make_node, name: str, startup_errors: tuple, args=None, *, executor=SingleThreadedExecutor) -> int:
    """Exit code 0 after a normal end; 1 when the ROS arguments cannot be used or ``make_node()`` raises one of
    ``startup_errors`` (logged as "cannot start: <why>", never a traceback). ``executor``: the executor class
    (or a factory) that spins the node."""
    try:
        rclpy.init(args=args)
    except RCLError as error:  # e.g. a --params-file that is missing or not YAML
        rclpy.logging.get_logger(name).fatal(f"cannot start: {_without_source_lines(error)}; {ARGUMENTS_HINT}")
        return 1
    try:
        node = make_node()
    except (*startup_errors, RCLError) as error:  # RCLError: e.g. DDS security files that cannot be used
        rclpy.logging.get_logger(name).fatal(f"cannot start: {_without_source_lines(error)}")
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    spinner = executor()
    spinner.add_node(node)
    try:
        spinner.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        spinner.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def _without_source_lines(error: Exception) -> str:
    """rcl's message without the C source locations it appends (", at /project/src/....c:271")."""
    return str(error).split(", at /")[0]
