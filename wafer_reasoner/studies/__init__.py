"""Studies that run on the stand-in world in simulated time (``make study``); nothing here runs in a node."""
