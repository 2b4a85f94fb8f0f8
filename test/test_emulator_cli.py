"""`wafer-reasoner emulate` and bench/bench_host_profile.py."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from script_modules import load_script

from wafer_reasoner.cli import main
from wafer_reasoner.emulator.hardware import load_hardware
from wafer_reasoner.emulator.stacks import load_stacks
from wafer_reasoner.runtime.resources import SOURCE_CONFIG

BENCH = SOURCE_CONFIG.parent / "bench" / "bench_host_profile.py"


def test_emulate_prints_a_timing_as_json(capsys):
    assert main(["emulate", "--target", "Llama-3.1-8B", "--hardware", "WSE-3", "--prompt-tokens", "50",
                 "--generated-tokens", "20", "--json"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert (timing["target"], timing["hardware"], timing["generated_tokens"]) == ("Llama-3.1-8B", "WSE-3", 20)
    assert timing["stack"] == "cerebras-2025-h2" and timing["bound"] == "fabric-latency"
    assert timing["emulated_ms"] == pytest.approx(timing["serving_ms"] + timing["prefill_ms"] + timing["decode_ms"])


def test_emulate_a_named_stack_and_reasoning_tokens(capsys):
    assert main(["emulate", "--target", "Llama-3.1-70B", "--hardware", "H200", "--stack", "sglang-2025",
                 "--reasoning-tokens", "1000", "--json"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert (timing["stack"], timing["reasoning_tokens"]) == ("sglang-2025", 1000)
    assert timing["decode_ms"] > 1000 * timing["per_token_ms"]


def test_the_serving_overhead_is_charged_only_when_asked(capsys, stacks):
    charged = {}
    for flag in ("--serving-overhead", "--no-serving-overhead"):
        assert main(["emulate", "--target", "Llama-3.1-8B", "--hardware", "WSE-3", flag, "--json"]) == 0
        charged[flag] = json.loads(capsys.readouterr().out)["serving_ms"]
    assert charged["--serving-overhead"] == pytest.approx(stacks[0]["cerebras-2025-h2"].serving_overhead_s * 1e3)
    assert charged["--serving-overhead"] > 0 and charged["--no-serving-overhead"] == 0.0


def test_emulate_placement_report(capsys):
    assert main(["emulate", "--placement", "--target", "Llama-3.1-70B", "--hardware", "WSE-3"]) == 0
    out = capsys.readouterr().out
    assert "systems needed 4" in out and "cores per layer" in out
    assert main(["emulate", "--placement", "--target", "Llama-3.1-405B", "--hardware", "H100"]) == 0
    assert "devices needed 12" in capsys.readouterr().out


def test_emulate_validate_prints_every_row_and_its_verdict(capsys):
    status = main(["emulate", "--validate"])
    out = capsys.readouterr().out
    verdict = out.strip().splitlines()[-1] if status == 0 else out[out.rindex("FAIL:"):]
    assert verdict.startswith("PASS: Leave-one-stack-out median absolute error" if status == 0 else
                              "FAIL: Leave-one-stack-out median absolute error")
    assert status in (0, 1) and ("stale" not in out)
    assert "waferllm-8b-540" in out and "h200-70b-spec" in out and "cs3-maverick" in out and "b200-maverick" in out
    assert "Calibration rows" in out and "Serving stacks" in out


def test_emulate_calibrate_prints_the_yaml_block(capsys):
    assert main(["emulate", "--calibrate"]) == 0
    block = yaml.safe_load(capsys.readouterr().out)
    assert set(block["calibrated"]) == {"wafer"} and "fabric_hop_latency_s" in block["calibrated"]["wafer"]
    assert "routing_stage_latency_s" in block["stacks"]["cerebras-2025-h2"]


def _stored(path: Path, entry: str, field: str) -> float:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    section = data["calibrated"] if entry == "wafer" else data["stacks"]
    return float(section[entry][field])


def test_calibrate_write_stores_the_fits_in_a_config_folder_and_nothing_else(tmp_path, capsys):
    for name in ("hardware.yaml", "stacks.yaml", "target_models.yaml", "published_figures.yaml"):
        (tmp_path / name).write_text((SOURCE_CONFIG / name).read_text(encoding="utf-8"), encoding="utf-8")
    stacks = tmp_path / "stacks.yaml"
    fitted = _stored(stacks, "gpt-fast-2024", "memory_efficiency")
    text = stacks.read_text(encoding="utf-8")
    stacks.write_text(text.replace(f"    memory_efficiency: {fitted}\n", "    memory_efficiency: 0.5\n", 1),
                      encoding="utf-8")
    assert _stored(stacks, "gpt-fast-2024", "memory_efficiency") == 0.5
    assert main(["emulate", "--config-dir", str(tmp_path), "--calibrate", "--write"]) == 0
    out = capsys.readouterr().out
    assert f"gpt-fast-2024.memory_efficiency: 0.5 -> {fitted}" in out and "1 constant(s) changed" in out
    assert stacks.read_text(encoding="utf-8") == text  # comments, layout and every other value kept


def test_write_needs_calibrate_and_a_config_folder(capsys):
    for argv in (["--calibrate", "--write"], ["--validate", "--write", "--config-dir", "config"],
                 ["--write-docs", "x.md"]):
        with pytest.raises(SystemExit) as stopped:
            main(["emulate", *argv])
        assert stopped.value.code == 2
    assert "--write-docs needs --validate" in capsys.readouterr().err


def test_emulate_errors_go_to_stderr_with_status_2(capsys):
    assert main(["emulate", "--target", "Llama-3.1-8B", "--hardware", "TPU"]) == 2
    assert "unknown hardware profile 'TPU'" in capsys.readouterr().err
    assert main(["emulate", "--target", "Llama-3.1-70B", "--draft", "Llama-3.2-1B"]) == 2
    assert "never implicit" in capsys.readouterr().err
    assert main(["emulate", "--target", "Llama-3.1-70B", "--hardware", "WSE-3", "--stack", "sglang-2025"]) == 2
    assert "runs on H100, H200, not on 'WSE-3'" in capsys.readouterr().err


def test_emulate_speculative_flags(capsys):
    assert main(["emulate", "--target", "Llama-3.1-70B", "--hardware", "H200", "--bytes-per-param", "1",
                 "--draft", "Llama-3.2-1B", "--acceptance-rate", "0.8", "--json"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert timing["speculative"] and timing["tokens_per_step"] > 3


def _bench():
    return load_script(BENCH)


def test_bench_profile_loads_as_a_hardware_file_with_its_stack(tmp_path):
    bench = _bench()
    measured = {"memory_bytes": 16e9, "memory_bytes_per_s": 20e9, "peak_flops_per_s": 100e9,
                "kernel_overhead_s": 1e-6, "copy_mb": 64, "matmul_n": 512}
    path = tmp_path / "host.yaml"
    path.write_text(yaml.safe_dump(bench.host_profile(measured, name="bench", machine="m", date="2026-12-01")))
    profile = load_hardware(SOURCE_CONFIG / "hardware.yaml", extra_paths=[path])["bench"]
    assert (profile.kind, profile.memory_bytes_per_s, profile.peak_flops_per_s) == ("cpu", 20e9, 100e9)
    assert "numpy copy of 64 MB" in dict(profile.sources)["memory_bytes_per_s"]
    stacks, defaults = load_stacks(SOURCE_CONFIG / "stacks.yaml", extra_paths=[path])
    assert defaults["bench"] == "bench" and stacks["bench"].kernel_overhead_s == 1e-6


def test_bench_measures_something_small(tmp_path):
    bench = _bench()
    out = tmp_path / "measured.yaml"
    assert bench.main(["--out", str(out), "--copy-mb", "1", "--matmul-n", "32", "--repeats", "1"]) == 0
    profile = load_hardware(SOURCE_CONFIG / "hardware.yaml", extra_paths=[out])["host"]
    stack = load_stacks(SOURCE_CONFIG / "stacks.yaml", extra_paths=[out])[0]["host"]
    assert profile.memory_bytes_per_s > 0 and profile.peak_flops_per_s > 0 and stack.kernel_overhead_s > 0


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
    assert "WSE-3" in result.stdout and "Llama-3.1-70B" in result.stdout and "cerebras-2025-h2" in result.stdout
