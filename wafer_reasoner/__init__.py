"""wafer_reasoner: language-driven high-level reasoning for ROS 2 robots."""
