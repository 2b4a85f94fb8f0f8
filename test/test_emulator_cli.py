"""`wafer-reasoner emulate` and bench/bench_host_profile.py."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wafer_reasoner.cli import main
from wafer_reasoner.emulator.hardware import load_hardware
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

BENCH = SOURCE_CONFIG.parent / "bench" / "bench_host_profile.py"


def test_emulate_prints_a_timing_as_json(capsys):
    assert main(["emulate", "--target", "Llama-3.1-8B", "--hardware", "WSE-3", "--prompt-tokens", "50",
                 "--generated-tokens", "20", "--json"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert (timing["target"], timing["hardware"], timing["generated_tokens"]) == ("Llama-3.1-8B", "WSE-3", 20)
    assert timing["emulated_ms"] == timing["prefill_ms"] + timing["decode_ms"] and timing["bound"] == "fabric-latency"


def test_emulate_placement_report(capsys):
    assert main(["emulate", "--placement", "--target", "Llama-3.1-70B", "--hardware", "WSE-3"]) == 0
    out = capsys.readouterr().out
    assert "systems needed 4" in out and "cores per layer" in out
    assert main(["emulate", "--placement", "--target", "Llama-3.1-405B", "--hardware", "H100"]) == 0
    assert "devices needed 12" in capsys.readouterr().out


def test_emulate_validate_passes_and_prints_every_row(capsys):
    assert main(["emulate", "--validate"]) == 0
    out = capsys.readouterr().out
    assert "PASS: median |error|" in out and "waferllm-8b-540" in out and "h200-70b-spec" in out


def test_emulate_calibrate_prints_the_yaml_block(capsys):
    assert main(["emulate", "--calibrate"]) == 0
    block = yaml.safe_load(capsys.readouterr().out)
    assert set(block["calibrated"]) == {"wafer", "gpu"}


def test_emulate_errors_go_to_stderr_with_status_2(capsys):
    assert main(["emulate", "--target", "Llama-3.1-8B", "--hardware", "TPU"]) == 2
    assert "unknown hardware profile 'TPU'" in capsys.readouterr().err
    assert main(["emulate", "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B"]) == 2
    assert "never implicit" in capsys.readouterr().err


def test_emulate_speculative_flags(capsys):
    assert main(["emulate", "--target", "Llama-3.1-70B", "--hardware", "H200", "--bytes-per-param", "1",
                 "--draft", "Llama-3.2-1B", "--acceptance-rate", "0.8", "--json"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert timing["speculative"] and timing["tokens_per_step"] > 3


def _bench():
    spec = importlib.util.spec_from_file_location("bench_host_profile", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_profile_loads_as_a_hardware_file(tmp_path):
    bench = _bench()
    measured = {"memory_bytes": 16e9, "memory_bytes_per_s": 20e9, "peak_flops_per_s": 100e9,
                "kernel_overhead_s": 1e-6, "copy_mb": 64, "matmul_n": 512}
    path = tmp_path / "host.yaml"
    path.write_text(yaml.safe_dump(bench.host_profile(measured, name="bench", machine="m", date="d")))
    profile = load_hardware(SOURCE_CONFIG / "hardware.yaml", extra_paths=[path])["bench"]
    assert (profile.kind, profile.memory_bytes_per_s, profile.peak_flops_per_s) == ("cpu", 20e9, 100e9)
    assert "numpy copy of 64 MB" in dict(profile.sources)["memory_bytes_per_s"]


def test_bench_measures_something_small(tmp_path):
    bench = _bench()
    out = tmp_path / "measured.yaml"
    assert bench.main(["--out", str(out), "--copy-mb", "1", "--matmul-n", "32", "--repeats", "1"]) == 0
    profile = load_hardware(SOURCE_CONFIG / "hardware.yaml", extra_paths=[out])["host"]
    assert profile.memory_bytes_per_s > 0 and profile.peak_flops_per_s > 0 and profile.kernel_overhead_s > 0


def test_the_installed_command_runs_from_any_folder_without_the_env_file(tmp_path):
    """Only the venv's bin on the path, no AMENT_PREFIX_PATH, run from elsewhere: the installed share folder
    (this Python's prefix) has the config files."""
    command = Path(sys.executable).parent / "wafer-reasoner"
    if not command.is_file():
        pytest.skip(f"{command} is not installed (make setup installs it)")
    env = {"PATH": f"{command.parent}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run([str(command), "emulate", "--list"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "WSE-3" in result.stdout and "Llama-3.1-70B" in result.stdout
