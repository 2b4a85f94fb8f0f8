"""The demo world: sim_world (the stand-in for Gazebo) running a scenario, and reasoner_node driving it.

    ros2 launch wafer_reasoner demo.launch.py
    ros2 launch wafer_reasoner demo.launch.py scenario:=visit_places use_sim_time:=true real_time_factor:=4.0
    ros2 launch wafer_reasoner demo.launch.py namespace:=robot1 record:=true
    ros2 topic pub --once speech/transcript std_msgs/msg/String "{data: 'bring me the red cup'}"

Then talk to it on ``speech/transcript`` and watch ``reasoner/plan`` and ``say``; ``make demo`` (python -m
wafer_reasoner.demo) runs the same two nodes plus the scripted demo_operator without ``ros2 launch``.

Arguments (``--show-args``):

* ``scenario``: a scenario name in ``share/wafer_reasoner/config/scenarios/`` or a path (overrides the
  ``scenario`` of ``sim_params_file``).
* ``params_file`` / ``sim_params_file``: parameters of reasoner_node / sim_world, defaulting to
  ``share/wafer_reasoner/config/reasoner.yaml`` and ``sim_world.yaml`` (keyed ``/**``: any namespace). A file
  that does not exist makes launch refuse to start.
* ``namespace``: both nodes and all their relative topics in it (``/robot1/odom``, ``/robot1/goal_pose``, ...);
  ``/clock`` and ``/diagnostics`` stay global, so run one simulated clock per ROS domain.
* ``use_sim_time``: true makes sim_world publish ``/clock`` (``publish_clock``) and own time, and reasoner_node
  follow it; ``real_time_factor`` then sets how fast simulated time runs.
* ``log_level``: reasoner_node's logging level.
* ``record`` / ``bag``: true records the reasoner's inputs and outputs into the rosbag2 folder ``bag``
  (``wafer-reasoner record``; replay it with ``wafer-reasoner replay BAG``).

Remappings: none needed. Both nodes use the same relative names (goal_pose, cmd_vel, odom, perception/objects,
manipulator/target_pose, manipulator/status, gripper/commands), so they connect as they are; reasoner.launch.py's
``*_topic`` arguments stay at their defaults here.
"""

# noqa on the next line: ruff takes `launch` for this repository's launch/ folder (first party)
from launch import LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from wafer_reasoner.ros.launch_args import BOOL_CHOICES, require_params_files

PACKAGE = "wafer_reasoner"


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare(PACKAGE)
    use_sim_time = LaunchConfiguration("use_sim_time")
    arguments = [
        DeclareLaunchArgument(
            "scenario",
            default_value="bring_red_cup",
            description="sim_world scenario: a name in share/wafer_reasoner/config/scenarios/ or a YAML path.",
        ),
        DeclareLaunchArgument(
            "params_file",
            default_value=PathJoinSubstitution([share, "config", "reasoner.yaml"]),
            description="reasoner_node parameters file.",
        ),
        DeclareLaunchArgument(
            "sim_params_file",
            default_value=PathJoinSubstitution([share, "config", "sim_world.yaml"]),
            description="sim_world parameters file.",
        ),
        DeclareLaunchArgument("namespace", default_value="", description="Namespace of both nodes and their topics."),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value="false",
            choices=list(BOOL_CHOICES),
            description="true: sim_world publishes /clock and reasoner_node uses it; false: both use the system clock.",
        ),
        DeclareLaunchArgument(
            "real_time_factor",
            default_value="1.0",
            description="Simulated seconds per real second (only with use_sim_time:=true).",
        ),
        DeclareLaunchArgument(
            "log_level",
            default_value="info",
            choices=["debug", "info", "warn", "error", "fatal"],
            description="Logging level of reasoner_node.",
        ),
        DeclareLaunchArgument(
            "record", default_value="false", choices=list(BOOL_CHOICES),
            description="Record the reasoner's inputs and outputs into a rosbag2 (wafer-reasoner record).",
        ),
        DeclareLaunchArgument("bag", default_value="wafer_demo_bag", description="Folder of the recorded bag."),
    ]
    sim_world = Node(
        package=PACKAGE,
        executable="sim_world",
        name="sim_world",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        emulate_tty=True,
        parameters=[
            LaunchConfiguration("sim_params_file"),
            {
                "scenario": LaunchConfiguration("scenario"),
                "publish_clock": ParameterValue(use_sim_time, value_type=bool),
                "real_time_factor": ParameterValue(LaunchConfiguration("real_time_factor"), value_type=float),
            },
        ],
    )
    reasoner = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, "launch", "reasoner.launch.py"])),
        launch_arguments={
            "params_file": LaunchConfiguration("params_file"),
            "use_sim_time": use_sim_time,
            "log_level": LaunchConfiguration("log_level"),
            "namespace": LaunchConfiguration("namespace"),
        }.items(),
    )
    recorder = Node(
        package=PACKAGE,
        executable="wafer-reasoner",
        name="wafer_bag_recorder",
        namespace=LaunchConfiguration("namespace"),
        output="screen",
        arguments=["record", "--output", LaunchConfiguration("bag")],
        parameters=[{"use_sim_time": ParameterValue(use_sim_time, value_type=bool)}],
        condition=IfCondition(LaunchConfiguration("record")),
    )
    check = OpaqueFunction(function=require_params_files, args=["params_file", "sim_params_file"])
    return LaunchDescription([*arguments, check, sim_world, reasoner, recorder])
