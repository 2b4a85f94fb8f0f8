"""A probe node for tests that start ROS processes: its own rclpy context on the processes' domain, an executor,
and a bounded ``spin_until`` that fails with the processes' logs when one of them dies or time runs out."""

import time
from pathlib import Path

import rclpy
from rclpy.executors import SingleThreadedExecutor

from wafer_reasoner.demo.processes import log_tail

WAIT_S = 60.0


class ProbeNode:
    def __init__(self, domain_id: int, name: str, *, processes: dict | None = None, log_dir: Path | None = None):
        self.processes, self.log_dir = processes if processes is not None else {}, log_dir
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def logs(self) -> str:
        if self.log_dir is None:
            return ""
        return "\n".join(f"--- {name}.log ---\n{log_tail(self.log_dir / f'{name}.log')}" for name in self.processes)

    def spin_until(self, condition, what: str, timeout_s: float = WAIT_S):
        """Spin until ``condition()`` is truthy and return it; AssertionError (with the logs) when a process
        exits or ``timeout_s`` passes first."""
        deadline = time.monotonic() + timeout_s
        while not (value := condition()):
            for name, process in self.processes.items():
                assert process.poll() is None, f"{name} exited ({process.returncode}) waiting for {what}\n{self.logs()}"
            assert time.monotonic() < deadline, f"gave up after {timeout_s:g} s waiting for {what}\n{self.logs()}"
            self.executor.spin_once(timeout_sec=0.05)
        return value

    def spin_for(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        self.spin_until(lambda: time.monotonic() > until, f"{seconds:g} s to pass")

    def plan_once_ready(self, publish, records: list, timeout_s: float = 20.0) -> dict:
        """``publish()`` an utterance and return the plan record it gets; again while the reasoner refuses it
        (status rejected: it has just started and a loaded host may take seconds to deliver the scene and the
        pose), until ``timeout_s``. ``records``: the list the probe appends the plan stream's records to."""
        deadline = time.monotonic() + timeout_s
        while True:
            before = len([r for r in records if r["type"] == "plan"])
            publish()
            plan = self.spin_until(lambda b=before: [r for r in records if r["type"] == "plan"][b:], "a plan")[0]
            if plan["status"] != "rejected" or time.monotonic() > deadline:
                return plan
            self.spin_for(0.5)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()
