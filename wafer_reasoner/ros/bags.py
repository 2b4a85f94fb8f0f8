"""The rosbag2 side of record / replay: which topics a session consists of, and reading them back (``rosbags``,
pure Python from PyPI; imported only by these tools, so the node never needs it).

A session bag holds the reasoner's inputs and outputs under their resolved names (``/robot1/odom`` under a
namespace) as raw CDR, stamped with the recorder's node clock (simulated time under use_sim_time), plus custom
metadata: ``wafer_reasoner.namespace`` and, when the reasoner answered, ``wafer_reasoner.parameters`` (its
parameter values as JSON), so a replay runs the core with the parameters the field node had.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path

from wafer_reasoner.ros import qos

NAMESPACE_KEY, PARAMETERS_KEY = "wafer_reasoner.namespace", "wafer_reasoner.parameters"
STORAGES = ("mcap", "sqlite3")


@dataclass(frozen=True)
class SessionTopic:
    name: str  # relative to the namespace
    msgtype: str  # package/msg/Name
    qos: object  # the subscription profile that matches the node's publisher
    is_input: bool


TOPICS = (
    SessionTopic("speech/transcript", "std_msgs/msg/String", qos.SPEECH_QOS, True),
    SessionTopic("emergency_stop", "std_msgs/msg/Empty", qos.EMERGENCY_STOP_QOS, True),
    SessionTopic("perception/objects", "std_msgs/msg/String", qos.SENSOR_QOS, True),
    SessionTopic("odom", "nav_msgs/msg/Odometry", qos.SENSOR_QOS, True),
    SessionTopic("manipulator/status", "std_msgs/msg/String", qos.COMMAND_QOS, True),
    SessionTopic("goal_pose", "geometry_msgs/msg/PoseStamped", qos.COMMAND_QOS, False),
    SessionTopic("cmd_vel", "geometry_msgs/msg/Twist", qos.VELOCITY_SUB_QOS, False),
    SessionTopic("manipulator/target_pose", "geometry_msgs/msg/PoseStamped", qos.COMMAND_QOS, False),
    SessionTopic("gripper/commands", "std_msgs/msg/Float64MultiArray", qos.COMMAND_QOS, False),
    SessionTopic("say", "std_msgs/msg/String", qos.COMMAND_QOS, False),
    SessionTopic("reasoner/plan", "std_msgs/msg/String", qos.PLAN_QOS, False),
)


class BagError(RuntimeError):
    """A bag that cannot be written or read; the message says which and why."""


def message_class(msgtype: str):
    """The rclpy message class of ``package/msg/Name``."""
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def relative_name(topic: str, namespace: str) -> str:
    """``/robot1/odom`` -> ``odom`` in namespace ``/robot1`` (``/odom`` -> ``odom`` at the root)."""
    prefix = namespace.rstrip("/") + "/"
    return topic[len(prefix):] if topic.startswith(prefix) else topic.lstrip("/")


@dataclass(frozen=True)
class BagMessage:
    topic: str  # relative name
    stamp_s: float
    msg: object  # the deserialized rclpy message


def read_session(path) -> tuple:
    """(messages in time order, recorded parameter values or None) of a session bag; BagError when unreadable."""
    from rclpy.serialization import deserialize_message
    from rosbags.rosbag2 import Reader

    if not Path(path).is_dir():
        raise BagError(f"{path}: no such bag folder")
    known = {topic.name: topic for topic in TOPICS}
    try:
        with Reader(path) as reader:
            custom = reader.storage.metadata.custom or {}
            namespace = custom.get(NAMESPACE_KEY, "/")
            connections = [c for c in reader.connections if relative_name(c.topic, namespace) in known]
            messages = [BagMessage(relative_name(c.topic, namespace), stamp_ns * 1e-9,
                                   deserialize_message(raw, message_class(c.msgtype)))
                        for c, stamp_ns, raw in reader.messages(connections=connections)]
    except (OSError, ValueError, KeyError) as error:
        raise BagError(f"{path}: cannot read the bag: {error}") from None
    except Exception as error:  # noqa: BLE001 - rosbags raises its own error types
        raise BagError(f"{path}: cannot read the bag: {type(error).__name__}: {error}") from None
    parameters = json.loads(custom[PARAMETERS_KEY]) if PARAMETERS_KEY in custom else None
    return sorted(messages, key=lambda m: m.stamp_s), parameters
