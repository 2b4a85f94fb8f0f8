"""wafer-reasoner record / replay: a real node session over DDS recorded into a rosbag2 (rosbags), then replayed
through the core without DDS; the same code replays the same plans, and a change that alters a plan is reported."""

import os
import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("rosbags")

import test_reasoner_node as base  # noqa: E402

from wafer_reasoner.demo.processes import start_node, stop_process  # noqa: E402
from wafer_reasoner.ros.bag_replay import differences  # noqa: E402
from wafer_reasoner.ros.bags import read_session  # noqa: E402

domain_id, ros_context, reasoner = base.domain_id, base.ros_context, base.reasoner  # fixtures, used by name
SESSION = ("go to the kitchen", "bring me the red cup", "stop")


def test_differences_name_the_plan_the_utterance_and_both_sides():
    recorded = {1: ("go to the kitchen", "navigate(place:kitchen)", "ok"), 2: ("stop", "stop()", "ok")}
    assert differences(recorded, dict(recorded)) == []
    replayed = {1: ("go to the kitchen", "", "rejected"), 2: ("stop", "stop()", "ok"), 3: ("turn", "rotate(90)", "ok")}
    assert differences(recorded, replayed) == [
        "plan 1 'go to the kitchen': recorded navigate(place:kitchen) [ok], replayed - [rejected]",
        "plan 3 'turn': recorded (not recorded), replayed rotate(90) [ok]",
    ]


def replay(bag, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wafer_reasoner.cli", "replay", str(bag), *args],
                          cwd=base.REPO, env=base._node_env(0), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_both_storages_keep_messages_stamps_and_the_metadata(tmp_path, storage):
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String

    from wafer_reasoner.ros.bag_record import _typestore, open_writer
    from wafer_reasoner.ros.bags import NAMESPACE_KEY, PARAMETERS_KEY

    writer = open_writer(tmp_path / "bag", storage)
    writer.set_custom_data(NAMESPACE_KEY, "/robot1")
    speech = writer.add_connection("/robot1/speech/transcript", "std_msgs/msg/String", typestore=_typestore())
    writer.add_connection("/robot1/say", "std_msgs/msg/String", typestore=_typestore())  # none written: fine
    for stamp_ns, text in ((2_000_000_000, "stop"), (1_500_000_000, "go to the dock")):
        writer.write(speech, stamp_ns, serialize_message(String(data=text)))
    writer.set_custom_data(PARAMETERS_KEY, '{"engine_candidates": 3}')
    writer.close()
    messages, parameters = read_session(tmp_path / "bag")
    assert [(m.topic, m.stamp_s, m.msg.data) for m in messages] == [
        ("speech/transcript", 1.5, "go to the dock"), ("speech/transcript", 2.0, "stop")]  # time order
    assert parameters == {"engine_candidates": 3}
    with pytest.raises(Exception, match="exists"):
        open_writer(tmp_path / "bag", storage)  # never overwritten


@pytest.mark.skipif(not base.SHIPPED_MODEL.is_file(), reason="needs the shipped planner model")
def test_a_recorded_session_replays_to_the_same_plans_and_a_changed_limit_shows_up(reasoner, domain_id, tmp_path):
    bag = tmp_path / "session"
    recorder = start_node("bag_recorder", [], base._node_env(domain_id), log_path=tmp_path / "recorder.log",
                          arguments=["--output", str(bag)])
    try:
        # the node and the recorder on every topic this probe publishes: odometry and the scene are published
        # once, volatile, so a recorder that matches them late would miss them and replay without a pose
        reasoner.spin_until(lambda: min(publisher.get_subscription_count() for publisher in
                                        (reasoner.speech, reasoner.odom, reasoner.perception)) >= 2,
                            "the recorder on the topics")
        reasoner.spin_until(lambda: "parameters are in the bag" in (tmp_path / "recorder.log").read_text(),
                            "the recorder to read the reasoner's parameters")
        reasoner.publish_odom_and_wait(*base.ROBOT_START)
        reasoner.publish_scene_and_wait(base.red_cup_scene())
        plans = [reasoner.say(text) for text in SESSION]
        quiet_until = time.monotonic() + 1.0
        reasoner.spin_until(lambda: time.monotonic() > quiet_until, "the last messages to reach the recorder")
    finally:
        assert stop_process(recorder) == 0, (tmp_path / "recorder.log").read_text()
    messages, parameters = read_session(bag)
    assert parameters["limits.max_scene_age_s"] == 10.0  # the node's own values, not the defaults
    topics = {m.topic for m in messages}
    assert {"speech/transcript", "odom", "perception/objects", "reasoner/plan", "goal_pose", "cmd_vel"} <= topics

    same = replay(bag)
    assert same.returncode == 0, same.stdout + same.stderr
    assert f"{len(SESSION)} plans, {len(SESSION)} recorded, 0 differ" in same.stdout
    changed = replay(bag, "-p", "limits.workspace_max_x_m:=3.0")  # the kitchen (x 4.0) is now out of bounds
    assert changed.returncode == 1, changed.stdout + changed.stderr
    kitchen = f"DIFF plan {plans[0]['plan_id']} 'go to the kitchen': recorded navigate(place:kitchen) [ok], replayed"
    assert kitchen in changed.stdout


def test_an_unreadable_bag_is_refused_with_exit_2(tmp_path):
    result = replay(tmp_path / "no_bag_here")
    assert result.returncode == 2 and "no such bag folder" in result.stderr and "Traceback" not in result.stderr
    assert os.path.exists(tmp_path)


@pytest.mark.skipif(not base.SHIPPED_MODEL.is_file(), reason="needs the shipped planner model")
def test_the_demo_records_its_run_and_the_recording_replays_clean(tmp_path):
    from test_integration import _run_demo, _write_scenario

    scenario = _write_scenario(tmp_path / "dock.yaml", say="go to the dock", near_place="dock", timeout_s=30)
    bag = tmp_path / "demo_bag"
    result = _run_demo(tmp_path, "--scenario", str(scenario), "--record", str(bag), timeout_s=180)
    assert result.returncode == 0, result.stdout + result.stderr
    messages, parameters = read_session(bag)
    assert parameters is not None and any(m.topic == "speech/transcript" for m in messages)
    same = replay(bag)
    assert same.returncode == 0 and "1 plans, 1 recorded, 0 differ" in same.stdout, same.stdout + same.stderr
