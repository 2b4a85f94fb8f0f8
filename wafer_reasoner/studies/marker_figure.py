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
    elif marker.shape == markers.TEXT:
        weight = "bold" if marker.ns == "step" else "normal"
        ax.text(marker.x, marker.y + (0.5 if marker.ns == "step" else 0.25), marker.text, fontsize=7,
                ha="center", weight=weight, color=colour[:3], zorder=5)


def render(view: MarkerView, out_path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, ax = pyplot.subplots(figsize=(9, 6.5), dpi=110)
    ax.set_facecolor((0.16, 0.16, 0.18))
    for marker in reasoner_markers(view)[1:]:
        _draw(ax, marker)
    for item in (m for m in reasoner_markers(view) if m.ns == "goals"):
        ax.text(item.x, item.y - 0.35, item.text, fontsize=7, color=item.colour[:3], ha="center")
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
