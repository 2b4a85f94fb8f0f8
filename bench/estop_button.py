"""An emergency-stop button's driver, in a process of its own: publishes ``std_msgs/Empty`` on
``emergency_stop`` when told to.

    python bench/estop_button.py [--realtime-priority N] [--subscribers N]   # then one "press" per line

A robot's e-stop source is a small process of its own, ahead of other work (real-time priority); this one runs
under SCHED_FIFO at ``--realtime-priority`` (default 20, the relay's) where the host allows it, and says what it
got on its "ready" line. After each press it prints ``pressed <system time in seconds>``. Run with the bench's
ROS_DOMAIN_ID (localhost discovery).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rclpy  # noqa: E402
from std_msgs.msg import Empty  # noqa: E402

from wafer_reasoner.ros.emergency_stop import TOPIC  # noqa: E402
from wafer_reasoner.ros.emergency_stop_relay import ask_for_realtime  # noqa: E402
from wafer_reasoner.ros.qos import EMERGENCY_STOP_QOS  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realtime-priority", type=int, default=20, help="SCHED_FIFO priority; 0: none")
    parser.add_argument("--subscribers", type=int, default=1, help="wait until this many subscriptions match")
    args = parser.parse_args(argv)
    rclpy.init()
    node = rclpy.create_node("estop_button")
    button = node.create_publisher(Empty, TOPIC, EMERGENCY_STOP_QOS)
    got = ask_for_realtime(args.realtime_priority) or "normal priority"  # after rclpy made its DDS threads
    while button.get_subscription_count() < args.subscribers:
        rclpy.spin_once(node, timeout_sec=0.1)
    print(f"ready {got}", flush=True)
    message = Empty()
    for line in sys.stdin:
        if line.strip() != "press":
            continue
        button.publish(message)
        print(f"pressed {time.time_ns() * 1e-9:.6f}", flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
