"""The README's RViz picture, drawn from the same markers reasoner/markers publishes (RViz cannot run here).

    python -m wafer_reasoner.studies.marker_figure --out docs/rviz_markers.png     # needs the [study] extra

Runs the bring_red_cup scenario in lockstep simulated time (``sim/lockstep.py``: the node's core and the
stand-in world) until the robot carries the cup towards the user, then draws ``runtime/markers.py``'s markers
from above: objects, people, places, the robot, the grounded references, the stand-off goals, the last arm
target and the current step, as RViz's MarkerArray display shows them in a top view.
"""

from __future__ import annotations

import argparse
import math

from wafer_reasoner.planner.limits import SafetyLimits
from wafer_reasoner.runtime import markers
from wafer_reasoner.runtime.markers import MarkerView, reasoner_markers
from wafer_reasoner.runtime.resources import config_file, scenario_file

SAY = "bring me the red cup"
SHOW_AT_STEP = 2  # navigate(person:user): the cup in the gripper, the handover ahead
STEP_S, LIMIT_S = 0.5, 120.0
CHAR_W_M, LINE_H_M = 0.1, 0.2  # a 7 pt label's character width and line height at the figure's scale, metres


def spread_labels(labels) -> list:
    """(x, y, text, direction) anchors, in drawing order, -> (x, y) where each label goes: at its anchor, or moved
    line by line (direction +1 up, -1 down) until its box (centred on x, LINE_H_M tall) overlaps no label placed
    before it."""
    placed, boxes = [], []
    for x, y, text, direction in labels:
        half = CHAR_W_M * len(text) / 2
        while any(x - half < bx1 and bx0 < x + half and y < by1 and by0 < y + LINE_H_M for bx0, by0, bx1, by1 in boxes):
            y += direction * LINE_H_M
        boxes.append((x - half, y, x + half, y + LINE_H_M))
        placed.append((x, y))
    return placed


def mid_plan_view(scenario: str = "bring_red_cup") -> MarkerView:
    """The markers' view of the lockstep run once the executor reaches SHOW_AT_STEP."""
    from wafer_reasoner.engine.planner_model import PlannerModel
    from wafer_reasoner.runtime.emulation import emulator_for
    from wafer_reasoner.sim.lockstep import Lockstep
    from wafer_reasoner.sim.scenario import load_places_file, load_scenario
    from wafer_reasoner.sim.world import world_from_scene

    places = load_places_file(str(config_file("semantic_map.yaml")))
    loaded = load_scenario(str(scenario_file(scenario)), places=places)
    model = PlannerModel()
    run = Lockstep(world_from_scene(loaded.scene, fixed_ids=loaded.fixed_ids), model,
                   emulator_for(planner_dir=model.model_dir), SafetyLimits(), places=places)
    run.say(SAY)
    while run.core.executor.current_step_index < SHOW_AT_STEP and run.now_s < LIMIT_S:
        run.advance(STEP_S)
    held_at = tuple(run.world.hand_point()) if run.core.executor.holding else None  # where the pick ended
    return MarkerView.of(run.core, arm_target=held_at)


def _draw(ax, marker) -> None:
    from matplotlib import patches

    colour, (sx, sy, _) = marker.colour, marker.scale
    if marker.shape == markers.CUBE:
        ax.add_patch(patches.Rectangle((marker.x - sx / 2, marker.y - sy / 2), sx, sy, color=colour, zorder=3))
    elif marker.shape in (markers.CYLINDER, markers.SPHERE):
        ax.add_patch(patches.Circle((marker.x, marker.y), sx / 2, color=colour, zorder=2))
    elif marker.shape == markers.ARROW:
        ax.add_patch(patches.FancyArrow(marker.x, marker.y, sx * math.cos(marker.yaw), sx * math.sin(marker.yaw),
                                        width=sy, length_includes_head=True, color=colour, zorder=4))


def _draw_labels(ax, items) -> None:
    """The text markers and the goals' texts, the current step first, spread so that none hides another; a
    label moved off its anchor gets a thin line back to it."""
    texts = sorted((m for m in items if m.shape == markers.TEXT), key=lambda m: m.ns != "step")
    anchors = [(m.x, m.y + (0.5 if m.ns == "step" else 0.25), m.text, 1, m.colour, m.ns == "step") for m in texts]
    anchors += [(m.x, m.y - 0.5, m.text, -1, m.colour, False) for m in items if m.ns == "goals"]  # below, downwards
    for (x, y, text, _, colour, bold), (_, at_y) in zip(anchors, spread_labels([a[:4] for a in anchors])):
        ax.text(x, at_y, text, fontsize=7, ha="center", va="bottom", weight="bold" if bold else "normal",
                color=colour[:3], zorder=5)
        if at_y != y:
            ax.plot([x, x], [y, at_y], color=colour[:3], linewidth=0.4, alpha=0.6, zorder=5)


def render(view: MarkerView, out_path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, ax = pyplot.subplots(figsize=(9, 6.5), dpi=110)
    ax.set_facecolor((0.16, 0.16, 0.18))
    items = reasoner_markers(view)[1:]
    for marker in items:
        _draw(ax, marker)
    _draw_labels(ax, items)
    ax.set_xlim(-6, 8.5)
    ax.set_ylim(-4.5, 4.5)
    ax.set_aspect("equal")
    ax.grid(color=(0.3, 0.3, 0.3), linewidth=0.5)
    ax.set_title(f'reasoner/markers (frame map), "{SAY}", top view', fontsize=10)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    figure.tight_layout()
    figure.savefig(out_path, metadata={"Software": None})
    pyplot.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wafer_reasoner.studies.marker_figure", description=__doc__)
    parser.add_argument("--out", default="docs/rviz_markers.png", help="PNG to write (%(default)s)")
    args = parser.parse_args(argv)
    render(mid_plan_view(), args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
