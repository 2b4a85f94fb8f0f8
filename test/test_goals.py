"""Goal geometry: stand-off poses and manipulator targets."""

import math

import pytest

from wafer_reasoner.planner import goals
from wafer_reasoner.planner.language import Ref
from wafer_reasoner.planner.scene import NamedPlace, Person, RobotPose, Scene, SceneObject


def approx_pose(pose):
    return pytest.approx(pose, abs=1e-9)


def test_standoff_pose_stops_short_on_the_line_and_faces_the_target():
    assert goals.standoff_pose((0.0, 0.0), (2.0, 0.0), 0.5) == approx_pose((1.5, 0.0, 0.0))
    x, y, yaw = goals.standoff_pose((0.0, 0.0), (3.0, 4.0), 1.0)
    assert (x, y) == approx_pose((2.4, 3.2))
    assert yaw == pytest.approx(math.atan2(4.0, 3.0))


def test_standoff_pose_from_the_other_side_faces_back():
    x, y, yaw = goals.standoff_pose((5.0, 1.0), (1.0, 1.0), 1.0)
    assert (x, y) == approx_pose((2.0, 1.0))
    assert abs(yaw) == pytest.approx(math.pi)


def test_standoff_pose_within_standoff_stays_and_turns_to_face():
    assert goals.standoff_pose((1.0, 1.0), (1.3, 1.3), 0.6) == approx_pose((1.0, 1.0, math.pi / 4))


def test_standoff_pose_exactly_at_standoff_distance_stays():
    assert goals.standoff_pose((0.0, 0.0), (0.0, 0.6), 0.6) == approx_pose((0.0, 0.0, math.pi / 2))


def test_standoff_pose_on_the_target_keeps_current_yaw():
    assert goals.standoff_pose((1.0, 2.0), (1.0, 2.0), 0.6, current_yaw=0.7) == (1.0, 2.0, 0.7)


def test_zero_standoff_goes_onto_the_target():
    assert goals.standoff_pose((0.0, 0.0), (0.0, -2.0), 0.0) == approx_pose((0.0, -2.0, -math.pi / 2))


def test_wrap_angle_maps_into_minus_pi_to_pi():
    assert goals.wrap_angle(3 * math.pi / 2) == pytest.approx(-math.pi / 2)
    assert goals.wrap_angle(-3 * math.pi / 2) == pytest.approx(math.pi / 2)
    assert goals.wrap_angle(0.25) == pytest.approx(0.25)


SCENE = Scene(
    objects=(SceneObject("cup_1", "cup", "red", 2.0, 0.0, 0.8), SceneObject("table_1", "table", "", 4.0, 0.0, 0.7)),
    people=(Person("user", 0.0, 3.0),),
    places=(NamedPlace("kitchen", 5.0, 5.0, 1.0),),
)


def test_navigation_goal_to_a_place_is_the_place_pose_itself():
    goal = goals.navigation_goal(Ref("place", "kitchen"), SCENE, holding="", robot_pose=RobotPose(), standoff_m=0.6)
    assert goal == (5.0, 5.0, 1.0)


def test_navigation_goal_to_an_object_is_the_standoff_pose():
    goal = goals.navigation_goal(Ref("obj", "cup_1"), SCENE, holding="", robot_pose=RobotPose(), standoff_m=0.6)
    assert goal == approx_pose((1.4, 0.0, 0.0))


def test_navigation_goal_to_unknown_ref_is_none():
    assert goals.navigation_goal(Ref("obj", "ghost"), SCENE, holding="", robot_pose=RobotPose(), standoff_m=0.6) is None
    assert (
        goals.navigation_goal(Ref("place", "attic"), SCENE, holding="", robot_pose=RobotPose(), standoff_m=0.6) is None
    )


def test_a_held_object_is_where_the_robot_is():
    position = goals.ref_position(Ref("obj", "cup_1"), SCENE, holding="cup_1", robot_xy=(7.0, 8.0))
    assert position == (7.0, 8.0, 0.0)


def test_pick_target_is_the_object():
    assert goals.pick_target(Ref("obj", "cup_1"), SCENE) == (2.0, 0.0, 0.8)
    assert goals.pick_target(Ref("obj", "ghost"), SCENE) is None


def test_place_target_on_an_object_is_above_it_and_on_a_place_is_at_it():
    x, y, z = goals.place_target(Ref("obj", "table_1"), SCENE)
    assert (x, y) == (4.0, 0.0)
    assert z == pytest.approx(0.7 + goals.PLACE_CLEARANCE_M)
    assert goals.place_target(Ref("place", "kitchen"), SCENE) == (5.0, 5.0, goals.PLACE_CLEARANCE_M)


def test_handover_target_is_at_hand_height_short_of_the_person():
    x, y, z = goals.handover_target(Ref("person", "user"), SCENE, robot_xy=(0.0, 2.0))
    assert (x, y) == approx_pose((0.0, 3.0 - goals.HANDOVER_GAP_M))
    assert z == goals.HANDOVER_HEIGHT_M


def test_handover_target_never_goes_behind_the_robot_when_the_person_is_very_close():
    x, y, _ = goals.handover_target(Ref("person", "user"), SCENE, robot_xy=(0.0, 2.9))
    assert (x, y) == (0.0, 2.9)


def test_handover_target_for_an_absent_person_is_none():
    assert goals.handover_target(Ref("person", "bob"), SCENE, robot_xy=(0.0, 0.0)) is None
