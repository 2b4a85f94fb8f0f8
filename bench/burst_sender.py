"""A speech recogniser gone wrong, in a process of its own: publishes bursts of transcripts when told to.

    python bench/burst_sender.py          # then, on stdin, one command per line:
    200                                   # publish 200 transcripts as fast as possible
    1000 stop                             # 1000 transcripts, then "stop" from the same publisher

After each burst it prints ``sent <system time in seconds of the last message>``, the clock DDS
stamps receptions with, so the bench can compare it with what it receives. Run with the bench's
ROS_DOMAIN_ID (localhost discovery).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rclpy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from wafer_reasoner.ros.qos import SPEECH_QOS  # noqa: E402

UTTERANCES = ("go to the kitchen", "bring me the red cup", "go to the dock", "pick up the book")


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("burst_sender")
    speech = node.create_publisher(String, "speech/transcript", SPEECH_QOS)
    while speech.get_subscription_count() == 0:
        rclpy.spin_once(node, timeout_sec=0.1)
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        for index in range(int(words[0])):
            speech.publish(String(data=UTTERANCES[index % len(UTTERANCES)]))
        if words[1:] == ["stop"]:
            speech.publish(String(data="stop"))
        print(f"sent {time.time_ns() * 1e-9:.6f}", flush=True)
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
