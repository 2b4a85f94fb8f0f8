"""reasoner/markers: what RViz shows for a known scene and plan (pure), and the MarkerArray a running node
publishes over DDS for it."""

import math

import pytest

from wafer_reasoner.planner.language import parse_plan
from wafer_reasoner.planner.scene import NamedPlace, RobotPose, scene_from_dict
from wafer_reasoner.runtime import markers
from wafer_reasoner.runtime.markers import MarkerView, plan_goals, reasoner_markers, step_refs

FETCH = "navigate(obj:cup_red); pick(obj:cup_red); navigate(person:user); handover(obj:cup_red, person:user)"
CUP, USER, START = (4.8, 3.2, 0.75), (-3.0, 2.5), (-4.0, -3.0, 0.0)
PLACES = (NamedPlace("kitchen", 4.0, 2.5), NamedPlace("dock", -4.5, -3.0, math.pi))


def red_cup_scene():
    from test_reasoner_node import red_cup_scene as data

    return scene_from_dict({**data(), "stamp": 1.0}, places=PLACES).with_robot(RobotPose(*START))


def by_ns(items) -> dict:
    out = {}
    for item in items:
        out.setdefault(item.ns, []).append(item)
    return out


def view(step_index=0, state="running", arm=None, holding=""):
    steps = parse_plan(FETCH)
    return MarkerView(red_cup_scene(), steps, steps, step_index, state, holding, 0.6, arm)


def test_the_known_scene_shows_objects_people_places_and_the_robot_with_labels():
    items = reasoner_markers(view())
    assert items[0].shape == markers.DELETE_ALL  # stale markers never linger
    groups = by_ns(items[1:])
    cups = {m.colour for m in groups["objects"] if (m.x, m.y, m.z) in {CUP, (5.2, 2.8, 0.75)}}
    assert len(groups["objects"]) == 4 and cups == {markers.COLOURS["red"], markers.COLOURS["blue"]}
    [person] = groups["people"]
    assert (person.shape, person.x, person.y, person.scale[2]) == (markers.CYLINDER, *USER, markers.PERSON_HEIGHT_M)
    assert [(m.x, m.y, m.yaw) for m in groups["places"]] == [(4.0, 2.5, 0.0), (-4.5, -3.0, math.pi)]
    [robot] = groups["robot"]
    assert (robot.x, robot.y, robot.yaw) == START
    texts = {m.text for m in groups["labels"]}
    assert {"cup_red (red cup)", "person:user", "place:kitchen", "place:dock"} <= texts
    assert len({(m.ns, m.id) for m in items}) == len(items)  # RViz keys markers by (ns, id)


def test_the_plan_shows_grounded_references_each_standoff_goal_the_arm_target_and_the_current_step():
    groups = by_ns(reasoner_markers(view(arm=CUP)))
    grounded = {m.text: (m.x, m.y, m.z) for m in groups["grounded"]}
    assert grounded == {"obj:cup_red": CUP, "person:user": (*USER, 0.0)}
    first, second = groups["goals"]
    assert math.hypot(first.x - CUP[0], first.y - CUP[1]) == pytest.approx(0.6)  # the stand-off pose
    assert math.cos(first.yaw - math.atan2(CUP[1] - first.y, CUP[0] - first.x)) == pytest.approx(1.0)  # facing it
    assert math.hypot(second.x - USER[0], second.y - USER[1]) == pytest.approx(0.6)
    assert first.colour == markers.GOAL_NOW and second.colour == markers.GOAL_LATER
    assert first.text.startswith("1: navigate(obj:cup_red)") and second.text.startswith("3: navigate(person:user)")
    [arm] = groups["arm_target"]
    assert (arm.x, arm.y, arm.z) == CUP
    [step] = groups["step"]
    assert step.text == "1/4 navigate(obj:cup_red) [running]" and (step.x, step.y) == START[:2]


def test_goals_behind_the_current_step_and_of_an_ended_plan_are_not_shown():
    later = by_ns(reasoner_markers(view(step_index=2, holding="cup_red")))
    assert [m.text.split(":")[0] for m in later["goals"]] == ["3"]  # the cup's goal is behind us
    assert later["goals"][0].colour == markers.GOAL_NOW
    ended = by_ns(reasoner_markers(view(step_index=3, state="succeeded")))
    assert "goals" not in ended and ended["step"][0].text.endswith("[succeeded]")
    assert [str(ref) for ref in step_refs(parse_plan(FETCH))] == ["obj:cup_red", "person:user"]
    assert plan_goals(view(step_index=1, state="running"))[0][0] == 2


# ---- over DDS: the node publishes them -------------------------------------------------------------------------

rclpy = pytest.importorskip("rclpy")
import test_reasoner_node as base  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from wafer_reasoner.ros.qos import MARKERS_QOS  # noqa: E402

domain_id, ros_context, reasoner = base.domain_id, base.ros_context, base.reasoner  # fixtures, used by name


@pytest.mark.skipif(not base.SHIPPED_MODEL.is_file(), reason="needs the shipped planner model")
def test_a_running_node_publishes_the_markers_of_its_scene_and_plan(reasoner):
    arrays = []
    reasoner.node.create_subscription(MarkerArray, "reasoner/markers", arrays.append, MARKERS_QOS)
    reasoner.publish_odom_and_wait(*START)
    reasoner.publish_scene_and_wait(base.red_cup_scene())
    assert reasoner.say("bring me the red cup")["plan"] == FETCH

    def with_goals():
        return [a for a in arrays if any(m.ns == "goals" for m in a.markers)]

    latest = reasoner.spin_until(with_goals, "a MarkerArray with the plan's goals")[-1].markers
    assert latest[0].action == Marker.DELETEALL and all(m.header.frame_id == "map" for m in latest)
    groups = by_ns(latest[1:])
    assert len(groups["objects"]) == 4 and len(groups["people"]) == 1 and len(groups["places"]) == 6
    assert {m.text for m in groups["grounded"]} == {"obj:cup_red", "person:user"}
    goal = groups["goals"][0].pose.position
    assert math.hypot(goal.x - CUP[0], goal.y - CUP[1]) == pytest.approx(0.6, abs=1e-6)
    assert groups["step"][0].text == "1/4 navigate(obj:cup_red) [running]"
    assert all(m.type == Marker.TEXT_VIEW_FACING for m in groups["labels"])


def test_figure_labels_that_would_overlap_are_moved_a_line_apart_in_their_direction():
    from wafer_reasoner.studies.marker_figure import LINE_H_M, spread_labels

    labels = [(0.0, 1.0, "cup_red (red cup)", 1), (0.1, 1.05, "book_1 (black book)", 1),
              (5.0, 1.0, "far away", 1), (0.0, 1.0, "goal", -1)]
    placed = spread_labels(labels)
    assert placed[0] == (0.0, 1.0) and placed[2] == (5.0, 1.0)  # nothing in the way: at the anchor
    assert placed[1] == (0.1, pytest.approx(1.05 + LINE_H_M))  # one line up clears the first
    assert placed[3] == (0.0, pytest.approx(1.0 - LINE_H_M))  # downwards, clear of both
