"""Node latency over real DDS: sim_world + reasoner_node in subprocesses, this process publishing and listening.

    python bench/bench_node_latency.py [OUT.json] [--goals 30] [--stops 30] [--model-dir DIR] [--strict]
    make bench ARGS="runs/bench.json --goals 50"

Measures, with the system clock of this process at both ends (time.perf_counter, so no clocks are compared
across processes):

* utterance -> goal_pose: from publishing a transcript ("go to the red cup", "bring me the book", ...; the
  targets cycle through the scenario's objects) to receiving the first goal_pose near that target (a
  stand-off pose within standoff + 0.15 m of it). Goals that are not near the target (the reasoner cancels a
  running plan with a goal at the robot's own pose) do not count. Needs the trained model.
* "stop" -> zero cmd_vel: while the robot drives to a goal this process sent to sim_world, from publishing
  "stop" to receiving the first all-zero cmd_vel. Stop commands never call the model, but reasoner_node only
  starts with a model (the shipped one, or --model-dir).
* reasoner_node's peak resident memory: VmHWM from /proc/<pid>/status at the end.

Prints a table with p50/p90/p99/max and the targets (p99 <= 150 ms for goals, <= 50 ms for stops) and writes
the numbers as JSON to OUT.json (default runs/bench_node_latency.json). Exit code 0; with --strict, 1 when a
target is missed; 2 when the stack cannot be started.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's wafer_reasoner, also for the nodes (ros_env sets PYTHONPATH)

from wafer_reasoner.demo.processes import (  # noqa: E402
    log_tail,
    proc_status_kib,
    reserve_domain_id,
    ros_env,
    start_node,
    stop_process,
)

CONFIG = REPO / "config"
SCENARIO = CONFIG / "scenarios" / "bring_red_cup.yaml"
SHIPPED_MODEL_DIR = REPO / "wafer_reasoner" / "models"
DEFAULT_OUT = REPO / "runs" / "bench_node_latency.json"
GOAL_TARGET_P99_MS = 150.0
STOP_TARGET_P99_MS = 50.0
STANDOFF_M = 0.6  # config/reasoner.yaml limits.standoff_m
GOAL_MATCH_SLACK_M = 0.15
READY_TIMEOUT_S = 60.0
TRIAL_TIMEOUT_S = 5.0  # an answer later than this counts as a miss
PAUSE_S = 0.4  # between trials, so each utterance meets an idle pipeline
DRIVE_M = 2.5  # stop trials: drive this far ahead
WORKSPACE_M = 9.0  # stop-trial goals stay inside |x|, |y| <= this
TEMPLATES = ("go to the {}", "bring me the {}", "pick up the {}")


def percentile(values, q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default); nan for no values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Series:
    name: str
    target_p99_ms: float
    latencies_ms: list = field(default_factory=list)
    misses: list = field(default_factory=list)  # why each failed trial failed
    skipped: str = ""

    def summary(self) -> dict:
        values = self.latencies_ms
        stats = {f"p{q}_ms": percentile(values, q) for q in (50, 90, 99)}
        stats["max_ms"] = max(values) if values else math.nan
        met = bool(values) and not self.misses and stats["p99_ms"] <= self.target_p99_ms
        return {
            "n": len(values),
            "misses": len(self.misses),
            "miss_reasons": self.misses[:10],
            **{key: _round(value) for key, value in stats.items()},
            "target_p99_ms": self.target_p99_ms,
            "target_met": None if self.skipped else met,
            "skipped": self.skipped,
            "latencies_ms": [_round(value) for value in values],
        }


def _round(value: float):
    return round(value, 3) if math.isfinite(value) else None


def utterances_for(scenario) -> list:
    """(utterance, object id) pairs cycling through the scenario's objects and three phrasings."""
    labels = {}
    for obj in scenario.scene.objects:
        labels.setdefault(obj.label, []).append(obj)
    pairs = []
    for index, obj in enumerate(scenario.scene.objects):
        name = obj.label.replace("_", " ")
        if len(labels[obj.label]) > 1:
            name = f"{obj.color} {name}"
        movable = obj.id not in scenario.fixed_ids
        templates = TEMPLATES if movable else TEMPLATES[:1]  # furniture is gone to, not fetched
        for offset in range(len(templates)):
            pairs.append((templates[(index + offset) % len(templates)].format(name), obj.id))
    return pairs


def vm_hwm_kib(pid: int) -> int:
    """Peak resident set size of a process (VmHWM), KiB; -1 when unreadable."""
    return proc_status_kib(pid, "VmHWM")


class Bench:
    """sim_world + reasoner_node as subprocesses and an rclpy node here that times request -> response."""

    def __init__(self, domain_id: int, log_dir: Path, model_dir: Path) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
        from geometry_msgs.msg import PoseStamped, Twist
        from nav_msgs.msg import Odometry
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import String

        from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS

        self.log_dir = log_dir
        self._String, self._PoseStamped, self._ok_level = String, PoseStamped, DiagnosticStatus.OK
        env = ros_env(domain_id)
        self.processes = {
            "sim_world": start_node(
                "sim_world",
                ["--params-file", str(CONFIG / "sim_world.yaml"), "-p", f"scenario:={SCENARIO}"],
                env,
                log_path=log_dir / "sim_world.log",
            ),
            "reasoner_node": start_node(
                "reasoner_node",
                ["--params-file", str(CONFIG / "reasoner.yaml"), "-p", f"model_dir:={model_dir}"],
                env,
                log_path=log_dir / "reasoner_node.log",
            ),
        }
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("bench_node_latency", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.goals, self.velocities, self.plans = [], [], []  # (perf_counter at receipt, message)
        self.odom = self.scene_json = None
        self.reasoner_ready = False
        self.speech = self.node.create_publisher(String, "speech/transcript", COMMAND_QOS)
        self.goal_pub = self.node.create_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        stamp = time.perf_counter
        self.node.create_subscription(PoseStamped, "goal_pose", lambda m: self.goals.append((stamp(), m)), COMMAND_QOS)
        self.node.create_subscription(Twist, "cmd_vel", lambda m: self.velocities.append((stamp(), m)), COMMAND_QOS)
        self.node.create_subscription(String, "reasoner/plan", lambda m: self.plans.append((stamp(), m)), COMMAND_QOS)
        self.node.create_subscription(Odometry, "odom", lambda m: setattr(self, "odom", m), SENSOR_QOS)
        self.node.create_subscription(String, "perception/objects", self._on_scene, SENSOR_QOS)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, COMMAND_QOS)

    def _on_scene(self, msg) -> None:
        self.scene_json = msg.data

    def _on_diagnostics(self, msg) -> None:
        for status in msg.status:
            if status.name.endswith(": reasoner"):
                self.reasoner_ready = status.level == self._ok_level

    def dead(self) -> str:
        for name, process in self.processes.items():
            if process.poll() is not None:
                return f"{name} exited with code {process.returncode}:\n{log_tail(self.log_dir / f'{name}.log')}"
        return ""

    def spin_until(self, condition, timeout_s: float) -> bool:
        deadline = time.perf_counter() + timeout_s
        while not condition():
            if time.perf_counter() > deadline or self.dead():
                return False
            self.executor.spin_once(timeout_sec=0.002)
        return True

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def wait_ready(self) -> str:
        ready = self.spin_until(
            lambda: self.odom is not None
            and self.scene_json is not None
            and self.reasoner_ready
            and self.speech.get_subscription_count() > 0
            and self.goal_pub.get_subscription_count() > 0,
            READY_TIMEOUT_S,
        )
        return "" if ready else (self.dead() or f"the stack was not ready within {READY_TIMEOUT_S:g} s")

    def pose(self) -> tuple:
        from wafer_reasoner.sim.world import yaw_from_quaternion

        p, q = self.odom.pose.pose.position, self.odom.pose.pose.orientation
        return p.x, p.y, yaw_from_quaternion(q.x, q.y, q.z, q.w)

    def say(self, text: str) -> float:
        msg = self._String(data=text)
        sent = time.perf_counter()
        self.speech.publish(msg)
        return sent

    def send_goal(self, x: float, y: float) -> None:
        msg = self._PoseStamped()
        msg.header.frame_id = "map"
        msg.pose.position.x, msg.pose.position.y = x, y
        msg.pose.orientation.w = 1.0
        self.goal_pub.publish(msg)

    def moving(self) -> bool:
        twist = self.odom.twist.twist
        return twist.linear.x != 0.0 or twist.angular.z != 0.0

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()
        for process in reversed(list(self.processes.values())):
            stop_process(process)


# ---- the trials ----------------------------------------------------------------------------------------------


def first_goal_near(goals: list, start: int, target_xy: tuple):
    """Arrival time of the first goal from ``goals[start:]`` within stand-off + slack of the target, or None."""
    for at, msg in goals[start:]:
        p = msg.pose.position
        if math.hypot(p.x - target_xy[0], p.y - target_xy[1]) <= STANDOFF_M + GOAL_MATCH_SLACK_M:
            return at
    return None


def first_zero_velocity(velocities: list, start: int, sent: float):
    """Arrival time of the first all-zero cmd_vel from ``velocities[start:]`` received after ``sent``, or None."""
    for at, msg in velocities[start:]:
        if at >= sent and msg.linear.x == 0.0 and msg.angular.z == 0.0:
            return at
    return None


def refused_plan(plans: list, start: int, utterance: str) -> bool:
    """True once the result for ``utterance`` arrived and is not 'ok' (no goal will come)."""
    for _, msg in plans[start:]:
        record = json.loads(msg.data)
        if record.get("type") == "plan" and record.get("utterance") == utterance:
            return record.get("status") != "ok"
    return False


def run_goal_trials(bench: Bench, count: int, pairs: list, series: Series, planning: list) -> None:
    from wafer_reasoner.planner.scene import parse_perception_json

    for trial in range(count):
        utterance, target_id = pairs[trial % len(pairs)]
        target = parse_perception_json(bench.scene_json).object(target_id)
        seen_goals, seen_plans = len(bench.goals), len(bench.plans)
        sent = bench.say(utterance)

        matching = partial(first_goal_near, bench.goals, seen_goals, (target.x, target.y))
        refused = partial(refused_plan, bench.plans, seen_plans, utterance)
        bench.spin_until(lambda match=matching, no=refused: match() is not None or no(), TRIAL_TIMEOUT_S)
        if matching() is not None:
            series.latencies_ms.append((matching() - sent) * 1e3)
        else:
            results = [json.loads(m.data) for _, m in bench.plans[seen_plans:]]
            plan = next((r for r in results if r.get("type") == "plan"), None)
            why = f"{plan['status']}: {plan['plan'] or plan['reasons']}" if plan else "no plan result"
            series.misses.append(f"{utterance!r}: no goal near {target_id} ({why})"[:240])
        for _, msg in bench.plans[seen_plans:]:
            record = json.loads(msg.data)
            host_ms = (record.get("timings_ms") or {}).get("host_total_ms")
            if record.get("type") == "plan" and isinstance(host_ms, (int, float)):
                planning.append(float(host_ms))
        bench.spin_for(PAUSE_S)
    bench.say("stop")  # leave the robot standing for the stop trials
    bench.spin_for(1.0)


def _drive_goal(pose: tuple) -> tuple:
    """DRIVE_M ahead if that stays in the workspace, else back toward the middle (the robot turns first)."""
    x, y, yaw = pose
    ahead = (x + DRIVE_M * math.cos(yaw), y + DRIVE_M * math.sin(yaw))
    if max(abs(ahead[0]), abs(ahead[1])) <= WORKSPACE_M:
        return ahead
    norm = math.hypot(x, y) or 1.0
    return (x - DRIVE_M * x / norm, y - DRIVE_M * y / norm)


def run_stop_trials(bench: Bench, count: int, series: Series) -> None:
    for _ in range(count):
        bench.send_goal(*_drive_goal(bench.pose()))
        if not bench.spin_until(lambda: bench.odom.twist.twist.linear.x > 0.1, 15.0):
            series.misses.append("the robot did not start driving")
            continue
        seen = len(bench.velocities)
        sent = bench.say("stop")

        zero = partial(first_zero_velocity, bench.velocities, seen, sent)
        if bench.spin_until(lambda found=zero: found() is not None, TRIAL_TIMEOUT_S):
            series.latencies_ms.append((zero() - sent) * 1e3)
        else:
            series.misses.append("no zero cmd_vel after 'stop'")
        bench.spin_until(lambda: not bench.moving(), 5.0)
        bench.spin_for(PAUSE_S)


# ---- report --------------------------------------------------------------------------------------------------


def table(series_list, planning_ms: list, hwm_kib: int) -> str:
    header = f"{'metric':<30}{'n':>5}{'miss':>6}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}{'max ms':>9}  target p99"
    rows = [header, "-" * len(header)]
    for series in series_list:
        s = series.summary()
        if series.skipped:
            rows.append(f"{series.name:<30}  skipped: {series.skipped}")
            continue
        keys = ("p50_ms", "p90_ms", "p99_ms", "max_ms")
        numbers = "".join(f"{s[k]:>9.1f}" if s[k] is not None else f"{'-':>9}" for k in keys)
        verdict = "met" if s["target_met"] else "MISSED"
        rows.append(f"{series.name:<30}{s['n']:>5}{s['misses']:>6}{numbers}  <= {series.target_p99_ms:g} {verdict}")
    if planning_ms:
        numbers = "".join(f"{percentile(planning_ms, q):>9.1f}" for q in (50, 90, 99)) + f"{max(planning_ms):>9.1f}"
        rows.append(f"{'  of which planning (host)':<30}{len(planning_ms):>5}{'':>6}{numbers}")
    rows.append(f"reasoner_node peak RSS (VmHWM): {hwm_kib / 1024:.1f} MiB" if hwm_kib >= 0 else "VmHWM: unreadable")
    return "\n".join(rows)


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT), help="JSON output path (%(default)s)")
    parser.add_argument("--goals", type=int, default=30, help="utterance -> goal trials (at least 20)")
    parser.add_argument("--stops", type=int, default=30, help="stop -> zero cmd_vel trials (at least 20)")
    parser.add_argument("--model-dir", default="", help="model folder for reasoner_node (default: the shipped one)")
    parser.add_argument("--skip-goals", action="store_true", help="only the stop trials (any model starts the node)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    if args.goals < 20 or args.stops < 20:
        parser.error("--goals and --stops must be at least 20 (percentiles over fewer say little)")
    return args


def main(argv=None) -> int:
    from wafer_reasoner.sim.scenario import load_scenario

    args = _parse_args(argv)
    model_dir = Path(args.model_dir) if args.model_dir else SHIPPED_MODEL_DIR
    goal_series = Series("utterance -> goal_pose", GOAL_TARGET_P99_MS)
    stop_series = Series('"stop" -> zero cmd_vel', STOP_TARGET_P99_MS)
    if not (model_dir / "planner.onnx").is_file():
        message = f"no planner model at {model_dir / 'planner.onnx'} (run `make train`, or pass --model-dir)"
        print(f"bench: skipped: reasoner_node cannot start: {message}")
        return 0
    if args.skip_goals:
        goal_series.skipped = "--skip-goals"

    lease = reserve_domain_id()
    log_dir = Path(args.out).resolve().parent / "bench_logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"bench: ROS_DOMAIN_ID={lease.domain_id}, localhost only; {os.cpu_count()} CPUs; logs in {log_dir}")
    bench = Bench(lease.domain_id, log_dir, model_dir)
    planning_ms: list = []
    try:
        problem = bench.wait_ready()
        if problem:
            print(f"bench: the stack did not come up: {problem}")
            return 2
        if not goal_series.skipped:
            pairs = utterances_for(load_scenario(str(SCENARIO)))
            print(f"bench: {args.goals} utterance -> goal_pose trials over {len(pairs)} utterances ...", flush=True)
            run_goal_trials(bench, args.goals, pairs, goal_series, planning_ms)
        print(f"bench: {args.stops} stop-while-driving trials ...", flush=True)
        run_stop_trials(bench, args.stops, stop_series)
        hwm_kib = vm_hwm_kib(bench.processes["reasoner_node"].pid)
        problem = bench.dead()
    finally:
        bench.close()
        lease.release()
    if problem:
        print(f"bench: a node died during the run: {problem}")
        return 2

    print(table((goal_series, stop_series), planning_ms, hwm_kib))
    write_report(args.out, model_dir, goal_series, stop_series, planning_ms, hwm_kib)
    missed = [s.name for s in (goal_series, stop_series) if s.summary()["target_met"] is False]
    return 1 if args.strict and missed else 0


def write_report(out: str, model_dir: Path, goal_series, stop_series, planning_ms: list, hwm_kib) -> None:
    report = {
        "benchmark": "bench_node_latency",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "model_dir": str(model_dir),
        "clock": "time.perf_counter of the bench process at both ends",
        "goal": goal_series.summary(),
        "stop": stop_series.summary(),
        "planning_host_ms": {f"p{q}": _round(percentile(planning_ms, q)) for q in (50, 90, 99)},
        "reasoner_vm_hwm_kib": hwm_kib,
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"bench: wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
