"""The pieces that keep bad input out and the node alive, one by one, without ROS traffic: the bounded JSON reader,
scene bounds, speakable text, the warning throttle, the planning thread, reply ownership in the stand-in world,
model files, and the command ids on the messages."""

import json
import threading

import pytest

from wafer_reasoner.engine.planner_model import SHIPPED_MODEL_DIR, ModelLoadError, read_model_config
from wafer_reasoner.planner.bounded_json import BoundedJsonError, loads_bounded, structure_problem
from wafer_reasoner.planner.commands import MAX_SAY_CHARS, ArmPurpose, ArmTarget, GripperCommand, Say
from wafer_reasoner.planner.scene import RobotPose, SceneError, frame_id_problem, parse_perception_json
from wafer_reasoner.runtime.throttle import Throttle
from wafer_reasoner.runtime.worker import PlanningWorker
from wafer_reasoner.sim.world import GripperCommand as WorldGripper
from wafer_reasoner.sim.world import ManipulationStatus, ReplyOwners, World, WorldConfig

CAPS = {"max_bytes": 1000, "max_depth": 3, "max_containers": 5}


def test_json_structure_is_checked_before_decoding_and_strings_do_not_count():
    assert structure_problem('{"a": "[[[[[[[[", "b": [1, {"c": 2}]}', max_depth=3, max_containers=5) == ""
    assert "deeper than 3" in structure_problem("[[[[1]]]]", max_depth=3, max_containers=5)
    assert "more than 5" in structure_problem("[[], [], [], [], [], []]", max_depth=3, max_containers=5)
    assert "never closed" in structure_problem('{"a": "\\"}', max_depth=3, max_containers=5)
    assert loads_bounded('{"a": "]]]\\"[["}', **CAPS) == {"a": ']]]"[['}
    for text in ("[" * 100_000, "x" * 1001, '{"a": ' + "9" * 5000 + "}", "{", b"\xff\xfe", 42):
        with pytest.raises(BoundedJsonError):
            loads_bounded(text, **CAPS)


def test_scene_values_are_bounded_and_frame_ids_are_tf_names():
    def scene(**extra) -> str:
        return json.dumps({"stamp": 1.0, "objects": [{"id": "cup_1", "label": "cup", "x": 1.0, "y": 2.0}], **extra})

    assert parse_perception_json(scene(frame_id="robot1/map")).frame_id == "robot1/map"
    for frame in ("/map", "../../etc/passwd", "map//odom", "", "x" * 65, {"a": 1}, 7, "map odom"):
        assert frame_id_problem(frame), frame
        with pytest.raises(SceneError):
            parse_perception_json(scene(frame_id=frame))
    for stamp in (-1.0, 2.0**31, 1e308, 10**400):
        with pytest.raises(SceneError):
            parse_perception_json(json.dumps({"stamp": stamp}))
    with pytest.raises(SceneError, match="must lie in"):
        parse_perception_json(json.dumps({"stamp": 1.0, "people": [{"id": "user", "x": 10**400, "y": 0}]}))
    with pytest.raises(SceneError, match="chars"):  # a 100 KB id is quoted cut short, not whole
        parse_perception_json(json.dumps({"stamp": 1.0, "objects": [{"id": "x" * 100_000, "label": "a", "x": 0,
                                                                     "y": 0}]}))


def test_anything_said_is_printable_short_and_has_no_endless_numbers():
    said = Say("What I see is " + "1" * 309 + ".0 seconds old;\x00\x1b[31m\n" + "really " * 100).text
    assert said.startswith("What I see is a very long number seconds old;")
    assert len(said) <= MAX_SAY_CHARS and said.isprintable() and said.endswith("...")
    assert Say("Turn 90 degrees.").text == "Turn 90 degrees."


def test_the_throttle_shows_one_line_per_kind_per_period_and_counts_the_rest():
    throttle = Throttle(5.0)
    assert throttle.admit("stray", 0.0) == 0
    assert [throttle.admit("stray", t) for t in (1.0, 2.0, 4.9)] == [None, None, None]
    assert throttle.admit("other", 1.0) == 0  # kinds are throttled apart
    assert throttle.admit("stray", 5.0) == 3
    assert Throttle.line("x", 3) == "x (3 more like this not shown)" and Throttle.line("x", 0) == "x"


def test_the_planning_thread_plans_in_order_and_wakes_the_caller_each_time():
    woken = threading.Semaphore(0)
    worker = PlanningWorker(lambda job: job * 10, woken.release)
    try:
        for job in (1, 2, 3):
            worker.submit(job)
        for _ in range(3):
            assert woken.acquire(timeout=5.0)
        assert worker.take() == [(1, 10), (2, 20), (3, 30)] and worker.take() == []
    finally:
        worker.close()


def test_each_world_reply_is_owned_by_the_command_it_answers():
    world, owners = World(WorldConfig(manipulation_time_s=1.0)), ReplyOwners()
    assert owners.command(world, world.command_arm(0.5, 0.0, 0.5), 11, False) == []  # in progress
    busy = world.manipulation_busy
    replies = owners.command(world, world.command_gripper(WorldGripper.OPEN), 12, busy)  # preempts the arm
    assert replies == [(ManipulationStatus.FAILED, 11)]
    assert owners.stepped(world, world.step(1.0)) == [(ManipulationStatus.SUCCEEDED, 12)]
    assert owners.command(world, world.reject_command(), None, False) == [(ManipulationStatus.FAILED, None)]


def test_model_files_that_are_wrong_raise_model_load_errors(tmp_path):
    genai, tokenizer = read_model_config(SHIPPED_MODEL_DIR)
    assert len(tokenizer) == genai["model"]["vocab_size"]
    good = json.loads((SHIPPED_MODEL_DIR / "genai_config.json").read_text())
    cases = [{}, [], {"model": {"decoder": {}}}, {**good, "model": {**good["model"], "vocab_size": -1}},
             {**good, "model": {**good["model"], "vocab_size": 3}}]
    (tmp_path / "tokenizer.json").write_text((SHIPPED_MODEL_DIR / "tokenizer.json").read_text())
    for case in cases:
        (tmp_path / "genai_config.json").write_text(json.dumps(case))
        with pytest.raises(ModelLoadError):
            read_model_config(tmp_path)
    (tmp_path / "genai_config.json").write_text("[" * 10_000)
    with pytest.raises(ModelLoadError, match="nests deeper"):
        read_model_config(tmp_path)


def test_command_ids_ride_on_the_messages_and_read_back():
    conversions = pytest.importorskip("wafer_reasoner.ros.conversions")
    target = ArmTarget(1.0, 0.0, 0.5, ArmPurpose.PICK, 0, command_id=5_500_000_123)
    pose = conversions.arm_target_to_pose(target, robot=RobotPose(), frame_id="map", stamp_s=99.0)
    assert (pose.header.stamp.sec, pose.header.stamp.nanosec) == (5, 500_000_123)
    assert conversions.command_id_of_target_pose(pose) == 5_500_000_123
    gripper = conversions.gripper_command_to_msg(GripperCommand(open=False, command_id=42))
    assert gripper.layout.dim[0].label == "gripper#42" and list(gripper.data) == [0.0]
    assert conversions.command_id_of_gripper_msg(gripper) == 42
    gripper.layout.dim[0].label = "gripper#²"
    assert conversions.command_id_of_gripper_msg(gripper) is None
    assert conversions.command_id_of_gripper_msg(conversions.gripper_command_to_msg(GripperCommand(True))) is None
