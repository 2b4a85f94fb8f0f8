"""Navigation through a NavigateToPose action: reasoner_node's action client against sim_world's action server,
real processes over real DDS, on the test-only copy of Nav2's action (wafer_test_nav2_msgs, built into .venv by
make setup: nav2_msgs is not on PyPI). Goal, feedback and result drive the executor; a stop cancels the goal
through the action. Without the action type, auto mode falls back to the goal_pose topic."""

import importlib.util
import json
import math

import pytest

from wafer_reasoner.planner.executor import Executor
from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, Scene
from wafer_reasoner.ros.navigation import STATUS_ABORTED, STATUS_SUCCEEDED, action_type_named, result_verdict

TEST_ACTION = "wafer_test_nav2_msgs/action/NavigateToPose"
HAVE_TEST_ACTION = importlib.util.find_spec("wafer_test_nav2_msgs") is not None
needs_test_action = pytest.mark.skipif(not HAVE_TEST_ACTION, reason="wafer_test_nav2_msgs not built (make setup)")


def test_auto_mode_finds_the_action_type_only_where_it_is_installed():
    assert action_type_named("no_such_msgs/action/NavigateToPose") is None  # then: the goal_pose topic
    if HAVE_TEST_ACTION:
        action = action_type_named(TEST_ACTION)
        assert {"pose", "behavior_tree"} <= set(action.Goal.get_fields_and_field_types())
        assert {"distance_remaining", "current_pose"} <= set(action.Feedback.get_fields_and_field_types())


def test_results_become_verdicts_and_drive_the_navigate_step():
    assert result_verdict(STATUS_SUCCEEDED, 0, "") == (True, "")
    verdict = result_verdict(STATUS_ABORTED, 104, "no valid path")
    assert verdict == (False, "navigation aborted, error 104: no valid path")
    limits = SafetyLimits()
    scene = Scene(places=(NamedPlace("kitchen", 4.0, 2.5),), robot=RobotPose(0.0, 0.0, 0.0))
    executor = Executor(limits)
    executor.start(parse_plan("navigate(place:kitchen); rotate(90)"), scene, 0.0)
    out = executor.on_navigation_result(True, "", 1.0)  # Nav2 says arrived: next step, though odom is far
    assert executor.current_step_index == 1 and any(getattr(c, "kind", None) for c in out)
    executor.start(parse_plan("navigate(place:kitchen)"), scene, 2.0)
    executor.on_navigation_result(False, "navigation aborted", 3.0)
    assert executor.state.value == "failed"
    assert executor.on_navigation_result(True, "", 4.0) == []  # a late result of an ended plan


def test_feedback_progress_restarts_the_navigate_timeout_and_no_progress_lets_it_fail():
    scene = Scene(places=(NamedPlace("kitchen", 4.0, 2.5),), robot=RobotPose(0.0, 0.0, 0.0))
    executor = Executor(SafetyLimits(), nav_timeout_s=10.0)
    executor.start(parse_plan("navigate(place:kitchen)"), scene, 0.0)
    executor.on_navigation_feedback(5.0, 8.0)
    executor.on_navigation_feedback(4.95, 15.0)  # 5 cm: not progress
    executor.on_navigation_feedback(4.0, 16.0)
    assert executor.tick(25.0) == [] and executor.state.value == "running"  # 9 s since the last progress
    executor.tick(26.5)
    assert executor.state.value == "failed"  # 10.5 s without progress


# ---- over DDS -------------------------------------------------------------------------------------------------

rclpy = pytest.importorskip("rclpy")
from dds_probe import ProbeNode  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from test_integration import CONFIG, SCENARIO, startable_model_dir  # noqa: E402

from wafer_reasoner.demo.processes import reserve_domain_id, ros_env, start_node, stop_process  # noqa: E402
from wafer_reasoner.ros.qos import COMMAND_QOS, PLAN_QOS, SENSOR_QOS, SPEECH_QOS  # noqa: E402


class ActionStack(ProbeNode):
    """sim_world serving navigate_to_pose, reasoner_node using it, and the probe."""

    def __init__(self, log_dir) -> None:
        self.lease = reserve_domain_id()
        env = ros_env(self.lease.domain_id)
        action = f"navigation_action_type:={TEST_ACTION}"
        processes = {
            "sim_world": start_node("sim_world", ["--params-file", str(CONFIG / "sim_world.yaml"), "-p",
                                                  f"scenario:={SCENARIO}", "-p", action], env,
                                    log_path=log_dir / "sim_world.log"),
            "reasoner_node": start_node("reasoner_node", [
                "--params-file", str(CONFIG / "reasoner.yaml"), "-p", f"model_dir:={startable_model_dir()}",
                "-p", "navigation.mode:=action", "-p", f"navigation.action_type:={TEST_ACTION}"], env,
                log_path=log_dir / "reasoner_node.log"),
        }
        super().__init__(self.lease.domain_id, "action_probe", processes=processes, log_dir=log_dir)
        self.plan, self.goal_pose, self.odom = [], [], None
        self.node.create_subscription(String, "reasoner/plan", lambda m: self.plan.append(json.loads(m.data)),
                                      PLAN_QOS)
        self.node.create_subscription(PoseStamped, "goal_pose", self.goal_pose.append, COMMAND_QOS)
        self.node.create_subscription(Odometry, "odom", lambda m: setattr(self, "odom", m), SENSOR_QOS)
        self.speech = self.node.create_publisher(String, "speech/transcript", SPEECH_QOS)

    def events(self, plan_id: int, kind: str) -> list:
        return [b for b in self.plan if b["type"] == "event" and b["plan_id"] == plan_id and b["event"] == kind]

    def say(self, text: str) -> dict:
        before = len([b for b in self.plan if b["type"] == "plan"])
        self.speech.publish(String(data=text))
        return self.spin_until(lambda: [b for b in self.plan if b["type"] == "plan"][before:], text)[0]

    def say_once_ready(self, text: str, timeout_s: float = 20.0) -> dict:
        """``say`` again while the reasoner refuses for want of a scene or a pose (ProbeNode.plan_once_ready)."""
        return self.plan_once_ready(lambda: self.speech.publish(String(data=text)), self.plan, timeout_s)

    def close(self) -> None:
        super().close()
        for process in self.processes.values():
            stop_process(process)
        self.lease.release()


@pytest.fixture
def stack(tmp_path):
    made = ActionStack(tmp_path)
    try:
        made.spin_until(lambda: made.speech.get_subscription_count() > 0 and made.odom is not None, "the stack")
        yield made
    finally:
        made.close()


@needs_test_action
def test_navigation_goes_through_the_action_and_a_stop_cancels_it(stack):
    log = stack.log_dir / "reasoner_node.log"
    stack.spin_until(lambda: "navigate_to_pose action (wafer_test_nav2_msgs)" in log.read_text(), "action mode")
    plan = stack.say_once_ready("go to the kitchen")  # about 9 m: 20 s of driving
    assert plan["status"] == "ok", plan
    stack.spin_until(lambda: stack.events(plan["plan_id"], "step_started"), "the navigate step")
    start = stack.odom.pose.pose.position
    stack.spin_until(lambda: math.hypot(stack.odom.pose.pose.position.x - start.x,
                                        stack.odom.pose.pose.position.y - start.y) > 0.3, "the robot to drive")
    stop = stack.say("stop")
    assert stop["plan"] == "stop()"
    stack.spin_until(lambda: stack.events(plan["plan_id"], "plan_preempted"), "the plan to end")
    stack.spin_for(0.5)  # the base settles
    held = stack.odom.pose.pose.position
    stack.spin_for(1.0)
    now = stack.odom.pose.pose.position
    assert math.hypot(now.x - held.x, now.y - held.y) < 0.02  # the action's cancel stopped the base
    assert stack.goal_pose == []  # nothing on the goal_pose topic: goals and the cancel went through the action

    dock = stack.say("go to the dock")  # back near the start: the action's SUCCEEDED ends the step
    assert dock["status"] == "ok", dock
    stack.spin_until(lambda: stack.events(dock["plan_id"], "plan_succeeded"), "the dock reached", timeout_s=90.0)
    assert stack.goal_pose == []

