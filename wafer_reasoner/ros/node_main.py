"""The life of a node process: init, make the node, spin until Ctrl-C or an outside shutdown, clean up."""

from __future__ import annotations

import rclpy
from rclpy.executors import ExternalShutdownException


def run_node(make_node, name: str, startup_errors: tuple, args=None) -> int:
    """Exit code 0 after a normal end; 1 when ``make_node()`` raises one of ``startup_errors`` (logged as
    "cannot start: <why>", never a traceback)."""
    rclpy.init(args=args)
    try:
        node = make_node()
    except startup_errors as error:
        rclpy.logging.get_logger(name).fatal(f"cannot start: {error}")
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
