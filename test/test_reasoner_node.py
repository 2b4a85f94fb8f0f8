"""reasoner_node end to end: the node in its own process, a probe node here, real rclpy and Fast DDS on localhost.

Every node process runs with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID this module claims
(an flock on /tmp/wafer_reasoner_ros_domain_<id>.lock, so parallel runs on one machine never share one).
Teardown interrupts, then kills, the node by its PID. Waits are bounded (WAIT_S); nothing asserts on durations.

The node refuses to start without a model, so the running-node tests need one: the shipped
wafer_reasoner/models/planner.onnx, or the folder named by WAFER_REASONER_TEST_MODEL_DIR (any exported planner,
e.g. a tiny untrained one: only (d) needs a trained model and it always uses the shipped one).
"""

import fcntl
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import PoseStamped, Twist  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

from wafer_reasoner.engine.planner_model import MODEL_FILE, SHIPPED_MODEL_DIR  # noqa: E402
from wafer_reasoner.ros import reasoner_node  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS  # noqa: E402
from wafer_reasoner.runtime.core import NO_SCENE_REASON  # noqa: E402
from wafer_reasoner.runtime.query import MAX_UTTERANCE_CHARS, PlanStatus  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PARAMS_FILE = REPO / "config" / "reasoner.yaml"
SHIPPED_MODEL = SHIPPED_MODEL_DIR / MODEL_FILE
WAIT_S = 20.0  # longest wait for any one thing
RED_CUP = (4.8, 3.2, 0.75)
ROBOT_START = (-4.0, -3.0, 0.0)


# ---- pure parts: parameters file, reply matching ------------------------------------------------------------


def _flatten(mapping: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in mapping.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def test_params_file_mirrors_the_declared_parameters():
    data = yaml.safe_load(PARAMS_FILE.read_text())
    assert list(data) == ["/**"] and list(data["/**"]) == ["ros__parameters"]  # any namespace, any node name
    in_file = _flatten(data["/**"]["ros__parameters"])
    declared = {name: param.default for name, param in reasoner_node.PARAMETERS.items()}
    assert in_file == declared
    # same types too: a double parameter rejects an integer from the file
    assert {name: type(value) for name, value in in_file.items()} == {n: type(v) for n, v in declared.items()}


def test_every_parameter_has_a_description_and_numbers_have_a_range_around_the_default():
    for name, param in reasoner_node.PARAMETERS.items():
        assert param.description, name
        if isinstance(param.default, (int, float)) and not isinstance(param.default, bool):
            assert param.low is not None and param.low <= param.default <= param.high, name


def test_safety_limit_parameters_are_the_safety_limits_fields():
    from dataclasses import fields

    from wafer_reasoner.planner.limits import SafetyLimits

    names = {n[len("limits.") :] for n in reasoner_node.PARAMETERS if n.startswith("limits.")}
    assert names == {item.name for item in fields(SafetyLimits)}
    defaults = {n[len("limits.") :]: p.default for n, p in reasoner_node.PARAMETERS.items() if n.startswith("limits.")}
    assert SafetyLimits.from_mapping(defaults) == SafetyLimits()


# ---- the node in a process ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def domain_id():
    """A ROS_DOMAIN_ID no other process using this scheme holds; 0 and 64 (the venv's default) are avoided."""
    candidates = [d for d in range(1, 102) if d != 64]
    start = os.getpid() % len(candidates)
    for offset in range(len(candidates)):
        candidate = candidates[(start + offset) % len(candidates)]
        handle = open(f"/tmp/wafer_reasoner_ros_domain_{candidate}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        try:
            yield candidate
        finally:
            handle.close()
        return
    pytest.skip("no free ROS_DOMAIN_ID on this machine")


@pytest.fixture(scope="module")
def ros_context(domain_id):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        patch.setenv("ROS_DOMAIN_ID", str(domain_id))
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain_id)
        try:
            yield context
        finally:
            rclpy.try_shutdown(context=context)


def _node_env(domain_id: int) -> dict:
    env = dict(os.environ)
    env.update(
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        ROS_DOMAIN_ID=str(domain_id),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
        PYTHONUNBUFFERED="1",
        RCUTILS_COLORIZED_OUTPUT="0",
    )
    return env


class NodeProcess:
    """``python -m wafer_reasoner.ros.reasoner_node`` with the given parameters; output goes to a file."""

    def __init__(self, domain_id: int, log_path: Path, *params: str) -> None:
        args = ["--ros-args", "--params-file", str(PARAMS_FILE)]
        for param in params:
            args += ["-p", param]
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wafer_reasoner.ros.reasoner_node", *args],
            cwd=REPO,
            env=_node_env(domain_id),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C on pytest does not reach it; teardown ends it by PID
        )

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout_s: float) -> int:
        return self.proc.wait(timeout=timeout_s)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


def exit_of_failed_start(domain_id: int, tmp_path: Path, *params: str) -> tuple:
    """(exit code, output) of a node started with params that should make it refuse to start; always closed."""
    process = NodeProcess(domain_id, tmp_path / "reasoner_node.log", *params)
    try:
        return process.wait(timeout_s=WAIT_S), process.output()
    finally:
        process.close()


class Probe:
    """The test's side of every topic: publishes inputs, records outputs, spins until something is true."""

    def __init__(self, context, node_process: NodeProcess) -> None:
        self.node = rclpy.create_node("reasoner_probe", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.process = node_process
        self.speech = self.node.create_publisher(String, "speech/transcript", COMMAND_QOS)
        self.perception = self.node.create_publisher(String, "perception/objects", SENSOR_QOS)
        self.odom = self.node.create_publisher(Odometry, "odom", SENSOR_QOS)
        self.received = {}
        self._subs = []
        for msg_type, topic in [
            (PoseStamped, "goal_pose"),
            (Twist, "cmd_vel"),
            (PoseStamped, "manipulator/target_pose"),
            (Float64MultiArray, "gripper/commands"),
            (String, "say"),
            (String, "reasoner/plan"),
            (DiagnosticArray, "/diagnostics"),
        ]:
            self.received[topic] = []
            self._subs.append(
                self.node.create_subscription(msg_type, topic, self.received[topic].append, COMMAND_QOS)
            )

    def close(self) -> None:
        self.executor.remove_node(self.node)
        self.executor.shutdown()
        self.node.destroy_node()

    # -- waiting --

    def spin_until(self, predicate, what: str, timeout_s: float = WAIT_S):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            if not self.process.alive():
                pytest.fail(f"reasoner_node exited ({self.process.proc.returncode}) waiting for {what}:\n"
                            f"{self.process.output()}")
            self.executor.spin_once(timeout_sec=0.05)
        pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}; node output:\n{self.process.output()}")

    def diagnostics(self) -> dict:
        """Values of the latest reasoner diagnostics status ({} before the first)."""
        for array in reversed(self.received["/diagnostics"]):
            for status in array.status:
                if status.name.endswith(": reasoner"):
                    return {kv.key: kv.value for kv in status.values}
        return {}

    def wait_ready(self) -> None:
        """Every connection made in both directions, and the node's timers running."""

        def ready():
            return (
                self.speech.get_subscription_count() > 0
                and self.perception.get_subscription_count() > 0
                and self.odom.get_subscription_count() > 0
                and all(sub.get_publisher_count() > 0 for sub in self._subs)
                and self.diagnostics()
            )

        self.spin_until(ready, "reasoner_node to connect")

    def wait_for_fresh_diagnostics(self, predicate, what: str):
        """Skip the diagnostics already here; wait for a later one that satisfies ``predicate``."""
        seen = len(self.received["/diagnostics"])

        def check():
            return len(self.received["/diagnostics"]) > seen and predicate(self.diagnostics())

        return self.spin_until(check, what)

    # -- inputs --

    def now_s(self) -> float:
        return self.node.get_clock().now().nanoseconds * 1e-9

    def publish_odom(self, x: float, y: float, yaw: float) -> None:
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "odom", "base_link"
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        self.odom.publish(msg)

    def publish_odom_and_wait(self, x: float, y: float, yaw: float) -> None:
        self.publish_odom(x, y, yaw)
        self.wait_for_fresh_diagnostics(lambda d: d.get("pose_known") == "true", "the node to take the odom pose")

    def publish_scene(self, text: str) -> None:
        self.perception.publish(String(data=text))

    def publish_scene_and_wait(self, scene: dict) -> None:
        """Publish a valid scene (stamped now) and wait until the node has it."""
        self.publish_scene(json.dumps({**scene, "stamp": self.now_s()}))
        self.wait_for_fresh_diagnostics(lambda d: d.get("scene_age_s", "n/a") != "n/a", "the node to take the scene")

    def say(self, utterance: str) -> dict:
        """Publish an utterance; return the reasoner/plan "plan" message that answers it."""
        before = len(self.plans())
        self.speech.publish(String(data=utterance))
        plans = self.spin_until(lambda: self.plans()[before:], f"the plan for {utterance[:40]!r}")
        return plans[0]

    # -- outputs --

    def stream(self) -> list:
        return [json.loads(msg.data) for msg in self.received["reasoner/plan"]]

    def plans(self) -> list:
        return [body for body in self.stream() if body["type"] == "plan"]

    def said(self) -> list:
        return [msg.data for msg in self.received["say"]]


def probe_of(context, process: NodeProcess, probe_class=None):
    """A probe for the running ``process``; the process is ended when the probe cannot be made (a test that starts
    a node always stops it)."""
    try:
        return (probe_class or Probe)(context, process)
    except BaseException:
        process.close()
        raise


def red_cup_scene() -> dict:
    """bring_red_cup.yaml's world as perception publishes it (without stamp)."""
    return {
        "frame_id": "map",
        "objects": [
            {"id": "table_1", "label": "table", "color": "brown", "x": 5.0, "y": 3.0, "z": 0.0},
            {"id": "cup_red", "label": "cup", "color": "red", "x": RED_CUP[0], "y": RED_CUP[1], "z": RED_CUP[2]},
            {"id": "cup_blue", "label": "cup", "color": "blue", "x": 5.2, "y": 2.8, "z": 0.75},
            {"id": "book_1", "label": "book", "color": "black", "x": 5.1, "y": 3.35, "z": 0.75},
        ],
        "people": [{"id": "user", "x": -3.0, "y": 2.5}],
    }


def _test_model_dir() -> Path:
    override = os.environ.get("WAFER_REASONER_TEST_MODEL_DIR")
    if override:
        return Path(override)
    if SHIPPED_MODEL.is_file():
        return SHIPPED_MODEL_DIR
    pytest.skip(f"no planner model to start the node with: {SHIPPED_MODEL} is absent (run `make train`)")


@pytest.fixture
def reasoner(ros_context, domain_id, tmp_path, request):
    """A running reasoner_node and a connected probe. Parametrise indirectly with a model folder to choose it."""
    model_dir = getattr(request, "param", None) or _test_model_dir()
    process = NodeProcess(
        domain_id,
        tmp_path / "reasoner_node.log",
        f"model_dir:={model_dir}",
        "diagnostics_rate_hz:=10.0",
        "limits.max_scene_age_s:=10.0",  # a slow CI machine must not make the test scene stale
    )
    probe = probe_of(ros_context, process)
    try:
        probe.wait_ready()
        yield probe
    finally:
        probe.close()
        process.close()


def _assert_nothing_moved(probe: Probe, pose=None) -> None:
    """cmd_vel only ever zero; goal_pose only ever the robot's own pose (the 'cancel' of a stop)."""
    for twist in probe.received["cmd_vel"]:
        values = [twist.linear.x, twist.linear.y, twist.linear.z, twist.angular.x, twist.angular.y, twist.angular.z]
        assert values == [0.0] * 6, f"cmd_vel moved: {values}"
    for goal in probe.received["goal_pose"]:
        assert pose is not None, "a goal_pose was published before the node knew where it is"
        p = goal.pose.position
        assert math.hypot(p.x - pose[0], p.y - pose[1]) < 1e-6, f"goal_pose moved the robot: {p.x}, {p.y}"
    assert probe.received["manipulator/target_pose"] == [] and probe.received["gripper/commands"] == []


# (a) -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "corrupt"])
def test_a_missing_or_corrupt_model_stops_the_node_with_the_path(domain_id, tmp_path, kind):
    folder = tmp_path / "no_model_here"
    if kind == "corrupt":
        folder.mkdir()
        (folder / MODEL_FILE).write_bytes(b"not an onnx file")
    code, output = exit_of_failed_start(domain_id, tmp_path, f"model_dir:={folder}")
    assert code != 0
    assert str(folder) in output
    assert "make train" in output or "model_dir" in output  # the fix
    assert "Traceback" not in output


def test_bad_limits_stop_the_node_with_the_reason(domain_id, tmp_path):
    code, output = exit_of_failed_start(domain_id, tmp_path, f"model_dir:={tmp_path}", "limits.standoff_m:=2.0")
    assert code != 0 and "standoff_m" in output and "Traceback" not in output


# (b) -----------------------------------------------------------------------------------------------------------


def test_b_stop_publishes_zero_velocity_and_a_stop_plan(reasoner):
    reasoner.publish_odom_and_wait(*ROBOT_START)
    reasoner.publish_scene_and_wait(red_cup_scene())
    assert reasoner.received["cmd_vel"] == []
    plan = reasoner.say("Stop!")
    assert (plan["status"], plan["plan"], plan["reasons"]) == ("ok", "stop()", [])
    assert plan["utterance"] == "Stop!" and plan["tokens"] == 0  # the model was not asked
    assert set(plan) >= {"type", "plan_id", "stamp", "timings_ms", "tokens_per_s"}
    reasoner.spin_until(lambda: reasoner.received["cmd_vel"], "a zero cmd_vel")
    _assert_nothing_moved(reasoner, ROBOT_START)


def test_b_stop_works_before_any_perception_or_odometry(reasoner):
    plan = reasoner.say("please stop")
    assert (plan["status"], plan["plan"]) == ("ok", "stop()")
    reasoner.spin_until(lambda: reasoner.received["cmd_vel"], "a zero cmd_vel")
    _assert_nothing_moved(reasoner, pose=None)


# (c) -----------------------------------------------------------------------------------------------------------


def test_c_bad_input_moves_nothing_is_explained_and_the_node_keeps_running(reasoner):
    # broken perception and odometry before anything valid: none of it is taken
    reasoner.publish_scene("{not json")
    reasoner.publish_scene(json.dumps({"stamp": reasoner.now_s(), "objects": "many"}))
    nan_scene = red_cup_scene()
    nan_scene["objects"][1]["x"] = math.nan  # json.dumps writes NaN; the parser must refuse it
    reasoner.publish_scene(json.dumps({**nan_scene, "stamp": reasoner.now_s()}))
    reasoner.publish_scene(json.dumps({**red_cup_scene(), "stamp": math.inf}))
    reasoner.publish_odom(math.nan, 0.0, 0.0)
    diagnostics = reasoner.wait_for_fresh_diagnostics(lambda d: True, "diagnostics after the bad input")
    for _ in range(3):  # several diagnostics later the node still has neither a scene nor a pose
        diagnostics = reasoner.wait_for_fresh_diagnostics(lambda d: True, "diagnostics after the bad input")
    values = reasoner.diagnostics()
    assert (values["scene_age_s"], values["pose_known"]) == ("n/a", "false"), diagnostics

    plan = reasoner.say("bring me the red cup")
    assert (plan["status"], plan["reasons"]) == ("rejected", [NO_SCENE_REASON])
    reasoner.spin_until(lambda: NO_SCENE_REASON in reasoner.said(), "the no-scene answer on say")

    reasoner.publish_odom_and_wait(*ROBOT_START)
    reasoner.publish_scene_and_wait({"frame_id": "map", "objects": [], "people": [{"id": "user", "x": 0.0, "y": 0.0}]})
    for utterance, reason_part in [
        ("", "didn't hear anything"),
        ("   \n\t ", "didn't hear anything"),
        ("x" * 100_000, f"I can only take {MAX_UTTERANCE_CHARS}"),
        ("go to the \x1b[31mkitchen", "control characters"),  # (a NUL would end the string on the wire)
    ]:
        said_before = len(reasoner.said())
        plan = reasoner.say(utterance)
        assert plan["status"] == PlanStatus.REJECTED.value and plan["plan"] == ""
        assert any(reason_part in reason for reason in plan["reasons"]), plan["reasons"]
        assert len(plan["utterance"]) <= MAX_UTTERANCE_CHARS
        said = reasoner.spin_until(lambda n=said_before: reasoner.said()[n:], f"the rejection of {utterance[:20]!r}")
        assert reason_part in said[0]

    # an unknown object in an empty room: whatever the model writes, nothing can be verified to move
    plan = reasoner.say("bring me the purple elephant")
    assert plan["status"] in ("clarify", "rejected") and plan["reasons"]

    plan = reasoner.say("stop")
    assert (plan["status"], plan["plan"]) == ("ok", "stop()")
    reasoner.spin_until(lambda: reasoner.received["cmd_vel"], "a zero cmd_vel")
    assert reasoner.process.alive()
    _assert_nothing_moved(reasoner, ROBOT_START)
    assert [body["plan_id"] for body in reasoner.plans()] == list(range(1, len(reasoner.plans()) + 1))


# (d) -----------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not SHIPPED_MODEL.is_file(), reason=f"needs the trained model {SHIPPED_MODEL} (`make train`)")
@pytest.mark.parametrize("reasoner", [SHIPPED_MODEL_DIR], indirect=True)
def test_d_bring_me_the_red_cup_sends_a_goal_near_the_red_cup(reasoner):
    reasoner.publish_odom_and_wait(*ROBOT_START)
    reasoner.publish_scene_and_wait(red_cup_scene())
    plan = reasoner.say("bring me the red cup")
    assert plan["status"] == "ok", plan
    assert plan["plan"].startswith("navigate(obj:cup_red)"), plan["plan"]
    goal = reasoner.spin_until(lambda: reasoner.received["goal_pose"], "a goal_pose")[0]
    p, q = goal.pose.position, goal.pose.orientation
    assert goal.header.frame_id == "map"
    assert math.hypot(p.x - RED_CUP[0], p.y - RED_CUP[1]) == pytest.approx(0.6, abs=0.05)  # the stand-off
    facing = math.atan2(RED_CUP[1] - p.y, RED_CUP[0] - p.x)
    yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
    assert math.cos(yaw - facing) == pytest.approx(1.0, abs=1e-3)
    assert reasoner.received["cmd_vel"] == []
    events = reasoner.spin_until(
        lambda: [body for body in reasoner.stream() if body["type"] == "event"], "the first executor event"
    )
    assert events[0] == {
        "type": "event",
        "plan_id": plan["plan_id"],
        "stamp": events[0]["stamp"],
        "event": "step_started",
        "step_index": 0,
        "detail": "navigate(obj:cup_red)",
    }

    reasoner.say("stop")  # preempts the running plan
    preempted = reasoner.spin_until(
        lambda: [b for b in reasoner.stream() if b["type"] == "event" and b["event"] == "plan_preempted"],
        "plan_preempted",
    )
    assert preempted[0]["plan_id"] == plan["plan_id"]
    reasoner.spin_until(lambda: reasoner.received["cmd_vel"], "a zero cmd_vel")


# (e) emulated time and pacing ------------------------------------------------------------------------------------


def test_e_bad_pacing_stops_the_node_with_the_allowed_values(domain_id, tmp_path):
    code, output = exit_of_failed_start(domain_id, tmp_path, f"model_dir:={_test_model_dir()}", "emulator.pacing:=fast")
    assert code != 0 and "emulator.pacing" in output and "emulated" in output and "Traceback" not in output


def test_e_every_plan_reports_host_and_emulated_time_and_pacing_holds_it(ros_context, domain_id, tmp_path):
    process = NodeProcess(
        domain_id,
        tmp_path / "reasoner_node.log",
        f"model_dir:={_test_model_dir()}",
        "diagnostics_rate_hz:=10.0",
        "limits.max_scene_age_s:=10.0",
        "emulator.target_model:=Llama-3.1-70B",  # ~1 s a query on one A100: slower than this host, so held
        "emulator.hardware:=A100",
        "emulator.pacing:=emulated",
    )
    probe = probe_of(ros_context, process)
    try:
        probe.wait_ready()
        values = probe.diagnostics()
        assert (values["emulated_target_model"], values["emulated_hardware"]) == ("Llama-3.1-70B", "A100")
        assert values["pacing"] == "emulated"
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())

        plan = probe.say("go to the kitchen")
        received_s = probe.now_s()
        assert plan["timings_ms"]["host_total_ms"] > 0.0
        assert plan["timings_ms"]["emulated_ms"] > 0.0
        assert (plan["emulated"]["target"], plan["emulated"]["hardware"]) == ("Llama-3.1-70B", "A100")
        # published no earlier than query time (the stamp) + the emulated latency, however fast the host is
        assert received_s - plan["stamp"] >= plan["timings_ms"]["emulated_ms"] / 1000.0 - 1e-3
        assert plan["emulated"]["generated_tokens"] == plan["tokens"] > 0
        assert plan["emulated"]["prompt_tokens"] > 0
        assert plan["pacing"]["mode"] == "emulated" and plan["pacing"]["behind_ms"] >= 0.0
        assert plan["pacing"]["held_ms"] >= 0.0
        if plan["status"] == "ok":  # handed to the executor only when released
            probe.spin_until(lambda: probe.received["goal_pose"], "a goal_pose")
        diagnostics = probe.wait_for_fresh_diagnostics(
            lambda d: d.get("last_emulated_planning_latency_ms", "n/a") != "n/a", "emulated latency in diagnostics"
        )
        assert diagnostics

        stop = probe.say("stop")  # never paced, never charged
        assert (stop["status"], stop["plan"], stop["pacing"]["mode"]) == ("ok", "stop()", "off")
        assert stop["timings_ms"]["emulated_ms"] == 0.0
        probe.spin_until(lambda: probe.received["cmd_vel"], "a zero cmd_vel")
    finally:
        probe.close()
        process.close()


def test_e_best_of_n_keeps_only_the_candidates_that_fit_the_emulated_deadline(ros_context, domain_id, tmp_path):
    """A 70B model on one A100 cannot finish even one plan in 1 ms: of the 4 candidates the host decoded, only
    the greedy one competes, and the plan says it is over the deadline."""
    process = NodeProcess(
        domain_id,
        tmp_path / "reasoner_node.log",
        f"model_dir:={_test_model_dir()}",
        "limits.max_scene_age_s:=10.0",
        "engine_candidates:=4",
        "engine_deadline_ms:=1.0",
        "emulator.target_model:=Llama-3.1-70B",
        "emulator.hardware:=A100",
    )
    probe = probe_of(ros_context, process)
    try:
        probe.wait_ready()
        probe.publish_odom_and_wait(*ROBOT_START)
        probe.publish_scene_and_wait(red_cup_scene())
        plan = probe.say("go to the kitchen")
        emulated = plan["emulated"]
        assert (emulated["decoded"], emulated["candidates"], emulated["chosen"]) == (4, 1, 0)
        assert emulated["over_deadline"] is True and emulated["deadline_ms"] == 1.0
        assert plan["timings_ms"]["emulated_ms"] > 1.0
    finally:
        probe.close()
        process.close()
