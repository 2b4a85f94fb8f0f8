"""QoS profiles of every wafer_reasoner topic, in one place. Import the constants; do not build QoS inline.

DDS matches a publisher and a subscription only if the publisher offers at least what the subscription asks:
a reliable publisher serves reliable and best-effort subscriptions, a best-effort publisher only best-effort
ones. Hence the rules below: publish reliable; subscribe best effort only to streams whose publisher we
do not control.

=====================  ============================================  ==========================================
profile                settings                                      topics
=====================  ============================================  ==========================================
COMMAND_QOS            reliable, volatile, keep_last 10              goal_pose, gripper/commands,
                                                                     manipulator/target_pose,
                                                                     manipulator/status, say
SPEECH_QOS             reliable, volatile, keep_last 1024            speech/transcript (both ends)
PLAN_QOS               reliable, volatile, keep_last 4096            reasoner/plan (both ends)
EMERGENCY_STOP_QOS     reliable, volatile, keep_last 1               emergency_stop
SENSOR_QOS             reliable, volatile, keep_last 1               perception/objects (JSON scene), odom
VELOCITY_SUB_QOS       best effort, volatile, keep_last 1            cmd_vel (subscriptions only)
CLOCK_QOS              reliable, volatile, keep_last 1               /clock (publisher)
MARKERS_QOS            reliable, volatile, keep_last 1               reasoner/markers (RViz's default matches)
=====================  ============================================  ==========================================

Why SPEECH_QOS is deep: every utterance must get a plan record, and a burst (a stuck recogniser, a replayed
log) can put hundreds on the wire in milliseconds. With keep_last 10 a reliable reader that has not taken the
first ten yet loses the rest without a trace; 1024 covers a burst of 1000 while the subscription callback,
which only queues the utterance, catches up. The node answers what it cannot plan in time with "busy" records
(runtime/outbox.py), so depth never turns into latency. Publishers of transcripts should use it too: a
reliable writer keeps only its own depth for readers that lag. Volatile: a node that (re)starts never hears
what was said before it ran.

PLAN_QOS is deeper still for the same reason on the way out: a burst of 1000 utterances is answered by 1000
plan records within a second or two, and each one that was planned and run adds executor events (started,
preempted) to the same stream; a reader that lags behind a keep_last 10 writer would lose all but ten. 4096
messages of a few hundred bytes hold a burst of 1000 with three events each.

EMERGENCY_STOP_QOS: reliable, and only the latest matters; volatile, so a restarted node is not stopped by an
old message.

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

BURST_DEPTH = 1024  # transcripts: a burst of 1000 and then some
PLAN_DEPTH = 4096  # the plan stream: a record and up to three events per utterance of such a burst


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


def speech_qos() -> QoSProfile:
    """Transcripts: every one counts, bursts included."""
    return _volatile_keep_last(BURST_DEPTH, ReliabilityPolicy.RELIABLE)


def plan_qos() -> QoSProfile:
    """The plan stream: one record per utterance and its events, bursts included."""
    return _volatile_keep_last(PLAN_DEPTH, ReliabilityPolicy.RELIABLE)


def emergency_stop_qos() -> QoSProfile:
    """The emergency stop: delivered reliably, only the latest kept."""
    return _volatile_keep_last(1, ReliabilityPolicy.RELIABLE)


def clock_qos() -> QoSProfile:
    """Publishing /clock: only the latest time matters."""
    return _volatile_keep_last(1, ReliabilityPolicy.RELIABLE)


def markers_qos() -> QoSProfile:
    """The RViz markers: the whole picture in each message, so only the newest matters."""
    return _volatile_keep_last(1, ReliabilityPolicy.RELIABLE)


COMMAND_QOS = command_qos()
SPEECH_QOS = speech_qos()
PLAN_QOS = plan_qos()
EMERGENCY_STOP_QOS = emergency_stop_qos()
SENSOR_QOS = sensor_qos()
VELOCITY_SUB_QOS = velocity_sub_qos()
CLOCK_QOS = clock_qos()
MARKERS_QOS = markers_qos()
