"""QoS profiles of every wafer_reasoner topic, in one place. Import the constants; do not build QoS inline.

DDS matches a publisher and a subscription only if the publisher offers at least what the subscription asks:
a reliable publisher serves reliable and best-effort subscriptions, a best-effort publisher only best-effort
ones. Hence the rules below: publish reliable; subscribe best effort only to streams whose publisher we
do not control.

=====================  ============================================  ==========================================
profile                settings                                      topics
=====================  ============================================  ==========================================
COMMAND_QOS            reliable, volatile, keep_last 10              speech, goal_pose, gripper/commands,
                                                                     manipulator/target_pose,
                                                                     manipulator/status, say, plan
SENSOR_QOS             reliable, volatile, keep_last 1               perception/objects (JSON scene), odom
VELOCITY_SUB_QOS       best effort, volatile, keep_last 1            cmd_vel (subscriptions only)
CLOCK_QOS              reliable, volatile, keep_last 1               /clock (publisher)
=====================  ============================================  ==========================================

Why SENSOR_QOS is reliable and not the usual best-effort sensor profile: the scene is one JSON message that
carries the whole world (up to 256 KiB), so it is fragmented on the wire and best effort drops the whole
message if one fragment is lost; it is also published at only ~5 Hz, so a loss means a stale scene for
200 ms or more. Only the newest scene or pose matters, so keep_last 1: a slow subscriber gets the latest,
never a backlog. odom uses the same profile (ros_gz_bridge and most drivers publish odom reliable).

CLOCK_QOS is reliable so that both rclpy's TimeSource (which subscribes best effort, depth 1) and reliable
subscribers receive it. VELOCITY_SUB_QOS accepts cmd_vel from reliable and best-effort publishers (teleop
tools differ); a lost message is superseded by the next one or by sim_world's cmd_vel timeout. Publish
cmd_vel with COMMAND_QOS.
"""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy


def _volatile_keep_last(depth: int, reliability: ReliabilityPolicy) -> QoSProfile:
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth, reliability=reliability, durability=DurabilityPolicy.VOLATILE
    )


def command_qos(depth: int = 10) -> QoSProfile:
    """Commands and events: every message counts, none from before we joined."""
    return _volatile_keep_last(depth, ReliabilityPolicy.RELIABLE)


def sensor_qos() -> QoSProfile:
    """State snapshots (scene, odometry): delivered reliably, only the newest kept."""
    return _volatile_keep_last(1, ReliabilityPolicy.RELIABLE)


def velocity_sub_qos() -> QoSProfile:
    """Subscriptions to velocity streams: compatible with reliable and best-effort publishers."""
    return _volatile_keep_last(1, ReliabilityPolicy.BEST_EFFORT)


def clock_qos() -> QoSProfile:
    """Publishing /clock: only the latest time matters."""
    return _volatile_keep_last(1, ReliabilityPolicy.RELIABLE)


COMMAND_QOS = command_qos()
SENSOR_QOS = sensor_qos()
VELOCITY_SUB_QOS = velocity_sub_qos()
CLOCK_QOS = clock_qos()
