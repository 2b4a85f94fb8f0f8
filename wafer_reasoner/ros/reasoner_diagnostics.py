"""reasoner_node's /diagnostics status: readiness, lifecycle state, latencies, queue and drop counts."""

from __future__ import annotations

from wafer_reasoner.ros import conversions
from wafer_reasoner.runtime.backends import backend_status


def diagnostics_msg(node, reasoner, state: str, rejected: dict, navigator, now_s: float):
    """A DiagnosticArray with one status ``<node>: reasoner``: warn while inactive or when something is
    missing (no scene, no pose, stale perception), ok otherwise."""
    core = reasoner.core
    status = core.status(now_s)
    backend_problems, backend_values = backend_status(reasoner.model)  # the planning server's state, if any
    problems = status["problems"] if state == "active" else [f"{state} (lifecycle): not hearing speech"]
    problems = problems + backend_problems
    return conversions.diagnostics_to_msg(
        name=f"{node.get_name()}: reasoner",
        hardware_id=str(reasoner.model.model_dir),
        level="warn" if problems else "ok",
        message="; ".join(problems) or f"ready, executor {core.executor.state.value}",
        values={
            "lifecycle_state": state,
            "model_loaded": True,
            "model_dir": reasoner.model.model_dir,
            "last_planning_latency_ms": core.last_latency_ms,
            "emulated_target_model": core.emulator.target.name,
            "emulated_hardware": core.emulator.hardware.name,
            "emulated_stack": core.emulator.stack.name,
            "last_emulated_planning_latency_ms": core.last_emulated_ms,
            "pacing": core.pacing,
            "last_pacing_behind_ms": core.last_behind_ms,
            "plans_held": len(core.held),
            "scene_age_s": status["scene_age_s"],
            "pose_known": status["pose_known"],
            "executor_state": core.executor.state.value,
            "current_step_index": core.executor.current_step_index,
            "plans_received": core.plans,
            "plan_records_published": core.counts["records"],
            "speech_queue_depth": core.waiting,
            "speech_queue_capacity": core.queue_depth,
            "utterances_dropped_busy": core.counts["busy"],
            "utterances_dropped_by_stop": core.counts["stopped"],
            "emergency_stops": core.counts["emergency_stops"],
            "manipulator_replies_ignored": core.counts["stray_replies"],
            "perception_rejected": rejected["perception"],
            "odom_rejected": rejected["odom"],
            "callback_errors": rejected["callback_errors"],
            **navigator.status(),
            **backend_values,
        },
        stamp_s=now_s,
    )
