"""The planner core (no ROS): action language, scene model, verifier, executor state machine."""
