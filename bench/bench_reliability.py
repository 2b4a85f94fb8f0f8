"""Bursts and the emergency stop over real DDS: reasoner_node, emergency_stop_relay, a burst sender process, an
e-stop button process, and this process.

    python bench/bench_reliability.py [OUT.json] [--burst 1000] [--trials 20] [--trial-burst 200]
    make bench-reliability
    FASTDDS_DEFAULT_PROFILES_FILE=config/fastdds_profile.xml python bench/bench_reliability.py ...

(1) Burst: the sender publishes ``--burst`` transcripts as fast as it can, then "stop" from the same publisher
    (so the stop arrives after the burst). Counts the plan records (one per utterance, plan_ids 1..N+1 in
    order), how many were planned, shed "busy" or dropped by the stop, and times the stop: from the sender
    publishing it to the zero cmd_vel as reasoner_node wrote it (its DDS source timestamp; the target), to the
    zero's arrival here, and to the stop's plan record. Checks that no goal came after the zero (nothing queued
    before the stop ran after it).
(2) Emergency stop: ``--trials`` times, the sender publishes ``--trial-burst`` transcripts and the button
    (bench/estop_button.py, a process of its own at real-time priority, as a robot's e-stop driver runs) then
    publishes ``emergency_stop`` (std_msgs/Empty) while the node is still taking the burst. Timed from the stop
    as the button wrote it to the first zero cmd_vel as it was written (DDS source timestamps, heard here):
    emergency_stop_relay's, as reasoner.launch.py starts it (``--no-relay``: reasoner_node's own); and, apart,
    to the zero's arrival in this process, whose receiving thread is no controller's (normal priority, on the
    same two cores as the burst). Targets: stop after a burst <= 100 ms, emergency stop p99 <= 5 ms.

This process publishes the scene but no odometry: every utterance is planned (the model runs), and every plan
is refused ("I don't know where I am"), so the only zero cmd_vel on the wire are the stops' own.
Times: the system clock in every process; for what arrives here, the time DDS received it
(MessageInfo.received_timestamp), so this process's own backlog of callbacks is not counted. Every process
inherits this one's environment, so a Fast DDS profile given by FASTDDS_DEFAULT_PROFILES_FILE applies to all.
Exit code 0; with --strict, 1 when a target is missed; 2 when the node cannot be started.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench_node_latency import percentile  # noqa: E402

from wafer_reasoner.demo.processes import (  # noqa: E402
    log_tail,
    node_command,
    reserve_domain_id,
    ros_env,
    stop_process,
)
from wafer_reasoner.ros.emergency_stop import TOPIC  # noqa: E402

DEFAULT_OUT = REPO / "runs" / "bench_reliability.json"
STOP_TARGET_MS = 100.0
ESTOP_TARGET_P99_MS = 5.0
WAIT_S = 120.0
SCENE = {"frame_id": "map", "people": [{"id": "user", "x": -3.0, "y": 2.5}], "objects": [
    {"id": "cup_red", "label": "cup", "color": "red", "x": 4.8, "y": 3.2, "z": 0.75},
    {"id": "book_1", "label": "book", "color": "black", "x": 5.1, "y": 3.35, "z": 0.75}]}


def now() -> float:
    """System time, s: the clock DDS stamps a sample's reception with (MessageInfo.received_timestamp)."""
    return time.time_ns() * 1e-9


def received_s(info) -> float:
    """When DDS handed the sample to this process: not delayed by this process's own backlog of callbacks."""
    return info["received_timestamp"] * 1e-9


class Listener:
    """This process's node: publishes scene, odom and emergency_stop; records cmd_vel, goals and plan records."""

    def __init__(self, domain_id: int) -> None:
        import rclpy
        from geometry_msgs.msg import PoseStamped, Twist
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import Empty, String

        from wafer_reasoner.ros.qos import COMMAND_QOS, EMERGENCY_STOP_QOS, PLAN_QOS, SENSOR_QOS

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("reliability_bench", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.msgs = {"String": String, "Empty": Empty}
        self.scene = self.node.create_publisher(String, "perception/objects", SENSOR_QOS)
        self.estops_written = []  # DDS source timestamps of the button's emergency stops
        self.node.create_subscription(Empty, "emergency_stop",
                                      lambda m, i: self.estops_written.append(i["source_timestamp"] * 1e-9),
                                      EMERGENCY_STOP_QOS)
        self.zeros, self.goals, self.records = [], [], []  # (arrival time, message)
        self.node.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, COMMAND_QOS)
        self.node.create_subscription(PoseStamped, "goal_pose", lambda m, i: self.goals.append((received_s(i), m)),
                                      COMMAND_QOS)
        self.node.create_subscription(String, "reasoner/plan", self._on_plan, PLAN_QOS)

    def _on_cmd_vel(self, msg, info) -> None:
        if msg.linear.x == 0.0 and msg.angular.z == 0.0:
            self.zeros.append((received_s(info), info["source_timestamp"] * 1e-9))  # (received, published)

    def _on_plan(self, msg, info) -> None:
        body = json.loads(msg.data)
        if body["type"] == "plan":
            self.records.append((received_s(info), body))

    def world(self) -> None:
        """The scene, stamped now."""
        stamp = self.node.get_clock().now().nanoseconds * 1e-9
        self.scene.publish(self.msgs["String"](data=json.dumps({**SCENE, "stamp": stamp})))

    def spin_until(self, condition, timeout_s: float = WAIT_S) -> bool:
        deadline = now() + timeout_s
        last_world = 0.0
        while not condition():
            if now() > deadline:
                return False
            if now() - last_world > 0.2:
                self.world()
                last_world = now()
            self.executor.spin_once(timeout_sec=0.002)
        return True

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


class Button:
    """bench/estop_button.py: the emergency-stop button's driver, a process of its own at real-time priority."""

    def __init__(self, env: dict, subscribers: int, realtime_priority: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(REPO / "bench" / "estop_button.py"), "--subscribers", str(subscribers),
             "--realtime-priority", str(realtime_priority)],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
        ready = self.process.stdout.readline().split(maxsplit=1)
        assert ready and ready[0] == "ready", ready
        self.priority = ready[1].strip() if len(ready) > 1 else ""

    def press(self) -> None:
        self.process.stdin.write("press\n")
        self.process.stdin.flush()
        self.process.stdout.readline()

    def close(self) -> None:
        self.process.stdin.close()
        stop_process(self.process)


class Sender:
    def __init__(self, env: dict) -> None:
        self.process = subprocess.Popen([sys.executable, str(REPO / "bench" / "burst_sender.py")], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        start_new_session=True)
        assert self.process.stdout.readline().strip() == "ready"

    def burst(self, count: int, then_stop: bool = False) -> float:
        self.process.stdin.write(f"{count}{' stop' if then_stop else ''}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline().split()[1])

    def close(self) -> None:
        self.process.stdin.close()
        stop_process(self.process)


def run_burst(listener: Listener, sender: Sender, burst: int) -> dict:
    start = len(listener.records)
    sent_s = sender.burst(burst, then_stop=True)
    complete = listener.spin_until(lambda: len(listener.records) - start >= burst + 1)
    records = [body for _, body in listener.records[start:]]
    stop_at = next((at for at, body in listener.records[start:] if body["plan"] == "stop()"), float("nan"))
    zero_at, zero_written = next(((at, written) for at, written in listener.zeros if at >= sent_s),
                                 (float("nan"), float("nan")))
    away = [m for at, m in listener.goals if at > zero_at]
    shed = [body.get("shed", "") for body in records[:-1]]
    return {
        "sent": burst + 1, "records": len(records), "complete": complete,
        "plan_ids_in_order": bool(records) and [b["plan_id"] for b in records] == list(
            range(records[0]["plan_id"], records[0]["plan_id"] + len(records))),
        "planned": shed.count(""), "busy": shed.count("busy"), "dropped_by_stop": shed.count("stopped"),
        "stop_to_zero_cmd_vel_written_ms": round((zero_written - sent_s) * 1000.0, 3),
        "stop_to_zero_cmd_vel_received_here_ms": round((zero_at - sent_s) * 1000.0, 3),
        "stop_to_its_plan_record_ms": round((stop_at - sent_s) * 1000.0, 3),
        "goals_after_the_stop": len(away),
    }


def run_estop_trials(listener: Listener, sender: Sender, button: Button, trials: int, burst: int) -> tuple:
    """Per trial, from the button's stop as written (its DDS source timestamp) to the first zero cmd_vel as
    written by whoever answers (the zero's source timestamp), and to the zero's arrival here. The first is the
    time the stop takes through the reasoner's processes; the second adds this process's receiving thread,
    which is not a base controller's (normal priority, competing with the burst for the same two cores)."""
    received, written = [], []
    for _ in range(trials):
        before = len(listener.records)
        sender.burst(burst)
        pressed_s = now()
        button.press()
        listener.spin_until(lambda s=pressed_s: any(at >= s for at, _ in listener.zeros)
                            and any(at >= s for at in listener.estops_written), 10.0)
        stop_s = next((at for at in listener.estops_written if at >= pressed_s), float("nan"))
        answers = [(at, source) for at, source in listener.zeros if at >= pressed_s]  # the relay's, the node's
        received.append((min(at for at, _ in answers) - stop_s) * 1000.0)
        written.append((min(source for _, source in answers) - stop_s) * 1000.0)
        listener.spin_until(lambda b=before: len(listener.records) - b >= burst, WAIT_S)  # the burst answered
    return written, received


def latency_summary(values_ms: list) -> dict:
    return {"n": len(values_ms), **{f"p{q}": round(percentile(values_ms, q), 3) for q in (50, 90, 99)},
            "max": round(max(values_ms), 3), "all": [round(v, 3) for v in values_ms]}


def start_reasoner(env: dict, log_path: Path, nice: int) -> subprocess.Popen:
    """reasoner_node in its own session, at ``nice`` (a robot runs its control nodes ahead of other work)."""
    command = node_command("reasoner_node", "--params-file", str(REPO / "config" / "reasoner.yaml"),
                           "-p", "limits.max_scene_age_s:=60.0")
    with open(log_path, "wb") as log:
        return subprocess.Popen((["nice", "-n", str(nice)] if nice else []) + command, env=env,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)


def start_relay(env: dict, log_path: Path, realtime_priority: Optional[int]) -> subprocess.Popen:
    """emergency_stop_relay as reasoner.launch.py starts it beside the reasoner (its own process, its config;
    ``realtime_priority`` overrides the config's)."""
    command = node_command("emergency_stop_relay", "--params-file", str(REPO / "config" / "emergency_stop_relay.yaml"))
    if realtime_priority is not None:
        command += ["-p", f"realtime_priority:={realtime_priority}"]
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)


def relay_priority(log_path: Path) -> str:
    """What the relay said it got (its start-up line: "... (SCHED_FIFO 20)" or "... (nice -10)")."""
    match = re.search(r"relaying .* \((.*)\)", log_path.read_text(errors="replace")) if log_path.exists() else None
    return match.group(1) if match else ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT))
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--trial-burst", type=int, default=200)
    parser.add_argument("--node-nice", type=int, default=0,
                        help="run reasoner_node at this nice value (negative: ahead of other work; needs root)")
    parser.add_argument("--no-relay", action="store_true",
                        help="without emergency_stop_relay: reasoner_node alone answers the emergency stop")
    parser.add_argument("--relay-realtime-priority", type=int, default=None,
                        help="the relay's SCHED_FIFO priority (0: none, its nice value instead); default: its config")
    parser.add_argument("--button-realtime-priority", type=int, default=20,
                        help="the e-stop button process's SCHED_FIFO priority (0: normal priority)")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    lease = reserve_domain_id()
    env = ros_env(lease.domain_id)
    log_dir = Path(args.out).resolve().parent
    log_dir.mkdir(parents=True, exist_ok=True)
    node = relay = listener = sender = button = None
    try:  # whatever fails from here on, every process started is stopped (a leaked node talks on its domain)
        node = start_reasoner(env, log_dir / "bench_reliability_reasoner.log", args.node_nice)
        relay = None if args.no_relay else start_relay(env, log_dir / "bench_reliability_relay.log",
                                                           args.relay_realtime_priority)
        listener = Listener(lease.domain_id)
        sender = Sender(env)
        listeners = (1 if relay is None else 2) + 1  # the reasoner's emergency stop thread, the relay, and ours
        if not listener.spin_until(lambda: listener.node.count_subscribers(TOPIC) >= listeners, 60.0):
            print(f"reasoner_node did not come up:\n{log_tail(log_dir / 'bench_reliability_reasoner.log')}")
            return 2
        button = Button(env, listeners, args.button_realtime_priority)
        listener.spin_until(lambda: False, 1.0)  # scene and odom taken
        burst = run_burst(listener, sender, args.burst)
        estop_written_ms, estop_received_ms = run_estop_trials(listener, sender, button, args.trials,
                                                               args.trial_burst)
    finally:
        for closer in (button, sender, listener):
            if closer is not None:
                closer.close()
        for process in (node, relay):
            if process is not None:
                stop_process(process)
        lease.release()
    priority = relay_priority(log_dir / "bench_reliability_relay.log") if relay else ""
    report = {"relay": relay is not None, "relay_priority": priority, "button_priority": button.priority,
              "fastdds_profile": os.environ.get("FASTDDS_DEFAULT_PROFILES_FILE", ""), "burst": burst,
              "emergency_stop_ms": latency_summary(estop_written_ms),
              "emergency_stop_to_zero_received_here_ms": latency_summary(estop_received_ms),
              "targets": {"stop_after_burst_ms": STOP_TARGET_MS, "emergency_stop_p99_ms": ESTOP_TARGET_P99_MS}}
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    met = (burst["complete"] and burst["stop_to_zero_cmd_vel_written_ms"] <= STOP_TARGET_MS
           and report["emergency_stop_ms"]["p99"] <= ESTOP_TARGET_P99_MS)
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    sys.exit(main())
