"""sim_world over real DDS: the node runs in a subprocess; this test talks to it from an rclpy node.

Every process gets ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and a ROS_DOMAIN_ID that this test holds a lock on
(``reserve_domain_id``): the module's sim fixture stays up while later tests start their own sim_world, so two
unlocked random ids could meet and one test would hear the other's robot. The fixture always ends the subprocess
by its PID (SIGINT, then SIGKILL).
"""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy")
yaml = pytest.importorskip("yaml")

from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rosgraph_msgs.msg import Clock as ClockMsg  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402

from wafer_reasoner.demo.processes import reserve_domain_id  # noqa: E402
from wafer_reasoner.planner.scene import parse_perception_json  # noqa: E402
from wafer_reasoner.ros import sim_world_node  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS, SENSOR_QOS  # noqa: E402
from wafer_reasoner.sim.world import quaternion_from_yaw, yaw_from_quaternion  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "config" / "scenarios" / "bring_red_cup.yaml"
WAIT_S = 60.0  # upper bound on any wait for DDS traffic; tests assert on state, never on durations


@pytest.fixture
def domain_id():
    """A ROS_DOMAIN_ID locked for one test (the module's sim fixture holds another)."""
    lease = reserve_domain_id()
    try:
        yield lease.domain_id
    finally:
        lease.release()


def _ros_env(domain_id: int) -> dict:
    env = dict(os.environ)
    env.update(
        ROS_DOMAIN_ID=str(domain_id),
        ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")])),
        PYTHONUNBUFFERED="1",
    )
    return env


def _stop(process: subprocess.Popen) -> None:
    """End the process we started, by its PID: SIGINT (clean shutdown), then SIGKILL."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


class Probe:
    """An rclpy node in its own context and domain, with helpers that spin until a condition holds."""

    def __init__(self, domain_id: int) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("sim_world_probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.odom, self.scene, self.clock, self.statuses = None, None, None, []
        self.node.create_subscription(Odometry, "odom", lambda m: setattr(self, "odom", m), SENSOR_QOS)
        self.node.create_subscription(String, "perception/objects", lambda m: setattr(self, "scene", m), SENSOR_QOS)
        self.node.create_subscription(ClockMsg, "/clock", lambda m: setattr(self, "clock", m), SENSOR_QOS)
        self.node.create_subscription(String, "manipulator/status", lambda m: self.statuses.append(m.data), COMMAND_QOS)
        self.goal_pub = self.node.create_publisher(PoseStamped, "goal_pose", COMMAND_QOS)
        self.target_pub = self.node.create_publisher(PoseStamped, "manipulator/target_pose", COMMAND_QOS)
        self.gripper_pub = self.node.create_publisher(Float64MultiArray, "gripper/commands", COMMAND_QOS)

    def spin_until(self, condition, what: str, log_path=None) -> None:
        deadline = time.monotonic() + WAIT_S
        while not condition():
            if time.monotonic() > deadline:
                log = Path(log_path).read_text(errors="replace")[-3000:] if log_path else ""
                pytest.fail(f"gave up waiting for {what}\n--- sim_world log ---\n{log}")
            self.executor.spin_once(timeout_sec=0.05)

    def wait_for_subscriber(self, publisher, log_path) -> None:
        self.spin_until(lambda: publisher.get_subscription_count() > 0, f"a subscriber on {publisher.topic}", log_path)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def pose(x: float, y: float, yaw: float = 0.0, frame: str = "map") -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y = x, y
    q = msg.pose.orientation
    q.x, q.y, q.z, q.w = quaternion_from_yaw(yaw)
    return msg


def _start_sim(tmp_path: Path, domain_id: int, *ros_args: str) -> tuple:
    log_path = tmp_path / f"sim_world_{domain_id}.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "wafer_reasoner.ros.sim_world_node", "--ros-args", *ros_args],
            cwd=REPO,
            env=_ros_env(domain_id),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return process, log_path


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """sim_world with the bring_red_cup scenario, owning /clock at 2x, and a probe node on its domain."""
    lease = reserve_domain_id()
    domain_id = lease.domain_id
    process, log_path = _start_sim(
        tmp_path_factory.mktemp("sim"),
        domain_id,
        "--params-file", str(REPO / "config" / "sim_world.yaml"),
        "-p", f"scenario:={SCENARIO}",
        "-p", "publish_clock:=true",
        "-p", "real_time_factor:=2.0",
        "-p", "max_linear_speed_mps:=1.0",
        "-p", "max_angular_speed_radps:=2.0",
        "-p", "manipulation_time_s:=0.2",
    )  # fmt: skip
    probe = None
    try:
        probe = Probe(domain_id)
        probe.spin_until(lambda: probe.odom is not None and probe.scene is not None, "odom and scene", log_path)
        yield probe, process, log_path
    finally:
        if probe is not None:
            probe.close()
        _stop(process)
        lease.release()


def test_scene_json_is_the_documented_schema(sim):
    probe, _, _ = sim
    data = json.loads(probe.scene.data)
    assert data["frame_id"] == "map"
    scene = parse_perception_json(probe.scene.data)
    assert {"cup_red", "cup_blue", "bottle_green", "book_1", "table_1"} <= {obj.id for obj in scene.objects}
    assert scene.person("user") is not None
    assert scene.holding == ""


def test_owns_sim_time_and_stamps_with_it(sim):
    probe, _, log_path = sim
    probe.spin_until(lambda: probe.clock is not None, "/clock", log_path)
    clock_s = probe.clock.clock.sec + probe.clock.clock.nanosec * 1e-9
    odom_s = probe.odom.header.stamp.sec + probe.odom.header.stamp.nanosec * 1e-9
    assert 0.0 <= clock_s < 1e6 and 0.0 <= odom_s < 1e6  # sim time starts at 0 (first tick may be 0); wall ~1.7e9
    assert probe.odom.header.frame_id == "odom" and probe.odom.child_frame_id == "base_link"


def test_goal_pose_drives_the_robot_there(sim):
    probe, _, log_path = sim
    probe.wait_for_subscriber(probe.goal_pub, log_path)
    probe.goal_pub.publish(pose(math.nan, 0.0))  # logged and ignored
    probe.goal_pub.publish(pose(9.0, 9.0, frame="base_link"))  # logged and ignored
    goal = (-3.0, -2.0, 1.0)
    probe.goal_pub.publish(pose(*goal))

    def arrived() -> bool:
        p, q = probe.odom.pose.pose.position, probe.odom.pose.pose.orientation
        yaw = yaw_from_quaternion(q.x, q.y, q.z, q.w)
        return math.hypot(p.x - goal[0], p.y - goal[1]) <= 0.06 and abs(yaw - goal[2]) <= 0.06

    probe.spin_until(arrived, "odom at the goal", log_path)
    probe.spin_until(lambda: probe.odom.twist.twist.linear.x == 0.0, "the robot to stop", log_path)
    log = Path(log_path).read_text(errors="replace")
    assert "goal_pose ignored: non-finite" in log and "goal_pose ignored: frame 'base_link'" in log


def test_manipulation_replies_on_status(sim):
    probe, _, log_path = sim
    probe.wait_for_subscriber(probe.target_pub, log_path)
    probe.wait_for_subscriber(probe.gripper_pub, log_path)
    probe.statuses.clear()
    probe.target_pub.publish(pose(9.0, 9.0))  # far out of reach
    probe.spin_until(lambda: probe.statuses == ["failed"], "'failed' for an out-of-reach target", log_path)
    odom = probe.odom.pose.pose.position
    probe.target_pub.publish(pose(odom.x + 0.3, odom.y))
    probe.spin_until(lambda: probe.statuses == ["failed", "succeeded"], "'succeeded' for a reachable target", log_path)
    probe.gripper_pub.publish(Float64MultiArray(data=[0.0]))  # nothing there to grasp
    probe.spin_until(lambda: probe.statuses[2:] == ["failed"], "'failed' for an empty grasp", log_path)


def test_node_clock_mode_stamps_with_wall_time(tmp_path, domain_id):
    process, log_path = _start_sim(tmp_path, domain_id, "-p", "scenario:=clarify_cup")
    probe = None
    try:
        probe = Probe(domain_id)
        probe.spin_until(lambda: probe.odom is not None and probe.scene is not None, "odom and scene", log_path)
        assert probe.odom.header.stamp.sec > 1_000_000_000
        assert {obj.id for obj in parse_perception_json(probe.scene.data).objects} == {"table_1", "cup_red", "cup_blue"}
    finally:
        if probe is not None:
            probe.close()
        _stop(process)


def test_bad_scenario_exits_with_a_reason(tmp_path, domain_id):
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "wafer_reasoner.ros.sim_world_node",
            "--ros-args",
            "-p",
            "scenario:=/nonexistent/x.yaml",
        ],
        cwd=REPO,
        env=_ros_env(domain_id),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert process.returncode == 1
    assert "cannot start" in process.stderr and "/nonexistent/x.yaml" in process.stderr


def test_installed_executable_in_lib_runs_the_node(domain_id):
    """pip installs put a wrapper in <prefix>/lib/wafer_reasoner/ (where ros2 run looks)."""
    exe = Path(sys.prefix) / "lib" / "wafer_reasoner" / "sim_world"
    if not (Path(sys.prefix) / "share" / "wafer_reasoner" / "package.xml").exists():
        pytest.skip("wafer_reasoner is not pip-installed into this interpreter's prefix")
    process = subprocess.run(
        [str(exe), "--ros-args", "-p", "scenario:=/nonexistent/y.yaml"],
        env=_ros_env(domain_id),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert process.returncode == 1, process.stderr
    assert "/nonexistent/y.yaml" in process.stderr


def test_config_file_mirrors_the_declared_parameters():
    params = yaml.safe_load((REPO / "config" / "sim_world.yaml").read_text())["/**"]["ros__parameters"]
    declared = {name: param.default for name, param in sim_world_node.PARAMETERS.items()}
    assert set(params) == set(declared)
    for name, value in params.items():
        assert type(value) is type(declared[name]), name
        if name != "scenario":
            assert value == declared[name], name
    for name, param in sim_world_node.PARAMETERS.items():
        if param.low is not None:
            assert param.low <= param.default <= param.high, name
