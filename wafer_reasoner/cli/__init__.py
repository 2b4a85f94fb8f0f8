"""``wafer-reasoner``: the reasoner from the command line, without ROS.

    wafer-reasoner plan --scene SCENE.yaml --say "bring me the red cup"
    wafer-reasoner plan --batch CASES.jsonl [--out RESULTS.jsonl]
    wafer-reasoner eval [--count 200]
    wafer-reasoner emulate [--validate | --list | ...]
    wafer-reasoner record [--output BAG] [--ros-args ...]     # a rosbag2 of a reasoner session (needs rosbags)
    wafer-reasoner replay BAG                                 # the session's inputs through today's core
"""

from __future__ import annotations

import argparse


def main(argv=None) -> int:
    from wafer_reasoner.cli import plan

    parser = argparse.ArgumentParser(prog="wafer-reasoner", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    plan.add_parser(commands)
    # prefix_chars="+": every "-..." argument goes to the sub-tool's own parser (REMAINDER alone stops at options)
    for name, help_text in (("eval", "accuracy of the planner model on the evaluation sets"),
                            ("emulate", "emulated time on wafer-scale or GPU hardware"),
                            ("record", "record a reasoner session into a rosbag2 (ROS 2, rosbags)"),
                            ("replay", "replay a recorded session through the reasoner core, without DDS")):
        commands.add_parser(name, help=help_text, prefix_chars="+").add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "eval":
        from wafer_reasoner.training.evaluate import main as evaluate_main

        return evaluate_main(args.rest)
    if args.command == "record":
        from wafer_reasoner.ros.bag_record import main as record_main

        return record_main(args.rest)
    if args.command == "replay":
        from wafer_reasoner.ros.bag_replay import main as replay_main

        return replay_main(args.rest)
    if args.command == "emulate":
        from wafer_reasoner.cli.emulate import main as emulate_main

        return emulate_main(args.rest)
    return plan.command_plan(args)


if __name__ == "__main__":
    raise SystemExit(main())
