"""The stand-in world for Gazebo (no ROS): a kinematic diff-drive robot, an arm with a gripper, scenarios."""
