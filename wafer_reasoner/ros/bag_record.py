"""``wafer-reasoner record``: a rosbag2 of a reasoner session (its inputs and outputs), written with rosbags.

    wafer-reasoner record [--output BAG] [--storage mcap|sqlite3] [--duration S] [--ros-args -r __ns:=/robot1]
    wafer-reasoner replay BAG                                   # then: the session through today's code

One node (``wafer_bag_recorder``, in the namespace it is given) subscribes to every topic of ``bags.TOPICS``
without deserializing (raw CDR) and writes each message with the node clock's time (simulated time under
``use_sim_time``). Once the reasoner in the same namespace answers on its parameter service, its parameter values
go into the bag's metadata. Ctrl-C (or ``--duration``) closes the bag; a bag that exists is never overwritten.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from rcl_interfaces.srv import GetParameters
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rclpy.utilities import remove_ros_args

from wafer_reasoner.demo.processes import RECORDING_IN_FULL
from wafer_reasoner.ros.bags import NAMESPACE_KEY, PARAMETERS_KEY, STORAGES, TOPICS, BagError, message_class
from wafer_reasoner.ros.node_main import run_node
from wafer_reasoner.ros.reasoner_params import PARAMETERS

NODE_NAME = "wafer_bag_recorder"
PARAMETER_POLL_S = 0.1  # how often it asks until the reasoner's parameter service answers


class BagRecorder(Node):
    """Writes every message of the session's topics into one rosbag2 until destroyed."""

    def __init__(self, output: Path, storage: str, reasoner: str, duration_s: float, **kwargs) -> None:
        super().__init__(NODE_NAME, **kwargs)
        self._writer = open_writer(output, storage)
        self._writer.set_custom_data(NAMESPACE_KEY, self.get_namespace())
        self.count = 0
        typestore = _typestore()
        for topic in TOPICS:
            connection = self._writer.add_connection(self.resolve_topic_name(topic.name), topic.msgtype,
                                                     typestore=typestore)
            self.create_subscription(message_class(topic.msgtype), topic.name, self._writer_of(connection),
                                     topic.qos, raw=True)
        self._parameters = self.create_client(GetParameters, f"{reasoner}/get_parameters")
        self._asked = False
        self._poll = self.create_timer(PARAMETER_POLL_S, self._ask_parameters)
        if duration_s > 0:
            self.create_timer(duration_s, lambda: self.context.try_shutdown())
        self.get_logger().info(f"recording {len(TOPICS)} topics in {self.get_namespace()} to {output} ({storage})")

    def _writer_of(self, connection):
        def write(raw: bytes) -> None:
            self._writer.write(connection, self.get_clock().now().nanoseconds, raw)
            self.count += 1

        return write

    def _ask_parameters(self) -> None:
        if self._asked or not self._parameters.service_is_ready():
            return
        self._asked = True
        future = self._parameters.call_async(GetParameters.Request(names=list(PARAMETERS)))
        future.add_done_callback(self._on_parameters)

    def _on_parameters(self, future) -> None:
        values = {name: parameter_value_to_python(value) for name, value in zip(PARAMETERS, future.result().values)}
        self._writer.set_custom_data(PARAMETERS_KEY, json.dumps(values))
        self.destroy_timer(self._poll)
        self.get_logger().info(RECORDING_IN_FULL)

    def destroy_node(self) -> None:
        # subscriptions first, then the bag: closing writes the metadata in a good deal of Python, and it crashed
        # the process now and then (SIGSEGV inside ruamel.yaml) while the node's DDS readers were still alive
        # after Ctrl-C had shut the context down; with them destroyed first, nothing else runs meanwhile
        super().destroy_node()
        self._writer.close()
        self.get_logger().info(f"closed the bag: {self.count} messages")


def _typestore():
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_KILTED)


def open_writer(output: Path, storage: str):
    """An open rosbags Writer at ``output`` (which must not exist yet)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    if output.exists():
        raise BagError(f"{output} exists; give another --output (a bag is never overwritten)")
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    writer = Writer(output, version=9, storage_plugin=plugin)
    writer.open()
    return writer


def parse_args(argv) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="wafer-reasoner record", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=f"wafer_bag_{time.strftime('%Y%m%d_%H%M%S')}", help="bag folder")
    parser.add_argument("--storage", choices=STORAGES, default="mcap", help="storage format (%(default)s)")
    parser.add_argument("--reasoner", default="reasoner_node", help="the reasoner's node name (%(default)s)")
    parser.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0: Ctrl-C)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(remove_ros_args(["record", *argv])[1:])

    def make():
        return BagRecorder(Path(args.output), args.storage, args.reasoner, args.duration)

    return run_node(make, NODE_NAME, (BagError, ImportError), ["wafer-reasoner", *argv])


if __name__ == "__main__":
    sys.exit(main())
