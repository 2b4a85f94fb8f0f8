"""The end-to-end demo: sim_world + reasoner_node + a scripted operator (``python -m wafer_reasoner.demo``).

    run.py        the demo: start the three nodes, stream the operator's timeline, end every process by PID
    processes.py  ROS domain leases, the localhost-only environment, starting and stopping node processes
    timeline.py   the operator's timeline lines (what happened, in words)
    verdicts.py   judging a scenario's turns from what the robot did
"""
