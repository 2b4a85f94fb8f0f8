"""``wafer-reasoner emulate``: emulated query time, placement, and validation against published figures.

    wafer-reasoner emulate [--target NAME] [--hardware NAME] [--prompt-tokens N] [--generated-tokens N] [--json]
    wafer-reasoner emulate --placement [--target NAME] [--hardware NAME]
    wafer-reasoner emulate --validate       # predicted vs published for every row; exit 1 if the bound fails
    wafer-reasoner emulate --calibrate      # the fitted constants as config/hardware.yaml's 'calibrated' block
    wafer-reasoner emulate --list           # hardware profiles and target models

The pair and its options come from config/emulator.yaml (or --config); flags override them. Speculative
decoding only with a draft: --draft NAME --acceptance-rate A [--draft-tokens K], or speculative.enabled there.
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from wafer_reasoner.emulator import calibration
from wafer_reasoner.emulator.datafiles import EmulatorDataError
from wafer_reasoner.emulator.emulator import Emulator, select
from wafer_reasoner.emulator.placement import placement_report
from wafer_reasoner.runtime.emulation import emulator_settings, hardware_profiles, target_models
from wafer_reasoner.runtime.resources import ResourceError

MEDIAN_ERROR_BOUND = 0.25  # the bound --validate checks: median |error| over the validation rows


def _grid(text: str):
    if text in ("full", "smallest"):
        return text
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"grid must be full, smallest or ROWSxCOLS, got {text!r}") from None
    return [rows, cols]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wafer-reasoner emulate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--placement", action="store_true", help="where the weights and KV cache go")
    mode.add_argument("--validate", action="store_true", help="predicted vs published, every row")
    mode.add_argument("--calibrate", action="store_true", help="fit the free constants, print them as YAML")
    mode.add_argument("--list", action="store_true", help="known hardware profiles and target models")
    parser.add_argument("--config", help="emulator settings YAML (default: config/emulator.yaml)")
    parser.add_argument("--hardware-file", action="append", default=[], help="extra hardware YAML (repeatable)")
    parser.add_argument("--model-dir", help="folder with the planner's genai_config.json (default: shipped)")
    parser.add_argument("--target", help="target model name (overrides the config)")
    parser.add_argument("--hardware", help="hardware profile name (overrides the config)")
    parser.add_argument("--bytes-per-param", type=float, help="serve the target at this precision (1 = FP8)")
    parser.add_argument("--grid", type=_grid, help="wafer grid per system: full, smallest or ROWSxCOLS")
    parser.add_argument("--tensor-parallel", type=int, help="GPU tensor-parallel degree")
    parser.add_argument("--context-tokens", type=int, help="KV cache reserved per request")
    parser.add_argument("--draft", help="speculative decoding with this draft model")
    parser.add_argument("--draft-tokens", type=int, default=4, help="tokens drafted per step (default 4)")
    parser.add_argument("--acceptance-rate", type=float, help="with --draft: acceptance rate per drafted token")
    parser.add_argument("--prompt-tokens", type=int, default=128, help="prompt length (default 128)")
    parser.add_argument("--generated-tokens", type=int, default=32, help="tokens generated (default 32)")
    parser.add_argument("--json", action="store_true", help="print the timing as JSON")
    return parser


def _settings(args) -> dict:
    settings = emulator_settings(args.config)
    if args.target:
        settings["target_model"] = args.target
    if args.hardware:
        settings["hardware"] = args.hardware
    if args.bytes_per_param is not None:
        settings["bytes_per_param"] = args.bytes_per_param
    placement = dict(settings.get("placement") or {})
    for key in ("grid", "tensor_parallel", "context_tokens"):
        if getattr(args, key) is not None:
            placement[key] = getattr(args, key)
    settings["placement"] = placement
    if args.draft:
        if args.acceptance_rate is None:
            raise EmulatorDataError("--draft needs --acceptance-rate (speculative decoding is never implicit)")
        settings["speculative"] = {"enabled": True, "draft_model": args.draft, "draft_tokens": args.draft_tokens,
                                   "acceptance_rate": args.acceptance_rate}
    return settings


def _timing_text(timing) -> str:
    lines = [
        f"{timing.target} on {timing.hardware} x{timing.devices}"
        + (f" (speculative, {timing.tokens_per_step:.2f} tokens/step)" if timing.speculative else ""),
        f"  prompt {timing.prompt_tokens} tokens, generated {timing.generated_tokens} tokens",
        f"  prefill {timing.prefill_s * 1e3:.3f} ms, decode {timing.decode_s * 1e3:.3f} ms, "
        f"total {timing.emulated_ms:.3f} ms",
        f"  per token {timing.per_token_s * 1e6:.1f} us ({timing.tokens_per_s:,.0f} tokens/s), bound: {timing.bound}",
    ]
    return "\n".join(lines)


def _validate(profiles: dict, targets: dict) -> int:
    fitted, predictions = calibration.validate(profiles, targets)
    print("Calibrated constants\n")
    print(calibration.format_calibration(fitted))
    print("\nValidation\n")
    print(calibration.format_table(predictions))
    print("\nPlacement checks")
    placements_ok = True
    for fact, expected, placed in calibration.check_placements(profiles, targets):
        placements_ok &= expected == placed
        print(f"  {fact}: placed on {placed} system(s) ({'ok' if expected == placed else 'MISMATCH'})")
    stale = calibration.stored_constants_match(profiles, fitted)
    for line in stale:
        print(f"  stale in config/hardware.yaml: {line} (run --calibrate)")
    median = calibration.median_abs_error(predictions)
    ok = median <= MEDIAN_ERROR_BOUND and placements_ok and not stale
    print(f"\n{'PASS' if ok else 'FAIL'}: median |error| {median:.1%} (bound {MEDIAN_ERROR_BOUND:.0%})")
    return 0 if ok else 1


def _calibrate(profiles: dict, targets: dict) -> int:
    fitted = calibration.fit(profiles, targets)
    block = {"calibrated": {"wafer": {k: float(f"{v:.4g}") for k, v in fitted.wafer},
                            "gpu": {k: float(f"{v:.4g}") for k, v in fitted.gpu}}}
    print(yaml.safe_dump(block, sort_keys=False).rstrip())
    print(f"# speculative acceptance rate fitted on the H200 row (used by validation only): "
          f"{fitted.acceptance_rate:.3f}")
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
        extra = [*(settings.get("hardware_files") or []), *args.hardware_file]
        profiles = hardware_profiles(extra)
        targets = target_models(args.model_dir)
        if args.list:
            for name, profile in sorted(profiles.items()):
                print(f"hardware {name:10s} {profile.kind:6s} {profile.source}")
            for name, target in sorted(targets.items()):
                print(f"target   {name:16s} {target.total_params / 1e9:9.3f} B params  {target.source}")
            return 0
        if args.validate:
            return _validate(profiles, targets)
        if args.calibrate:
            return _calibrate(profiles, targets)
        settings.pop("hardware_files", None)
        target, hardware, speculative, options = select(settings, profiles, targets)
        emulator = Emulator(target, hardware, speculative=speculative, options=options)
        if args.placement:
            print(placement_report(emulator.placement))
            if emulator.draft_placement is not None:
                print(placement_report(emulator.draft_placement))
            return 0
        timing = emulator.plan_time(args.prompt_tokens, args.generated_tokens)
    except (EmulatorDataError, ResourceError, calibration.CalibrationError, ValueError) as error:
        print(f"wafer-reasoner emulate: {error}", file=sys.stderr)
        return 2
    print(json.dumps(timing.to_dict(), indent=2) if args.json else _timing_text(timing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
