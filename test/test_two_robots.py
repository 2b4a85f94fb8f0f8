"""Two robots on one ROS domain, each a sim_world and a reasoner_node started as processes with
`-r __ns:=/robot1` / `/robot2` and a tuned params file of its own (keyed /**, as config/reasoner.yaml is): each
robot follows its own command and uses its own parameters. The launch-file version (demo.launch.py twice, with
namespace:= and params_file:=) runs where ROS 2 launch is installed and skips here."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from dds_probe import ProbeNode  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rcl_interfaces.srv import GetParameters  # noqa: E402
from rclpy.parameter import parameter_value_to_python  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_integration import CONFIG, SCENARIO, needs_trained_model  # noqa: E402

from wafer_reasoner.demo.processes import reserve_domain_id, ros_env, start_node, stop_process  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS, PLAN_QOS, SPEECH_QOS  # noqa: E402

CUP = (4.8, 3.2)  # bring_red_cup.yaml
KITCHEN = (4.0, 2.5)  # config/semantic_map.yaml
TUNING = {  # namespace: (reasoner parameters, what the robot is told)
    "robot1": ({"engine_candidates": 1, "limits": {"standoff_m": 0.6}}, "go to the kitchen"),
    "robot2": ({"engine_candidates": 3, "limits": {"standoff_m": 0.4}}, "bring me the red cup"),
}


def tuned_params_file(folder: Path, namespace: str) -> Path:
    """config/reasoner.yaml with this robot's values, keyed /** like the original."""
    data = yaml.safe_load((CONFIG / "reasoner.yaml").read_text())
    params = data["/**"]["ros__parameters"]
    changes, _ = TUNING[namespace]
    for key, value in changes.items():
        if isinstance(value, dict):
            params[key].update(value)
        else:
            params[key] = value
    params["limits"]["max_scene_age_s"] = 10.0
    path = folder / f"{namespace}_reasoner.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class Fleet(ProbeNode):
    """The probe's side of both robots' topics."""

    def __init__(self, domain_id: int, processes: dict, log_dir: Path) -> None:
        super().__init__(domain_id, "fleet_probe", processes=processes, log_dir=log_dir)
        self.plans = {ns: [] for ns in TUNING}
        self.goals = {ns: [] for ns in TUNING}
        self.speech = {}
        for ns in TUNING:
            self.node.create_subscription(String, f"/{ns}/reasoner/plan", self._plan_recorder(ns), PLAN_QOS)
            self.node.create_subscription(PoseStamped, f"/{ns}/goal_pose", self.goals[ns].append, COMMAND_QOS)
            self.speech[ns] = self.node.create_publisher(String, f"/{ns}/speech/transcript", SPEECH_QOS)

    def _plan_recorder(self, ns):
        return lambda msg: self.plans[ns].append(json.loads(msg.data))

    def parameter(self, ns: str, name: str):
        client = self.node.create_client(GetParameters, f"/{ns}/reasoner_node/get_parameters")
        self.spin_until(client.service_is_ready, f"/{ns}/reasoner_node's parameter service")
        future = client.call_async(GetParameters.Request(names=[name]))
        self.spin_until(future.done, f"{name} of /{ns}/reasoner_node")
        return parameter_value_to_python(future.result().values[0])


def check_each_robot_follows_its_own_command_with_its_own_parameters(fleet: Fleet) -> None:
    spin = fleet.spin_until
    for ns in TUNING:
        spin(lambda n=ns: fleet.speech[n].get_subscription_count() > 0, f"/{ns}/reasoner_node")
    assert fleet.parameter("robot1", "engine_candidates") == 1
    assert fleet.parameter("robot2", "engine_candidates") == 3
    assert fleet.parameter("robot2", "limits.standoff_m") == 0.4
    fleet.spin_for(3.0)  # scenes and poses reach both reasoners
    for ns, (_, command) in TUNING.items():
        fleet.speech[ns].publish(String(data=command))
    plans = {ns: spin(lambda n=ns: [b for b in fleet.plans[n] if b["type"] == "plan"], f"/{ns}'s plan")[0]
             for ns in TUNING}
    assert plans["robot1"]["plan"] == "navigate(place:kitchen)", plans["robot1"]
    assert plans["robot2"]["plan"].startswith("navigate(obj:cup_red); pick(obj:cup_red)"), plans["robot2"]
    assert [plans[ns]["emulated"]["decoded"] for ns in TUNING] == [1, 3]  # engine_candidates of each file
    goals = {ns: spin(lambda n=ns: fleet.goals[n], f"/{ns}/goal_pose")[0].pose.position for ns in TUNING}
    assert math.hypot(goals["robot1"].x - KITCHEN[0], goals["robot1"].y - KITCHEN[1]) < 1e-6
    assert math.hypot(goals["robot2"].x - CUP[0], goals["robot2"].y - CUP[1]) == pytest.approx(0.4, abs=1e-6)
    assert len(fleet.plans["robot1"]) == len([b for b in fleet.plans["robot1"] if b["plan_id"] == 1])  # no cross-talk


@needs_trained_model
def test_two_namespaced_robots_each_follow_their_own_command_with_their_own_params(tmp_path):
    lease = reserve_domain_id()
    env, processes = ros_env(lease.domain_id), {}
    fleet = None
    try:
        for ns in TUNING:
            ns_args = ["-r", f"__ns:=/{ns}"]
            sim_args = [*ns_args, "--params-file", str(CONFIG / "sim_world.yaml"), "-p", f"scenario:={SCENARIO}"]
            processes[f"{ns}_sim_world"] = start_node("sim_world", sim_args, env,
                                                      log_path=tmp_path / f"{ns}_sim_world.log")
            processes[f"{ns}_reasoner_node"] = start_node(
                "reasoner_node", [*ns_args, "--params-file", str(tuned_params_file(tmp_path, ns))], env,
                log_path=tmp_path / f"{ns}_reasoner_node.log")
        fleet = Fleet(lease.domain_id, processes, tmp_path)
        check_each_robot_follows_its_own_command_with_its_own_parameters(fleet)
    finally:
        if fleet is not None:
            fleet.close()
        for process in processes.values():
            stop_process(process)
        lease.release()


# a child process: LaunchService runs only in a main thread
LAUNCH_ROBOTS = """
import sys
from launch import LaunchService
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
service = LaunchService()
for namespace, params_file in zip(sys.argv[2::2], sys.argv[3::2]):
    arguments = {"namespace": namespace, "params_file": params_file}
    service.include_launch_description(IncludeLaunchDescription(PythonLaunchDescriptionSource(sys.argv[1]),
                                                                launch_arguments=arguments.items()))
sys.exit(service.run())
"""


@needs_trained_model
def test_two_robots_from_demo_launch_with_namespace_and_params_file(tmp_path):
    launch = pytest.importorskip("launch", reason="ROS 2 launch is not installed (it is not on PyPI)")
    pytest.importorskip("launch_ros", reason="ROS 2 launch_ros is not installed (it is not on PyPI)")
    if not hasattr(launch, "LaunchService"):
        pytest.skip("the 'launch' module here is not ROS 2's launch")
    lease = reserve_domain_id()
    demo = str(Path(__file__).resolve().parents[1] / "launch" / "demo.launch.py")
    arguments = [item for ns in TUNING for item in (ns, str(tuned_params_file(tmp_path, ns)))]
    with open(tmp_path / "launch.log", "wb") as log:
        launcher = subprocess.Popen([sys.executable, "-c", LAUNCH_ROBOTS, demo, *arguments],
                                    env=ros_env(lease.domain_id), stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
    fleet = Fleet(lease.domain_id, {"launch": launcher}, tmp_path)
    try:
        check_each_robot_follows_its_own_command_with_its_own_parameters(fleet)
    finally:
        fleet.close()
        stop_process(launcher, grace_s=20.0)
        lease.release()
