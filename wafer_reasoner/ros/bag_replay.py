"""``wafer-reasoner replay BAG``: a recorded session's inputs through today's reasoner core, without DDS, on the
recorded clock; reports where the plans differ from the recorded ones. A recorded field session becomes a
regression test: exit 0 when every plan is the same, 1 when one differs, 2 when the bag or the parameters
cannot be used.

    wafer-reasoner replay BAG [--params-file FILE] [-p NAME:=VALUE ...] [--model-dir DIR]

The core is built as reasoner_node's configure builds it (``runtime/assembly.py``), from the parameters the bag
recorded (else the package defaults), then ``--params-file`` and ``-p`` on top. Messages are converted by the
node's own conversions and fed in recorded order with their recorded stamps as the node clock: perception,
odometry, manipulator replies, emergency stops and transcripts (each planned at once, as if the host took no
time); between messages the executor ticks at ``control_rate_hz``. Plans are compared by plan_id: the plan
text and its status.
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from wafer_reasoner.engine.planner_model import ModelLoadError
from wafer_reasoner.planner.scene import SceneError, parse_perception_json
from wafer_reasoner.ros import conversions
from wafer_reasoner.ros.bags import BagError, read_session
from wafer_reasoner.ros.reasoner_params import defaults, reasoner_from_parameters
from wafer_reasoner.runtime.assembly import ConfigurationError
from wafer_reasoner.runtime.core import PlanRecord


def recorded_plans(messages) -> dict:
    """{plan_id: (utterance, plan, status)} of the recorded reasoner/plan stream."""
    out = {}
    for item in messages:
        if item.topic == "reasoner/plan":
            body = json.loads(item.msg.data)
            if body.get("type") == "plan":
                out[body["plan_id"]] = (body["utterance"], body["plan"], body["status"])
    return out


class Replay:
    """Feeds recorded inputs to a core on the recorded clock and keeps the plan records it publishes."""

    def __init__(self, reasoner, control_rate_hz: float) -> None:
        self.reasoner, self.core = reasoner, reasoner.core
        self.period_s = 1.0 / control_rate_hz
        self.next_tick_s = None
        self.plans: dict = {}

    def run(self, messages) -> dict:
        for item in messages:
            self._advance_to(item.stamp_s)
            self._keep(self._feed(item))
        while (due_s := self.core.next_release_s) is not None:  # answers paced past the end of the recording
            self._keep(self.core.release_due(due_s))
        return self.plans

    def _advance_to(self, now_s: float) -> None:
        if self.next_tick_s is None:
            self.next_tick_s = now_s
        while self.next_tick_s <= now_s:
            self._keep(self.core.tick(self.next_tick_s) + self.core.release_due(self.next_tick_s))
            self.next_tick_s += self.period_s

    def _feed(self, item) -> tuple:
        core, now_s, msg = self.core, item.stamp_s, item.msg
        if item.topic == "speech/transcript":
            out = core.hear_all([msg.data], now_s)
            while (job := core.next_job(now_s)) is not None:
                out += core.planned(job, core.plan(job), now_s)
            return out
        if item.topic == "perception/objects":
            try:
                return core.on_scene(parse_perception_json(msg.data, places=self.reasoner.places, robot=core.pose),
                                     now_s)
            except SceneError:
                return ()  # the node ignored it too
        if item.topic == "odom":
            pose = conversions.pose_from_odometry(msg)
            return () if pose is None else core.on_odom(pose, conversions.base_velocity_from_odometry(msg), now_s)
        if item.topic == "manipulator/status":
            return core.on_reply(msg.data, now_s)
        if item.topic == "emergency_stop":
            return core.emergency_stop(now_s)
        return ()  # an output of the recorded node

    def _keep(self, outputs) -> None:
        for item in outputs:
            if isinstance(item, PlanRecord):
                result = item.result
                self.plans[item.plan_id] = (result.utterance, result.plan, result.status.value)


def differences(recorded: dict, replayed: dict) -> list:
    """One line per plan_id whose plan or status differs (or that only one side has)."""
    lines = []
    for plan_id in sorted(set(recorded) | set(replayed)):
        before, now = recorded.get(plan_id), replayed.get(plan_id)
        if before is None or now is None or before[1:] != now[1:]:
            said = (before or now)[0]
            was = f"{before[1] or '-'} [{before[2]}]" if before else "(not recorded)"
            got = f"{now[1] or '-'} [{now[2]}]" if now else "(not replayed)"
            lines.append(f"plan {plan_id} {said!r}: recorded {was}, replayed {got}")
    return lines


def parameter_values(recorded, args) -> dict:
    """Defaults, then the bag's recorded values, then --params-file, then -p."""
    values = defaults() | {k: v for k, v in (recorded or {}).items() if k in defaults()}
    if args.params_file:
        values |= params_file_values(args.params_file)
    for item in args.param:
        name, _, text = item.partition(":=")
        if name not in values or not _:
            raise ConfigurationError(f"-p {item}: not NAME:=VALUE with a reasoner_node parameter")
        values[name] = type(defaults()[name])(yaml.safe_load(text))
    if args.model_dir:
        values["model_dir"] = args.model_dir
    return values


def params_file_values(path: str) -> dict:
    """The ros__parameters of a reasoner params file (any node key), flattened to full names."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        [block] = [body["ros__parameters"] for body in data.values() if "ros__parameters" in body]
    except (OSError, yaml.YAMLError, ValueError, TypeError, AttributeError) as error:
        raise ConfigurationError(f"--params-file {path}: {error}") from None
    return dict(_flatten(block))


def _flatten(mapping: dict, prefix: str = ""):
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="wafer-reasoner replay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bag", help="a bag folder written by wafer-reasoner record")
    parser.add_argument("--params-file", default="", help="reasoner parameters over the recorded ones")
    parser.add_argument("-p", "--param", action="append", default=[], help="NAME:=VALUE over everything else")
    parser.add_argument("--model-dir", default="", help="planner model folder (default: the parameters')")
    args = parser.parse_args(argv)
    try:
        messages, recorded_parameters = read_session(args.bag)
        values = parameter_values(recorded_parameters, args)
        reasoner = reasoner_from_parameters(values)
    except (BagError, ConfigurationError, ModelLoadError) as error:
        print(f"replay: {error}", file=sys.stderr)
        return 2
    recorded = recorded_plans(messages)
    replayed = Replay(reasoner, values["control_rate_hz"]).run(messages)
    lines = differences(recorded, replayed)
    source = "the recorded parameters" if recorded_parameters else "the default parameters"
    print(f"replayed {len(messages)} messages of {args.bag} with {source}: {len(replayed)} plans, "
          f"{len(recorded)} recorded, {len(lines)} differ")
    for line in lines:
        print(f"  DIFF {line}")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
