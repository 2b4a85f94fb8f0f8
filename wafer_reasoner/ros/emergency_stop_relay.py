"""A process of its own that zeroes ``cmd_vel`` on every emergency stop: the base stops without waiting for the
reasoner.

reasoner_node answers ``emergency_stop`` too (it zeroes ``cmd_vel`` first, then drops what it planned and
cancels its goals), on a thread of its own. But that thread shares one Python interpreter, and so one GIL,
with the planner and the thread taking a burst of transcripts: on the 2-core development machine its p99 was
3-8 ms during bursts (README, "Bursts and the emergency stop"), over the 5 ms target, because the thread that
holds the GIL may itself be waiting for a core. This node does one thing and holds no GIL anyone else needs: a
subscription to ``emergency_stop`` whose callback publishes a zero twist on ``cmd_vel``. It is always active (a
plain node, not a lifecycle one): an emergency stop works whatever state the reasoner is in, or if it died.

    ros2 run wafer_reasoner emergency_stop_relay --ros-args --params-file config/emergency_stop_relay.yaml
"""

from __future__ import annotations

import gc
import os
import sys

from geometry_msgs.msg import Twist
from rclpy.node import Node
from std_msgs.msg import Empty

from wafer_reasoner.ros.conversions import zero_twist
from wafer_reasoner.ros.emergency_stop import TOPIC
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.params import Param, declare_parameters, parameter_values
from wafer_reasoner.ros.qos import COMMAND_QOS, EMERGENCY_STOP_QOS

NODE_NAME = "emergency_stop_relay"
PARAMETERS = {
    "realtime_priority": Param(20, "SCHED_FIFO priority every thread of the process asks for at start (1-99: "
                               "ahead of every normal process on the machine, so the stop never waits for a core; "
                               "needs root or CAP_SYS_NICE, else the nice value applies). 0: no real-time "
                               "scheduling.", 0, 99),
    "nice": Param(-10, "Nice value the process asks for at start when it runs without real-time scheduling "
                  "(negative: ahead of other work on the machine; needs root or CAP_SYS_NICE, else it runs as it "
                  "is). 0 leaves it alone.", -20, 19),
}


class EmergencyStopRelay(Node):
    """Publishes a zero ``geometry_msgs/Twist`` on ``cmd_vel`` for every ``std_msgs/Empty`` on
    ``emergency_stop``."""

    def __init__(self, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        declare_parameters(self, PARAMETERS)
        values = parameter_values(self, PARAMETERS)
        self.priority = ask_for_realtime(values["realtime_priority"]) or ask_for_priority(values["nice"])
        self._zero = zero_twist()
        self._cmd_vel = self.create_publisher(Twist, "cmd_vel", COMMAND_QOS)
        self.create_subscription(Empty, TOPIC, self._on_stop, EMERGENCY_STOP_QOS)
        self.get_logger().info(f"relaying {self.resolve_topic_name(TOPIC)} to a zero "
                               f"{self.resolve_topic_name('cmd_vel')} ({self.priority})")
        # Everything made so far (modules, rclpy, this node) is never scanned by the cyclic garbage collector
        # again: a full collection over it takes milliseconds, and one falling during a stop would delay it.
        gc.freeze()

    def _on_stop(self, _msg: Empty) -> None:
        self._cmd_vel.publish(self._zero)


def ask_for_realtime(priority: int) -> str:
    """Puts every thread of this process under SCHED_FIFO at ``priority`` where allowed; says what it got, or ""
    when it got nothing (priority 0, or not allowed: the caller falls back to a nice value).

    Threads made later (a DDS thread started on demand) inherit the policy of the thread that makes them. The
    relay only wakes for a message, so a real-time policy costs the machine nothing while no stop comes, and
    the kernel's real-time throttling (sched_rt_runtime_us) bounds it if it ever spun.
    """
    if priority == 0 or not hasattr(os, "sched_setscheduler"):
        return ""
    try:
        for thread_id in _thread_ids():
            os.sched_setscheduler(thread_id, os.SCHED_FIFO, os.sched_param(priority))
    except OSError:  # not root and no CAP_SYS_NICE (or a container without real-time runtime)
        return ""
    return f"SCHED_FIFO {priority}"


def ask_for_priority(nice: int) -> str:
    """Sets the nice value of every thread of this process where allowed (on Linux a nice value is a thread's:
    the DDS threads that receive the stop and send the zero already run when the node is made); says what it
    got."""
    if nice == 0:
        return "nice unchanged"
    try:
        for thread_id in _thread_ids():
            os.setpriority(os.PRIO_PROCESS, thread_id, nice)
    except OSError as error:  # not root and no CAP_SYS_NICE: keep running at the default priority
        return f"nice {os.getpriority(os.PRIO_PROCESS, 0)}: {nice} not allowed ({error.strerror})"
    return f"nice {nice}"


def _thread_ids() -> list:
    try:
        return [int(name) for name in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: this thread only
        return [0]


def main(args=None) -> int:
    return run_node(EmergencyStopRelay, NODE_NAME, (), args)


if __name__ == "__main__":
    sys.exit(main())
