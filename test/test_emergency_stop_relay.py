"""emergency_stop_relay over real DDS: a zero cmd_vel for every emergency stop, nothing else, from a process of
its own (a ROS_DOMAIN_ID of its own, localhost only; the process is ended by its PID in teardown)."""

import subprocess
import sys

import pytest

rclpy = pytest.importorskip("rclpy")
yaml = pytest.importorskip("yaml")

import test_reasoner_node as base  # noqa: E402
from geometry_msgs.msg import Twist  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from std_msgs.msg import Empty  # noqa: E402
from test_reasoner_node import REPO, WAIT_S, _node_env  # noqa: E402

from wafer_reasoner.demo.processes import log_tail, stop_process  # noqa: E402
from wafer_reasoner.ros import emergency_stop_relay  # noqa: E402
from wafer_reasoner.ros.qos import EMERGENCY_STOP_QOS, VELOCITY_SUB_QOS  # noqa: E402

domain_id, ros_context = base.domain_id, base.ros_context  # the module-scoped fixtures of test_reasoner_node.py
CONFIG = REPO / "config" / "emergency_stop_relay.yaml"


class RelayProbe:
    """The relay process, and the test's side of its two topics."""

    def __init__(self, context, domain_id: int, log_path, *ros_args: str) -> None:
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "wafer_reasoner.ros.emergency_stop_relay", "--ros-args", "--params-file",
                 str(CONFIG), *ros_args],
                cwd=REPO, env=_node_env(domain_id), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.node = rclpy.create_node("relay_probe", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.twists = []
        self.node.create_subscription(Twist, "cmd_vel", self.twists.append, VELOCITY_SUB_QOS)
        self.stop = self.node.create_publisher(Empty, "emergency_stop", EMERGENCY_STOP_QOS)

    def spin_until(self, condition, what: str):
        deadline = self.node.get_clock().now().nanoseconds + int(WAIT_S * 1e9)
        while not condition():
            assert self.process.poll() is None, f"the relay exited waiting for {what}:\n{log_tail(self.log_path)}"
            assert self.node.get_clock().now().nanoseconds < deadline, f"no {what}:\n{log_tail(self.log_path)}"
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        stop_process(self.process)


@pytest.fixture
def relay(ros_context, domain_id, tmp_path):
    probe = RelayProbe(ros_context, domain_id, tmp_path / "relay.log")
    try:
        yield probe
    finally:
        probe.close()


def _zero(twist: Twist) -> bool:
    values = (twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x, twist.angular.y, twist.angular.z)
    return all(value == 0.0 for value in values)


def test_every_emergency_stop_becomes_one_zero_cmd_vel_and_nothing_else_is_sent(relay):
    relay.spin_until(lambda: relay.stop.get_subscription_count() > 0 and
                     relay.node.count_publishers("cmd_vel") > 0, "relay on both topics")
    relay.executor.spin_once(timeout_sec=0.5)
    assert relay.twists == []  # nothing moves, or stops, without a stop
    for count in (1, 2, 3):
        relay.stop.publish(Empty())
        relay.spin_until(lambda wanted=count: len(relay.twists) >= wanted, f"zero cmd_vel #{count}")
    relay.executor.spin_once(timeout_sec=0.3)
    assert len(relay.twists) == 3 and all(_zero(twist) for twist in relay.twists)
    assert "relaying /emergency_stop to a zero /cmd_vel" in relay.log_path.read_text()


def test_the_config_file_mirrors_the_declared_parameters():
    params = yaml.safe_load(CONFIG.read_text())["/**"]["ros__parameters"]
    declared = {name: param.default for name, param in emergency_stop_relay.PARAMETERS.items()}
    assert params == declared
    for name, param in emergency_stop_relay.PARAMETERS.items():
        assert param.low <= param.default <= param.high, name


def test_the_relay_asks_for_real_time_scheduling_and_says_what_it_got():
    """In a process of its own, with a second thread running: every thread is put under SCHED_FIFO where the
    host allows it, and the reply says so; where it does not, the reply is empty (the nice value applies)."""
    code = ("import os, threading; from wafer_reasoner.ros.emergency_stop_relay import ask_for_realtime; "
            "e = threading.Event(); t = threading.Thread(target=e.wait); t.start(); "
            "print(repr(ask_for_realtime(0))); print(repr(ask_for_realtime(7))); "
            "print(sorted({os.sched_getscheduler(int(i)) for i in os.listdir('/proc/self/task')})); "
            "print(os.SCHED_FIFO, os.SCHED_OTHER); e.set(); t.join()")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=WAIT_S)
    off, got, policies, constants = out.stdout.split("\n")[:4]
    fifo, other = constants.split()
    assert off == "''", out.stderr
    if got == "'SCHED_FIFO 7'":
        assert policies == f"[{fifo}]"  # both threads
    else:
        assert got == "''" and policies == f"[{other}]"


def test_the_relay_sets_the_nice_value_it_is_given():
    """In a process of its own: a nice value once raised stays raised for the process."""
    code = ("import os; from wafer_reasoner.ros.emergency_stop_relay import ask_for_priority; "
            "print(ask_for_priority(5)); print(os.getpriority(os.PRIO_PROCESS, 0)); print(ask_for_priority(0))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=WAIT_S)
    assert out.stdout.split("\n")[:3] == ["nice 5", "5", "nice unchanged"], out.stderr
