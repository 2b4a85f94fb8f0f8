"""reasoner_node's parameters: typed, described, ranged (ros/params.py). config/reasoner.yaml mirrors the table
exactly and the README's Parameters section documents it (test_reasoner_node.py checks the mirror)."""

from wafer_reasoner.emulator.pacing import OFF
from wafer_reasoner.ros.params import Param
from wafer_reasoner.runtime.assembly import ConfigurationError, build_reasoner
from wafer_reasoner.runtime.core import DEFAULT_QUEUE_DEPTH
from wafer_reasoner.runtime.resources import ResourceError, config_file
from wafer_reasoner.sim.scenario import ScenarioError, load_places_file

SEMANTIC_MAP_FILE = "semantic_map.yaml"

# Every parameter of the node; config/reasoner.yaml mirrors this exactly (test_reasoner_node checks it).
PARAMETERS = {
    "autostart": Param(True, "Configure and activate the managed node at start. False: stay unconfigured until a "
                             "lifecycle manager (or `ros2 lifecycle set`) configures and activates it."),
    "model_dir": Param(
        "", "Folder with planner.onnx, genai_config.json and tokenizer.json. Empty: the model shipped in the package."
    ),
    "engine_threads": Param(1, "onnxruntime intra-op threads for the planner model.", 1, 64),
    "engine": Param("fast", "Decoding engine: fast (constrained, cached, best-of-N) or reference (the plain loop the "
                    "fast engine is tested against)."),
    "engine_candidates": Param(1, "Plans decoded as one batch, best kept by model score; 1 = greedy.", 1, 64),
    "engine_temperature": Param(0.8, "Sampling temperature of candidates 2..N.", 0.01, 10.0),
    "engine_top_k": Param(8, "Candidates 2..N sample among the k most likely allowed tokens (0: all).", 0, 1000),
    "engine_seed": Param(0, "Sampler seed: the same query, settings and seed give the same plan.", 0, 2**31 - 1),
    "engine_deadline_ms": Param(
        0.0, "Best-of-N deadline in emulated time, ms (0: none): only the first n candidates whose batch the "
        "emulator.* pair finishes by the deadline compete (at least the greedy one); the host stops the others.",
        0.0, 10000.0,
    ),
    "engine_constrained": Param(True, "Decode inside the action-language grammar and the scene's references."),
    "engine_forced_runs": Param(True, "Feed tokens the grammar forces as one chunk."),
    "engine_prefix_cache": Param(4, "Prompts whose KV state is kept for reuse (0: none).", 0, 64),
    "engine_draft_tokens": Param(8, "Greedy: tokens drafted from past plan shapes per step (0: none).", 0, 64),
    "engine_export": Param("auto", "Which export of the model the fast engine runs: auto (the first present of "
                           "kv-int8, kv, genai), kv (in-place KV cache, float32), kv-int8 or genai (planner.onnx)."),
    "backend": Param(
        "embedded", "Planner backend: embedded (the in-process ONNX engine above) or openai (an OpenAI-compatible "
        "inference server at base_url: vLLM, SGLang, llama.cpp's server, a cloud API)."),
    "base_url": Param("http://127.0.0.1:8080/v1", "backend openai: the server's API root (http(s)://host:port/v1)."),
    "backend_model": Param("", "backend openai: the model name sent; empty: the first model GET /models lists."),
    "backend_api_key_env": Param(
        "", "backend openai: NAME of the environment variable that holds the API key (sent as a Bearer token); "
        "empty: no key. The key itself never goes in a parameter or a params file."),
    "backend_timeout_s": Param(
        10.0, "backend openai: a query's deadline, retries included; past it the request is refused ('did not "
        "answer in time') and the robot does not move, s.", 0.1, 600.0),
    "backend_retries": Param(
        1, "backend openai: further attempts after a failed connection or an HTTP 429/5xx (within the deadline).",
        0, 10),
    "backend_fallback": Param(
        "embedded", "backend openai: when the server cannot be reached, embedded (the in-process planner answers; "
        "loads it at start) or none (the request is refused)."),
    "backend_constraint": Param(
        "auto", "backend openai: how the output is held to the action language: gbnf (llama.cpp grammar), "
        "vllm_regex, vllm_grammar, json_schema (response_format), json_object (llama-cpp-python's schema form), "
        "none, or auto (by the server's owned_by)."),
    "backend_max_tokens": Param(256, "backend openai: max_tokens of a request.", 1, 4096),
    "semantic_map_file": Param(
        "",
        "YAML with the named places ({places: [{name, x, y, yaw}]}, map frame). Empty: the package's "
        "config/semantic_map.yaml (share directory, else the source tree).",
    ),
    "control_rate_hz": Param(20.0, "Executor tick rate (timeouts, waits, rotation keep-alive), Hz.", 1.0, 200.0),
    "diagnostics_rate_hz": Param(1.0, "/diagnostics publishing rate, Hz.", 0.1, 10.0),
    "markers_rate_hz": Param(2.0, "reasoner/markers (RViz MarkerArray) publishing rate while active, Hz (0: off).",
                             0.0, 30.0),
    "navigation.mode": Param(
        "auto", "How navigation goals go out: action (a NavigateToPose action client: feedback, result, cancel; "
        "needs navigation.action_type importable, e.g. nav2_msgs), topic (PoseStamped on goal_pose; a cancel "
        "sends the current pose), auto (action where the type is importable, else topic)."),
    "navigation.action_type": Param(
        "nav2_msgs/action/NavigateToPose", "Action type of navigation.mode action/auto: package/action/Name with "
        "Nav2's NavigateToPose goal (pose, behavior_tree), feedback and result."),
    "navigation.action_name": Param("navigate_to_pose", "Action server name (relative: follows the namespace)."),
    "gripper.mode": Param(
        "topic", "How gripper commands go out: topic (gripper/commands, answered on manipulator/status), action (a "
        "GripperCommand action client: its result is the answer) or auto (action where gripper.action_type "
        "is importable, else topic)."),
    "gripper.action_type": Param("control_msgs/action/GripperCommand",
                                 "Action type of gripper.mode action/auto (control_msgs' GripperCommand definition)."),
    "gripper.action_name": Param("gripper_cmd", "Gripper action server name (relative), e.g. "
                                                "gripper_controller/gripper_cmd for ros2_control."),
    "gripper.open_position": Param(1.0, "GripperCommand position that opens the gripper (robot units).",
                                   -1000.0, 1000.0),
    "gripper.closed_position": Param(0.0, "GripperCommand position that closes it (an object stalls it earlier).",
                                     -1000.0, 1000.0),
    "gripper.max_effort": Param(10.0, "GripperCommand max_effort (robot units; 0: the controller's choice).",
                                0.0, 10000.0),
    "manipulator_replies_to_gripper": Param(
        True,
        "The manipulator answers every gripper command on manipulator/status too (sim_world does). "
        "False: only arm targets get a reply.",
    ),
    "manipulator_reply_ids": Param(
        True,
        "Replies on manipulator/status echo the command id ('succeeded <id>'; the id is the target pose's stamp "
        "in ns, or the gripper command's 'gripper#<id>' label); others are reported and dropped. False: "
        "order-only matching for simple controllers that reply 'succeeded' / 'failed' in order.",
    ),
    "speech_queue_depth": Param(
        DEFAULT_QUEUE_DEPTH,
        "Utterances that may wait for the planner; one more is answered at once with a 'busy' plan record.",
        1, 1000,
    ),
    "executor.nav_tolerance_m": Param(0.2, "A navigate step is done within this distance of its goal, m.", 0.01, 2.0),
    "executor.nav_timeout_s": Param(
        60.0,
        "A navigate/rotate step fails after this long; follow gives up after not seeing the person this long, s.",
        1.0,
        3600.0,
    ),
    "executor.manip_timeout_s": Param(30.0, "An arm or gripper action fails after this long, s.", 1.0, 600.0),
    "executor.yaw_tolerance_rad": Param(0.05236, "A rotate step is done within this angle, rad.", 0.001, 0.5),
    "limits.workspace_min_x_m": Param(
        -10.0, "Navigation goals must lie inside the workspace box (scene frame), m.", -10000.0, 10000.0
    ),
    "limits.workspace_max_x_m": Param(10.0, "Workspace box, upper x, m.", -10000.0, 10000.0),
    "limits.workspace_min_y_m": Param(-10.0, "Workspace box, lower y, m.", -10000.0, 10000.0),
    "limits.workspace_max_y_m": Param(10.0, "Workspace box, upper y, m.", -10000.0, 10000.0),
    "limits.max_linear_speed_mps": Param(0.5, "Cap on |linear speed| of every cmd_vel, m/s.", 0.01, 5.0),
    "limits.max_angular_speed_radps": Param(1.0, "Cap on |angular speed| of every cmd_vel, rad/s.", 0.01, 10.0),
    "limits.max_scene_age_s": Param(2.0, "Perception older than this is not planned against, s.", 0.05, 60.0),
    "limits.max_wait_s": Param(60.0, "Longest wait() step, s.", 0.0, 3600.0),
    "limits.max_rotate_deg": Param(360.0, "Largest |rotate()| step, degrees.", 1.0, 3600.0),
    "limits.standoff_m": Param(0.6, "Distance of the stand-off pose from a navigation target, m.", 0.0, 5.0),
    "limits.max_reach_m": Param(0.9, "Horizontal reach of the arm from the base centre, m.", 0.05, 5.0),
    "emulator.target_model": Param(
        "planner",
        "Target model whose time is emulated for every planning query: a name in config/target_models.yaml or "
        "'planner' (the loaded model). Other emulator settings (placement, speculative, reasoning budgets, "
        "hardware_files) come from config/emulator.yaml. `wafer-reasoner emulate --list` shows the names.",
    ),
    "emulator.hardware": Param(
        "WSE-3",
        "Hardware profile the target is emulated on: a name in config/hardware.yaml (WSE-2, WSE-3, A100, H100, "
        "H200, B200, host) or in config/emulator.yaml's hardware_files.",
    ),
    "emulator.stack": Param(
        "",
        "Serving stack the target runs under on that hardware: a name in config/stacks.yaml that lists the "
        "hardware (e.g. cerebras-2025-h2, waferllm-2025-02, tensorrt-llm-2025-05). Empty: the hardware's default "
        "stack (config/stacks.yaml defaults).",
    ),
    "emulator.pacing": Param(
        OFF,
        "off: publish each plan as soon as the host has it. emulated: publish (and execute) it no earlier than "
        "query time + its emulated latency on the node clock; a host slower than that publishes at once and "
        "reports pacing.behind_ms. Stop commands are never paced.",
    ),
}


def defaults() -> dict:
    """{name: default} of every parameter."""
    return {name: param.default for name, param in PARAMETERS.items()}


def semantic_map(values: dict) -> tuple:
    """(named places, the file they came from) of ``semantic_map_file``; ConfigurationError saying how to fix it."""
    hint = "Set 'semantic_map_file' to a YAML file with 'places: [{name, x, y, yaw}]'."
    try:
        path = config_file(SEMANTIC_MAP_FILE, values["semantic_map_file"])
        return load_places_file(str(path)), path
    except ResourceError as error:
        raise ConfigurationError(f"cannot read the semantic map: {error}. {hint}") from None
    except ScenarioError as error:
        raise ConfigurationError(f"{error}. {hint}") from None


def reasoner_from_parameters(values: dict, *, clock=None):
    """The Reasoner (runtime/assembly.py) these parameter values describe."""
    places, map_file = semantic_map(values)
    return build_reasoner(values, places, map_file, clock=clock)
