"""The remote planner backend: an OpenAI-compatible inference server answering the same queries as the
embedded engine (client.py: standard-library HTTP; prompt.py; planner.py; local_server.py: llama.cpp on
loopback for tests and the bench)."""
