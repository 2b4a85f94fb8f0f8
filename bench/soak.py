"""Soak: reasoner_node and sim_world for a long run, a scripted operator, and a chaos schedule.

    python bench/soak.py [--minutes 30] [--out runs/soak]          # make soak (ARGS="--minutes 5")

The operator says one command every ``--period`` seconds (a fixed cycle of fetches, trips, turns, waits and
stops). Chaos, on a fixed schedule: perception dropouts (this process relays sim_world's scene to the
reasoner and holds it back for DROPOUT_S), sim_world killed (SIGKILL) and started again, bursts of
BURST transcripts, and emergency stops. reasoner_node itself is never touched: it must live through all of it.

Reported (table on stdout, runs/soak/soak.json, runs/soak/soak.png):

* RSS of reasoner_node, sampled every RSS_PERIOD_S; growth from the end of the warm-up (WARMUP_S) to the end,
  as a percentage of the RSS at the end of the warm-up (target < 5 %);
* utterances said, plan records received, lost utterances (said but never answered by a record) (target 0);
* plans ok / clarify / rejected / shed busy or stopped; plan_failed events (chaos makes some: a killed
  sim_world never answers an arm command); late plans: records that came more than LATE_S after the
  utterance (bursts excluded: their records are answered busy in order);
* reasoner_node exits (target 0).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wafer_reasoner.demo.processes import (  # noqa: E402
    log_tail,
    proc_status_kib,
    reserve_domain_id,
    ros_env,
    start_node,
    stop_process,
)

CONFIG = REPO / "config"
RSS_PERIOD_S = 10.0
WARMUP_S = 300.0
LATE_S = 1.0
DROPOUT_S = 5.0
BURST = 100
DRAIN_S = 30.0  # after the last utterance, time for the last records
OPERATOR_LINES = ("bring me the red cup", "go to the dock", "turn left 90 degrees", "go to the kitchen",
                  "wait 2 seconds", "stop", "come here", "go to the office", "pick up the blue cup",
                  "put it on the table", "go to the living room", "turn around", "follow me", "please stop")
BURST_LINES = tuple(line for line in OPERATOR_LINES if "stop" not in line)
# (period s, offset s, what): chaos happens when (t - offset) % period crosses 0
CHAOS = ((60.0, 20.0, "dropout"), (240.0, 130.0, "kill_sim"), (120.0, 50.0, "burst"), (150.0, 95.0, "estop"))


class Operator:
    """This process's node: says things, relays perception (or not), records the plan stream."""

    def __init__(self, domain_id: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from std_msgs.msg import Empty, String

        from wafer_reasoner.ros.qos import EMERGENCY_STOP_QOS, PLAN_QOS, SENSOR_QOS, SPEECH_QOS

        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node("soak_operator", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.String, self.Empty = String, Empty
        self.speech = self.node.create_publisher(String, "speech/transcript", SPEECH_QOS)
        self.estop = self.node.create_publisher(Empty, "emergency_stop", EMERGENCY_STOP_QOS)
        self.scene = self.node.create_publisher(String, "perception/objects", SENSOR_QOS)
        self.node.create_subscription(String, "sim/perception/objects", self._relay, SENSOR_QOS)
        self.node.create_subscription(String, "reasoner/plan", self._on_plan, PLAN_QOS)
        self.dropout_until = 0.0
        self.said = []  # (time, text, in a burst)
        self.records, self.events = [], []  # (time, body)

    def _relay(self, msg) -> None:
        if time.monotonic() >= self.dropout_until:
            self.scene.publish(msg)

    def _on_plan(self, msg) -> None:
        body = json.loads(msg.data)
        (self.records if body["type"] == "plan" else self.events).append((time.monotonic(), body))

    def say(self, text: str, burst: bool = False) -> None:
        self.said.append((time.monotonic(), text, burst))
        self.speech.publish(self.String(data=text))

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


class Stack:
    def __init__(self, env: dict, log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.reasoner = start_node("reasoner_node", ["--params-file", str(CONFIG / "reasoner.yaml")], env,
                                   log_path=log_dir / "reasoner_node.log")
        self.sim = None
        self.sim_starts = 0
        self.start_sim()

    def start_sim(self) -> None:
        self.sim_starts += 1
        self.sim = start_node("sim_world", ["--params-file", str(CONFIG / "sim_world.yaml"), "-p",
                                            "scenario:=bring_red_cup", "-r",
                                            "perception/objects:=sim/perception/objects"],
                              self.env, log_path=self.log_dir / f"sim_world_{self.sim_starts}.log")

    def kill_sim(self) -> None:
        self.sim.send_signal(signal.SIGKILL)
        self.sim.wait(10)

    def close(self) -> None:
        for process in (self.sim, self.reasoner):
            stop_process(process)


def chaos_due(previous_s: float, now_s: float) -> list:
    """What happens between two loop times: ``what`` at offset, offset + period, offset + 2 periods, ..."""
    def crossed(period: float, offset: float) -> bool:
        first = previous_s < offset <= now_s
        return first or (now_s >= offset and (previous_s - offset) // period != (now_s - offset) // period)

    return [what for period, offset, what in CHAOS if crossed(period, offset)]


def run(operator: Operator, stack: Stack, minutes: float, period_s: float) -> dict:
    start = time.monotonic()
    rss, exits, chaos_log = [], [], []
    next_say = next_rss = 5.0
    line, previous = 0, 0.0
    while (elapsed := time.monotonic() - start) < minutes * 60.0:
        for what in chaos_due(previous, elapsed):
            chaos_log.append((round(elapsed, 1), what))
            if what == "dropout":
                operator.dropout_until = time.monotonic() + DROPOUT_S
            elif what == "kill_sim":
                stack.kill_sim()
                operator.spin_for(3.0)
                stack.start_sim()
            elif what == "burst":  # a recogniser gone wrong: no stop among them, so the queue overflows
                for index in range(BURST):
                    operator.say(BURST_LINES[index % len(BURST_LINES)], burst=True)
            elif what == "estop":
                operator.estop.publish(operator.Empty())
        previous = elapsed
        if elapsed >= next_say:
            operator.say(OPERATOR_LINES[line % len(OPERATOR_LINES)])
            line, next_say = line + 1, next_say + period_s
        if elapsed >= next_rss:
            rss.append((round(elapsed, 1), proc_status_kib(stack.reasoner.pid, "VmRSS")))
            next_rss += RSS_PERIOD_S
        if stack.reasoner.poll() is not None:
            exits.append(round(elapsed, 1))
            break
        operator.spin_for(0.05)
    operator.spin_for(DRAIN_S)
    return {"rss": rss, "exits": exits, "chaos": chaos_log, "minutes": minutes}


def summarise(operator: Operator, run_data: dict) -> dict:
    said, records = operator.said, operator.records
    matched = list(zip(said, records))
    late = [r for (sent, _, burst), (at, r) in matched if not burst and not r.get("shed") and at - sent > LATE_S]
    statuses = [r.get("shed") or r["status"] for _, r in records]
    rss = [kib for t, kib in run_data["rss"] if kib > 0]
    after_warmup = [kib for t, kib in run_data["rss"] if t >= min(WARMUP_S, run_data["minutes"] * 30.0)]
    growth = (after_warmup[-1] - after_warmup[0]) / after_warmup[0] * 100.0 if len(after_warmup) > 1 else None
    return {
        "minutes": run_data["minutes"], "utterances": len(said), "bursts_utterances": sum(b for _, _, b in said),
        "plan_records": len(records), "lost_utterances": len(said) - len(records),
        "records_match_utterances": all(r["utterance"] == " ".join(t.split()) or r.get("shed") for (_, t, _), (_, r)
                                        in matched),
        "plan_ids_in_order": [r["plan_id"] for _, r in records] == list(range(1, len(records) + 1)),
        **{f"plans_{kind}": statuses.count(kind) for kind in ("ok", "clarify", "rejected", "busy", "stopped")},
        "plan_failed_events": sum(e["event"] == "plan_failed" for _, e in operator.events),
        "plans_succeeded": sum(e["event"] == "plan_succeeded" for _, e in operator.events),
        "late_plans": len(late), "reasoner_exits": len(run_data["exits"]),
        "rss_start_mib": round(rss[0] / 1024, 1) if rss else None,
        "rss_after_warmup_mib": round(after_warmup[0] / 1024, 1) if after_warmup else None,
        "rss_end_mib": round(rss[-1] / 1024, 1) if rss else None,
        "rss_growth_after_warmup_percent": round(growth, 2) if growth is not None else None,
        "chaos_events": {what: sum(w == what for _, w in run_data["chaos"]) for _, _, what in CHAOS},
    }


def plot(run_data: dict, operator: Operator, path: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (make soak installs it): no plot"
    start = operator.said[0][0] - 5.0 if operator.said else 0.0
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    times = [t / 60.0 for t, _ in run_data["rss"]]
    top.plot(times, [kib / 1024 for _, kib in run_data["rss"]], label="reasoner_node RSS")
    top.axvline(WARMUP_S / 60.0, color="grey", linestyle=":", label="end of warm-up")
    for t, what in run_data["chaos"]:
        if what == "kill_sim":
            top.axvline(t / 60.0, color="red", alpha=0.3)
    top.set_ylabel("MiB")
    top.legend(loc="lower right")
    record_times = [(at - start) / 60.0 for at, _ in operator.records]
    bottom.hist(record_times, bins=max(10, int(run_data["minutes"])), label="plan records per bin")
    bottom.set_xlabel("minutes (red lines: sim_world killed and restarted)")
    bottom.legend(loc="upper right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    return str(path)


def table(summary: dict) -> str:
    rows = [(key.replace("_", " "), value) for key, value in summary.items()]
    return "\n".join(["| measure | value |", "|---|---:|", *(f"| {k} | {v} |" for k, v in rows)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--period", type=float, default=6.0, help="seconds between the operator's commands")
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "soak")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    lease = reserve_domain_id()
    stack = Stack(ros_env(lease.domain_id), args.out)
    operator = Operator(lease.domain_id)
    try:
        operator.spin_for(5.0)
        run_data = run(operator, stack, args.minutes, args.period)
    finally:
        operator.close()
        stack.close()
        lease.release()
    summary = summarise(operator, run_data)
    picture = plot(run_data, operator, args.out / "soak.png")
    (args.out / "soak.json").write_text(json.dumps({"summary": summary, **run_data}, indent=1))
    print(table(summary))
    print(f"plot: {picture}")
    if run_data["exits"]:
        print(f"reasoner_node exited:\n{log_tail(args.out / 'reasoner_node.log')}")
    return 0 if not run_data["exits"] and summary["lost_utterances"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
