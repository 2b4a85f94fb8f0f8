"""launch/reasoner.launch.py and launch/demo.launch.py.

The structural checks read the files' syntax tree, so they run everywhere. The checks that import the files need
ROS 2's ``launch`` and ``launch_ros``, which are not on PyPI (the PyPI project named ``launch`` is unrelated):
they are skipped here and run on a ROS 2 install (colcon test).
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import load_script

REPO = Path(__file__).resolve().parent.parent
LAUNCH_DIR = REPO / "launch"
LAUNCH_FILES = {"reasoner": LAUNCH_DIR / "reasoner.launch.py", "demo": LAUNCH_DIR / "demo.launch.py"}
PACKAGE = "wafer_reasoner"
EXPECTED_ARGUMENTS = {
    "reasoner": {
        "params_file",
        "use_sim_time",
        "namespace",
        "log_level",
        "speech_topic",
        "perception_topic",
        "odom_topic",
        "cmd_vel_topic",
        "goal_pose_topic",
        "backend",
        "base_url",
        "autostart",
        "fastdds_profile",
    },
    "demo": {"scenario", "params_file", "sim_params_file", "use_sim_time", "real_time_factor", "log_level",
             "namespace", "record", "bag"},
}
# demo includes reasoner.launch.py; its wafer-reasoner is the bag recorder (record:=true)
EXPECTED_EXECUTABLES = {"reasoner": {"reasoner_node", "emergency_stop_relay"}, "demo": {"sim_world", "wafer-reasoner"}}
PARAMS_ARGUMENTS = {"reasoner": ["params_file", "relay_params_file"], "demo": ["params_file", "sim_params_file"]}


def _console_scripts() -> set:
    tree = ast.parse((REPO / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "CONSOLE_SCRIPTS" for t in node.targets):
            return set(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no CONSOLE_SCRIPTS")


def _calls(tree, name: str) -> list:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == name
    ]


# ---- without launch: the syntax tree --------------------------------------------------------------------------


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_every_launch_argument_is_declared_with_a_description(which):
    tree = ast.parse(LAUNCH_FILES[which].read_text())
    declared = _calls(tree, "DeclareLaunchArgument")
    assert declared
    for call in declared:
        keywords = {k.arg: k.value for k in call.keywords}
        assert "description" in keywords, ast.unparse(call)
        assert "default_value" in keywords, ast.unparse(call)
        if isinstance(keywords["description"], ast.Constant):
            assert keywords["description"].value.strip()
    names = {call.args[0].value for call in declared if call.args and isinstance(call.args[0], ast.Constant)}
    assert {"params_file", "use_sim_time"} <= names


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_params_files_default_to_the_package_share_directory(which):
    text = LAUNCH_FILES[which].read_text()
    share = r"(FindPackageShare\(PACKAGE\)|share)"
    assert re.search(rf"PathJoinSubstitution\(\[{share}, \"config\", \"reasoner.yaml\"\]", text)
    assert 'PACKAGE = "wafer_reasoner"' in text
    assert "get_package_share_directory" in text or "FindPackageShare(PACKAGE)" in text


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_nodes_run_executables_that_setup_py_installs(which):
    tree = ast.parse(LAUNCH_FILES[which].read_text())
    executables = set()
    for call in _calls(tree, "Node"):
        keywords = {k.arg: k.value for k in call.keywords}
        assert ast.unparse(keywords["package"]) == "PACKAGE"
        executables.add(keywords["executable"].value)
    assert executables == EXPECTED_EXECUTABLES[which]
    assert executables <= _console_scripts()


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_params_files_are_checked_before_any_node_starts(which):
    """launch_ros only warns about a missing parameters file and starts the node on its defaults: the launch
    description checks every params file first (an OpaqueFunction ahead of the nodes)."""
    tree = ast.parse(LAUNCH_FILES[which].read_text())
    [returned] = [node.value for node in ast.walk(tree) if isinstance(node, ast.Return)
                  and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "LaunchDescription"]
    entities = [ast.unparse(element) for element in returned.args[0].elts]
    [check] = _calls(tree, "OpaqueFunction")
    keywords = {k.arg: k.value for k in check.keywords}
    assert ast.unparse(keywords["function"]) == "require_params_files"
    assert ast.literal_eval(keywords["args"]) == PARAMS_ARGUMENTS[which]
    assert entities.index("check") < min(entities.index(name) for name in ("node", "sim_world") if name in entities)


def test_reasoner_launch_sets_the_fastdds_profile_before_its_nodes_start():
    """The profile is an environment variable read when a process makes its first DDS participant: it must be set
    ahead of the nodes, and only when the argument is not empty."""
    tree = ast.parse(LAUNCH_FILES["reasoner"].read_text())
    [returned] = [node.value for node in ast.walk(tree) if isinstance(node, ast.Return)
                  and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "LaunchDescription"]
    entities = [ast.unparse(element) for element in returned.args[0].elts]
    assert entities.index("profile") < min(entities.index("node"), entities.index("relay"))
    [setter] = _calls(tree, "SetEnvironmentVariable")
    assert ast.unparse(setter.args[0]) == "PROFILE_VARIABLE"
    assert ast.unparse(setter.args[1]) == "LaunchConfiguration('fastdds_profile')"
    assert "NotEqualsSubstitution(LaunchConfiguration('fastdds_profile'), '')" in ast.unparse(setter)
    assert 'PROFILE_VARIABLE = "FASTDDS_DEFAULT_PROFILES_FILE"' in LAUNCH_FILES["reasoner"].read_text()


def _participant_stderr(profile: Path) -> str:
    """stderr of a process that makes a node and a reliable publisher with ``profile`` as Fast DDS's profile."""
    code = ("import rclpy; from std_msgs.msg import String; rclpy.init(); n = rclpy.create_node('profile_check'); "
            "n.create_publisher(String, 'profile_check', 10); n.destroy_node(); rclpy.shutdown(); print('made')")
    from wafer_reasoner.demo.processes import reserve_domain_id, ros_env

    lease = reserve_domain_id()
    try:
        env = {**ros_env(lease.domain_id), "FASTDDS_DEFAULT_PROFILES_FILE": str(profile),
               "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    finally:
        lease.release()
    assert out.stdout.strip() == "made", out.stderr
    return out.stderr


def test_the_shipped_fastdds_profile_is_read_without_errors(tmp_path):
    pytest.importorskip("rclpy")
    profile = REPO / "config" / "fastdds_profile.xml"
    assert "XMLPARSER" not in _participant_stderr(profile)
    broken = tmp_path / "broken.xml"  # the same check fails on a profile Fast DDS cannot read
    broken.write_text(profile.read_text().replace("heartbeat_period>", "heartbeat_periode>"))
    assert "XMLPARSER" in _participant_stderr(broken)


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_boolean_arguments_take_true_and_false_in_either_case(which):
    tree = ast.parse(LAUNCH_FILES[which].read_text())
    for call in _calls(tree, "DeclareLaunchArgument"):
        keywords = {k.arg: k.value for k in call.keywords}
        if "choices" in keywords and ast.unparse(keywords["default_value"]) in ("'true'", "'false'"):
            assert ast.unparse(keywords["choices"]) == "list(BOOL_CHOICES)", ast.unparse(call)
    from wafer_reasoner.ros.launch_args import BOOL_CHOICES

    assert {"true", "True", "false", "False"} == set(BOOL_CHOICES)


def test_the_demo_puts_both_nodes_in_the_namespace():
    tree = ast.parse(LAUNCH_FILES["demo"].read_text())
    for call in _calls(tree, "Node"):
        keywords = {k.arg: ast.unparse(k.value) for k in call.keywords}
        assert keywords.get("namespace") == "LaunchConfiguration('namespace')", keywords
    [include] = _calls(tree, "IncludeLaunchDescription")
    assert "'namespace': LaunchConfiguration('namespace')" in ast.unparse(include)


class _Context:
    def __init__(self, **values):
        self.launch_configurations = values


def test_a_missing_params_file_is_refused_naming_the_argument_and_the_file(tmp_path):
    from wafer_reasoner.ros.launch_args import LaunchArgumentError, require_params_files

    good = tmp_path / "tuned.yaml"
    good.write_text("/**:\n  ros__parameters: {engine_candidates: 3}\n")
    assert require_params_files(_Context(params_file=str(good)), "params_file") == []
    for bad, why in (("/nonexistent.yaml", "no such file"), (str(tmp_path), "not a file"), ("", "no file given")):
        with pytest.raises(LaunchArgumentError) as error:
            require_params_files(_Context(params_file=str(good), sim_params_file=bad), "params_file", "sim_params_file")
        assert f"sim_params_file:={bad!r}: {why}" in str(error.value)


def test_launch_files_and_params_are_installed_by_setup_py():
    setup = (REPO / "setup.py").read_text()
    assert 'glob("launch/*.launch.py")' in setup and 'glob("config/*.yaml")' in setup
    assert 'glob("config/*.xml")' in setup  # the Fast DDS profile reasoner.launch.py points at
    assert (REPO / "config" / "reasoner.yaml").is_file() and (REPO / "config" / "sim_world.yaml").is_file()


# ---- with ROS 2 launch: import and inspect ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ros_launch():
    pytest.importorskip("launch_ros", reason="ROS 2 launch_ros is not installed (it is not on PyPI)")
    launch = pytest.importorskip("launch", reason="ROS 2 launch is not installed (it is not on PyPI)")
    if not hasattr(launch, "LaunchDescription"):
        pytest.skip("the 'launch' module here is not ROS 2's launch")
    return launch


def _load(which: str):
    return load_script(LAUNCH_FILES[which], f"{which}_launch").generate_launch_description()


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_launch_description_declares_the_documented_arguments(ros_launch, which):
    description = _load(which)
    assert isinstance(description, ros_launch.LaunchDescription)
    arguments = {argument.name: argument for argument in description.get_launch_arguments()}
    assert set(arguments) >= EXPECTED_ARGUMENTS[which]
    for name, argument in arguments.items():
        assert argument.description and argument.description != "no description given", name
    assert set(arguments["use_sim_time"].choices) == {"true", "false", "True", "False"}


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_launch_description_runs_our_executables(ros_launch, which):
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    from launch_ros.actions import Node

    context = ros_launch.LaunchContext()

    def text(value) -> str:  # Node keeps package/executable as given: text or substitutions
        return perform_substitutions(context, normalize_to_list_of_substitutions(value))

    nodes = [entity for entity in _load(which).entities if isinstance(entity, Node)]
    assert {text(node.node_package) for node in nodes} == {PACKAGE}
    executables = {text(node.node_executable) for node in nodes}
    assert executables == EXPECTED_EXECUTABLES[which]
    assert executables <= _console_scripts()


def test_demo_includes_the_reasoner_launch_file(ros_launch):
    from launch.actions import IncludeLaunchDescription

    includes = [entity for entity in _load("demo").entities if isinstance(entity, IncludeLaunchDescription)]
    assert len(includes) == 1
    forwarded = {perform_text(name) for name, _ in includes[0].launch_arguments}
    assert forwarded >= {"params_file", "use_sim_time"}


def test_reasoner_topic_arguments_default_to_the_node_topic_names(ros_launch):
    from launch.utilities import perform_substitutions

    context = ros_launch.LaunchContext()
    arguments = {argument.name: argument for argument in _load("reasoner").get_launch_arguments()}
    topics = [name for name in arguments if name.endswith("_topic")]
    defaults = {name: perform_substitutions(context, arguments[name].default_value) for name in topics}
    assert defaults == {
        "speech_topic": "speech/transcript",
        "perception_topic": "perception/objects",
        "odom_topic": "odom",
        "cmd_vel_topic": "cmd_vel",
        "goal_pose_topic": "goal_pose",
    }


@pytest.mark.parametrize("which", sorted(LAUNCH_FILES))
def test_launching_with_a_missing_params_file_fails_before_any_process_starts(ros_launch, which):
    from launch.actions import ExecuteProcess

    service = ros_launch.LaunchService()
    service.include_launch_description(ros_launch.actions.IncludeLaunchDescription(
        ros_launch.launch_description_sources.PythonLaunchDescriptionSource(str(LAUNCH_FILES[which])),
        launch_arguments={"params_file": "/nonexistent.yaml"}.items()))
    started = []
    service.context.register_event_handler(ros_launch.event_handlers.OnProcessStart(
        on_start=lambda event, context: started.append(event.action)))
    assert service.run() != 0
    assert not [action for action in started if isinstance(action, ExecuteProcess)]


def perform_text(value) -> str:
    """A launch argument name given as text or as a one-element substitution list."""
    if isinstance(value, str):
        return value
    from launch.substitutions import TextSubstitution

    return "".join(part.text for part in value if isinstance(part, TextSubstitution))
