"""The ROS 2 layer: nodes whose callbacks convert messages and call the pure core."""
