"""Launch reasoner_node alone (the robot, Gazebo or sim_world provide the rest).

    ros2 launch wafer_reasoner reasoner.launch.py
    ros2 launch wafer_reasoner reasoner.launch.py params_file:=/path/my_reasoner.yaml use_sim_time:=true
    ros2 launch wafer_reasoner reasoner.launch.py namespace:=robot1 cmd_vel_topic:=/diff_drive/cmd_vel
    ros2 launch wafer_reasoner reasoner.launch.py backend:=openai base_url:=http://127.0.0.1:8080/v1

Arguments (``ros2 launch wafer_reasoner reasoner.launch.py --show-args``):

* ``params_file``: the node's parameters; default ``share/wafer_reasoner/config/reasoner.yaml``. Model folder,
  semantic map, safety limits and executor settings live there (README, section Parameters). Keyed ``/**``, so
  it applies under any namespace. A file that does not exist makes launch refuse to start.
* ``use_sim_time``: take time from ``/clock`` (Gazebo, or sim_world with ``publish_clock:=true``); ``true`` or
  ``True``.
* ``namespace``: push the node and its relative topics into a namespace (``/diagnostics`` stays global).
* ``autostart``: configure and activate the managed (lifecycle) node at start (default true); false leaves it
  unconfigured for a lifecycle manager or ``ros2 lifecycle set``.
* ``log_level``: ``debug``, ``info``, ``warn``, ``error`` or ``fatal``.
* ``respawn``: start the node again when it dies (default true, after RESPAWN_DELAY_S). A restarted node
  starts idle: it never replays a goal or an utterance from before (volatile QoS everywhere; the README's
  "Restart" paragraph says why).
* ``backend`` and ``base_url``: the planner backend, ``embedded`` (the in-process planner) or ``openai`` (an
  OpenAI-compatible inference server at ``base_url``, e.g. ``http://127.0.0.1:8080/v1``). Like ``use_sim_time``
  they override the params file; the other ``backend_*`` settings (model, API key variable, timeout, fallback)
  stay in it (README, "A remote planner").
* ``emergency_stop_relay``: also start ``emergency_stop_relay`` (default true), a process of its own that
  publishes a zero ``cmd_vel`` for every ``emergency_stop`` (README, "Bursts and the emergency stop");
  ``relay_params_file`` its parameters (default ``share/wafer_reasoner/config/emergency_stop_relay.yaml``).
* ``fastdds_profile``: the Fast DDS profile file the nodes start with (FASTDDS_DEFAULT_PROFILES_FILE); default:
  the one already in the environment, else ``share/wafer_reasoner/config/fastdds_profile.xml`` (reliable writers
  announce unacknowledged samples every 20 ms instead of every 3 s, so a transcript lost during a burst is sent
  again in time for the stop behind it; README, "Bursts and the emergency stop"). Empty: leave the environment
  as it is. Only Fast DDS (the default RMW) reads it.
* ``enclave`` and ``relay_enclave``: the SROS2 enclaves (defaults ``/wafer_reasoner/reasoner_node`` and
  ``/wafer_reasoner/emergency_stop_relay``); used only when
  ``ROS_SECURITY_ENABLE=true`` and ``ROS_SECURITY_KEYSTORE`` are set (README, Security).

Remappings. The node uses relative topic names; the ``*_topic`` arguments remap the ones that most often differ
between robots (their defaults are the node's own names, i.e. no change):

=====================  ==========================  ====================================================
argument               node topic                  typical target
=====================  ==========================  ====================================================
speech_topic           speech/transcript           your speech-to-text node's output
perception_topic       perception/objects          your detector's JSON scene (README, Topics)
odom_topic             odom                        ``/odom``, ``/diff_drive_controller/odom``
cmd_vel_topic          cmd_vel                     ``/cmd_vel``, ros_gz_bridge's ``/model/<robot>/cmd_vel``
goal_pose_topic        goal_pose                   Nav2's ``/goal_pose``
=====================  ==========================  ====================================================

Other topics (``manipulator/target_pose``, ``manipulator/status``, ``gripper/commands``, ``say``,
``reasoner/plan``) keep their names; remap them in a launch file of your own with
``remappings=[("gripper/commands", "/gripper_controller/commands")]``.
"""

# noqa on the next line: ruff takes `launch` for this repository's launch/ folder (first party)
from launch import LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument, OpaqueFunction, SetEnvironmentVariable
from launch.conditions import IfCondition
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, NotEqualsSubstitution, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from wafer_reasoner.ros.launch_args import BOOL_CHOICES, require_params_files

PACKAGE = "wafer_reasoner"
RESPAWN_DELAY_S = 2.0  # seconds between the node dying and its restart
PROFILE_VARIABLE = "FASTDDS_DEFAULT_PROFILES_FILE"  # read by Fast DDS when a process makes its first participant

# (launch argument, the node's topic, description)
TOPIC_ARGUMENTS = (
    ("speech_topic", "speech/transcript", "Topic of the utterances (std_msgs/String), one per message."),
    ("perception_topic", "perception/objects", "Topic of the JSON scene (std_msgs/String)."),
    ("odom_topic", "odom", "Odometry of the robot base (nav_msgs/Odometry), in the scene frame."),
    ("cmd_vel_topic", "cmd_vel", "Velocity commands for the base (geometry_msgs/Twist)."),
    ("goal_pose_topic", "goal_pose", "Navigation goals (geometry_msgs/PoseStamped), e.g. Nav2's /goal_pose."),
)


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), "config", "reasoner.yaml"]),
            description="reasoner_node parameters file (model_dir, semantic_map_file, limits.*, executor.*, ...).",
        ),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value="false",
            choices=list(BOOL_CHOICES),
            description="Use /clock (simulation) instead of the system clock.",
        ),
        DeclareLaunchArgument("namespace", default_value="", description="Namespace of the node and its topics."),
        DeclareLaunchArgument(
            "autostart", default_value="true", choices=list(BOOL_CHOICES),
            description="Configure and activate the lifecycle node at start; false: wait for a lifecycle manager.",
        ),
        DeclareLaunchArgument(
            "log_level",
            default_value="info",
            choices=["debug", "info", "warn", "error", "fatal"],
            description="Logging level of reasoner_node.",
        ),
        DeclareLaunchArgument(
            "respawn", default_value="true", choices=list(BOOL_CHOICES),
            description="Start reasoner_node again when it dies; it starts idle and never replays an old goal.",
        ),
        DeclareLaunchArgument(
            "backend", default_value="embedded", choices=["embedded", "openai"],
            description="Planner backend: embedded (in-process) or openai (an OpenAI-compatible server at base_url).",
        ),
        DeclareLaunchArgument(
            "base_url", default_value="http://127.0.0.1:8080/v1",
            description="backend openai: the inference server's API root (other backend_* settings: params_file).",
        ),
        DeclareLaunchArgument(
            "emergency_stop_relay", default_value="true", choices=list(BOOL_CHOICES),
            description="Also start emergency_stop_relay: a process of its own that zeroes cmd_vel on every "
            "emergency_stop, whatever the reasoner is doing.",
        ),
        DeclareLaunchArgument(
            "relay_params_file",
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), "config", "emergency_stop_relay.yaml"]),
            description="emergency_stop_relay parameters file (its real-time priority and nice value).",
        ),
        DeclareLaunchArgument(
            "relay_enclave", default_value="/wafer_reasoner/emergency_stop_relay",
            description="SROS2 enclave of emergency_stop_relay (it may publish cmd_vel and hear emergency_stop only).",
        ),
        DeclareLaunchArgument(
            "fastdds_profile",
            default_value=EnvironmentVariable(
                PROFILE_VARIABLE,
                default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), "config", "fastdds_profile.xml"]),
            ),
            description="Fast DDS profile file for the nodes (heartbeat every 20 ms: a transcript lost in a burst "
            "is resent in time for the stop behind it); default: the environment's, else the package's; empty: none.",
        ),
        DeclareLaunchArgument(
            "enclave", default_value="/wafer_reasoner/reasoner_node",
            description="SROS2 enclave of the node (used when ROS_SECURITY_ENABLE=true; scripts/create_keystore.py).",
        ),
    ]
    arguments += [
        DeclareLaunchArgument(name, default_value=topic, description=description)
        for name, topic, description in TOPIC_ARGUMENTS
    ]
    node = Node(
        package=PACKAGE,
        executable="reasoner_node",
        name="reasoner_node",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        emulate_tty=True,
        parameters=[
            LaunchConfiguration("params_file"),
            {
                "use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool),
                "autostart": ParameterValue(LaunchConfiguration("autostart"), value_type=bool),
                "backend": LaunchConfiguration("backend"),
                "base_url": LaunchConfiguration("base_url"),
            },
        ],
        remappings=[(topic, LaunchConfiguration(name)) for name, topic, _ in TOPIC_ARGUMENTS],
        ros_arguments=["--log-level", LaunchConfiguration("log_level"), "--enclave", LaunchConfiguration("enclave")],
        respawn=LaunchConfiguration("respawn"),  # launch evaluates it as a bool
        respawn_delay=RESPAWN_DELAY_S,
    )
    # the emergency stop's own process: same namespace, cmd_vel remapped as the reasoner's is
    relay = Node(
        package=PACKAGE,
        executable="emergency_stop_relay",
        name="emergency_stop_relay",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        emulate_tty=True,
        parameters=[LaunchConfiguration("relay_params_file"),
                    {"use_sim_time": ParameterValue(LaunchConfiguration("use_sim_time"), value_type=bool)}],
        remappings=[("cmd_vel", LaunchConfiguration("cmd_vel_topic"))],
        ros_arguments=["--log-level", LaunchConfiguration("log_level"), "--enclave",
                       LaunchConfiguration("relay_enclave")],
        respawn=LaunchConfiguration("respawn"),
        respawn_delay=RESPAWN_DELAY_S,
        condition=IfCondition(LaunchConfiguration("emergency_stop_relay")),
    )
    # before the nodes: refuse to start on a missing parameters file
    check = OpaqueFunction(function=require_params_files, args=["params_file", "relay_params_file"])
    profile = SetEnvironmentVariable(
        PROFILE_VARIABLE,
        LaunchConfiguration("fastdds_profile"),
        condition=IfCondition(NotEqualsSubstitution(LaunchConfiguration("fastdds_profile"), "")),
    )
    return LaunchDescription([*arguments, check, profile, node, relay])
