"""The emergency stop's own thread: a subscription that no other callback of the process can hold up.

A callback group of its own on a MultiThreadedExecutor was not enough: during a burst of transcripts rclpy's
executor dispatched the emergency stop 1-19 ms after the message arrived (measured with MessageInfo's
received_timestamp), because the one thread that waits and dispatches is shared with the busy callbacks. So the
emergency stop gets a helper node (``<node>_emergency_stop``, same namespace, same remappings) spun by an
executor on a thread that does nothing else: when the message arrives, only the GIL stands between it and the
callback (see GIL_SWITCH_INTERVAL_S in reasoner_node.py).
"""

from __future__ import annotations

import os
import threading

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from std_msgs.msg import Empty

from wafer_reasoner.ros.qos import EMERGENCY_STOP_QOS

TOPIC = "emergency_stop"
THREAD_NICE = -10  # this thread's nice value, when the process may raise its priority


class EmergencyStopListener:
    """Calls ``on_stop()`` on its own thread for every std_msgs/Empty on ``emergency_stop``."""

    def __init__(self, owner, on_stop) -> None:
        name = f"{owner.get_name()}_emergency_stop"
        # a local __node remap: a launch file's global `-r __node:=reasoner_node` would otherwise name this helper
        # reasoner_node too (two nodes of one name)
        self.node = rclpy.create_node(name, namespace=owner.get_namespace(), context=owner.context,
                                      cli_args=["--ros-args", "-r", f"__node:={name}"], start_parameter_services=False)
        self.subscription = self.node.create_subscription(Empty, TOPIC, lambda _msg: on_stop(), EMERGENCY_STOP_QOS)
        self._executor = SingleThreadedExecutor(context=owner.context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name="emergency_stop", daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:  # ahead of other work on the machine where allowed (root or CAP_SYS_NICE); else as it is
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), THREAD_NICE)
        except OSError:
            pass
        try:
            self._executor.spin()
        except ExternalShutdownException:  # the process is shutting down
            pass

    def close(self) -> None:
        self._executor.shutdown(timeout_sec=1.0)
        self._thread.join(timeout=2.0)
        self.node.destroy_node()
