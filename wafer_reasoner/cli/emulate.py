"""``wafer-reasoner emulate``: emulated query time, placement, and validation against published figures.

    wafer-reasoner emulate [--target NAME] [--hardware NAME] [--stack NAME] [--prompt-tokens N]
                           [--generated-tokens N] [--reasoning-tokens N] [--json]
    wafer-reasoner emulate --placement [--target NAME] [--hardware NAME]
    wafer-reasoner emulate --validate       # calibration rows, leave-one-stack-out validation; exit 1 on FAIL
    wafer-reasoner emulate --calibrate      # the fitted constants: hardware.yaml's 'calibrated', stacks.yaml's
    wafer-reasoner emulate --list           # hardware profiles, serving stacks and target models

A checkout's own data (after editing config/ there, without reinstalling):

    wafer-reasoner emulate --config-dir config --calibrate --write          # store the fits in config/
    wafer-reasoner emulate --config-dir config --validate --write-docs docs/emulator.md   # refresh its tables

The triple and its options come from config/emulator.yaml (or --config); flags override them. The stack decodes
speculatively where its data says so (--no-speculation turns that off); another draft only when asked:
--draft NAME --acceptance-rate A [--draft-tokens K], or speculative.enabled there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from wafer_reasoner.emulator import calibration, report
from wafer_reasoner.emulator.datafiles import EmulatorDataError, store_values, stored_value_text
from wafer_reasoner.emulator.placement import placement_report
from wafer_reasoner.emulator.settings import emulator_from_settings
from wafer_reasoner.runtime.emulation import (
    FIGURES_FILE,
    HARDWARE_FILE,
    STACKS_FILE,
    TARGETS_FILE,
    emulator_settings,
    extra_files,
    hardware_profiles,
    published_figures,
    serving_stacks,
    target_models,
)


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
    parser.add_argument("--config-dir", help="read hardware.yaml, stacks.yaml, target_models.yaml and "
                        "published_figures.yaml from this folder (default: the installed package's)")
    parser.add_argument("--write", action="store_true",
                        help="with --calibrate and --config-dir: store the fitted constants in that folder's files")
    parser.add_argument("--write-docs", metavar="FILE",
                        help="with --validate: replace the tables FILE marks as printed by --validate")
    parser.add_argument("--hardware-file", action="append", default=[], help="extra hardware YAML (repeatable)")
    parser.add_argument("--model-dir", help="folder with the planner's genai_config.json (default: shipped)")
    parser.add_argument("--target", help="target model name (overrides the config)")
    parser.add_argument("--hardware", help="hardware profile name (overrides the config)")
    parser.add_argument("--stack", help="serving stack name (default: the hardware's default stack)")
    parser.add_argument("--bytes-per-param", type=float, help="serve the target at this precision (1 = FP8)")
    parser.add_argument("--grid", type=_grid, help="wafer grid per system: full, smallest or ROWSxCOLS")
    parser.add_argument("--tensor-parallel", type=int, help="GPU tensor-parallel degree")
    parser.add_argument("--context-tokens", type=int, help="KV cache reserved per request")
    parser.add_argument("--no-speculation", action="store_true", help="never decode speculatively")
    parser.add_argument("--serving-overhead", action=argparse.BooleanOptionalAction, default=None,
                        help="charge the stack's serving overhead (API, network, queueing) before the first token "
                             "(default: the config's serving_overhead)")
    parser.add_argument("--draft", help="speculative decoding with this draft model")
    parser.add_argument("--draft-tokens", type=int, default=4, help="tokens drafted per step (default 4)")
    parser.add_argument("--acceptance-rate", type=float, help="with --draft: acceptance rate per drafted token")
    parser.add_argument("--prompt-tokens", type=int, default=128, help="prompt length (default 128)")
    parser.add_argument("--generated-tokens", type=int, default=32, help="tokens generated (default 32)")
    parser.add_argument("--reasoning-tokens", type=int, default=0, help="hidden tokens thought first (default 0)")
    parser.add_argument("--json", action="store_true", help="print the timing as JSON")
    return parser


def _settings(args) -> dict:
    settings = emulator_settings(args.config)
    if args.target:
        settings["target_model"] = args.target
    if args.hardware:
        if args.hardware != settings.get("hardware"):
            settings["stack"] = None  # another hardware than the file's: its own default stack
        settings["hardware"] = args.hardware
    if args.stack:
        settings["stack"] = args.stack
    if args.serving_overhead is not None:
        settings["serving_overhead"] = args.serving_overhead
    if args.bytes_per_param is not None:
        settings["bytes_per_param"] = args.bytes_per_param
    placement = dict(settings.get("placement") or {})
    for key in ("grid", "tensor_parallel", "context_tokens"):
        if getattr(args, key) is not None:
            placement[key] = getattr(args, key)
    settings["placement"] = placement
    if args.draft:
        if args.acceptance_rate is None:
            raise EmulatorDataError("--draft needs --acceptance-rate (another draft is never implicit)")
        settings["speculative"] = {"enabled": True, "draft_model": args.draft, "draft_tokens": args.draft_tokens,
                                   "acceptance_rate": args.acceptance_rate}
    elif args.no_speculation:
        settings["speculative"] = {"stack": False}
    return settings


def _timing_text(timing) -> str:
    lines = [
        f"{timing.target} on {timing.hardware} x{timing.devices} under {timing.stack}"
        + (f" (speculative, {timing.tokens_per_step:.2f} tokens/step)" if timing.speculative else ""),
        f"  prompt {timing.prompt_tokens} tokens, reasoning {timing.reasoning_tokens} tokens, plan "
        f"{timing.generated_tokens} tokens",
        f"  serving {timing.serving_s * 1e3:.3f} ms, prefill {timing.prefill_s * 1e3:.3f} ms, decode "
        f"{timing.decode_s * 1e3:.3f} ms, total {timing.emulated_ms:.3f} ms "
        f"(first token {timing.first_token_s * 1e3:.3f} ms)",
        f"  per token {timing.per_token_s * 1e6:.1f} us ({timing.tokens_per_s:,.0f} tokens/s), bound: {timing.bound}",
    ]
    return "\n".join(lines)


# what --validate prints, in order: (table, its heading)
VALIDATE_SECTIONS = (
    ("physics table", "Physics constants (hardware)"),
    ("calibration rows", "Calibration rows (they fit the physics constants; never validated)"),
    ("stack constants", "Serving stacks: software constants"),
    ("validation table", "Validation, leave one stack out (each stack's rows predicted with constants fitted without "
                         "them)"),
    ("held-out constants", "Constants of each validated stack: its own fit and what it gets when left out"),
)


def _validate(figures, profiles: dict, stacks: dict, targets: dict, docs: str | None = None) -> int:
    result = calibration.validate(figures, profiles, stacks, targets)
    tables = report.tables(result, stacks, figures)
    if docs:
        _refresh_docs(Path(docs), tables)
    print("\n\n".join(f"{heading}\n\n{tables[name]}" for name, heading in VALIDATE_SECTIONS))
    print("\nPlacement checks")
    placements_ok = True
    for fact, expected, placed in calibration.check_placements(profiles, targets):
        placements_ok &= expected == placed
        print(f"  {fact}: placed on {placed} system(s) ({'ok' if expected == placed else 'MISMATCH'})")
    stale = calibration.stale_constants(profiles, stacks, result.calibration)
    for line in stale:
        print(f"  stale: {line} (run --calibrate and copy the values)")
    ok, problems = report.verdict(result)
    ok = ok and placements_ok and not stale
    print(f"\n{'PASS' if ok else 'FAIL'}: {report.summary(result)}; bound {report.LOSO_MEDIAN_BOUND:.0%}"
          + "".join(f"\n  {problem}" for problem in problems))
    return 0 if ok else 1


def _calibrate(figures, profiles: dict, stacks: dict, targets: dict, write_to: Path | None = None) -> int:
    fitted = calibration.fit(figures, profiles, stacks, targets)
    physics = {"wafer": {name: float(stored_value_text(value)) for name, value in fitted.physics}}
    constants = {name: {constant: float(stored_value_text(getattr(stack, constant)))
                        for constant in (*stack.fitted, *stack.pooled)}
                 for name, stack in sorted(fitted.stacks.items()) if stack.fitted or stack.pooled}
    if write_to is None:
        print("# config/hardware.yaml")
        print(yaml.safe_dump({"calibrated": physics}, sort_keys=False).rstrip())
        print("# config/stacks.yaml: the fitted and pooled constants of each stack")
        print(yaml.safe_dump({"stacks": constants}, sort_keys=False).rstrip())
        return 0
    for file, values in ((write_to / HARDWARE_FILE, physics), (write_to / STACKS_FILE, constants)):
        text, changes = store_values(file.read_text(encoding="utf-8"), values)
        file.write_text(text, encoding="utf-8")
        print(f"{file}: {len(changes)} constant(s) changed" + "".join(f"\n  {change}" for change in changes))
    return 0


def _refresh_docs(path: Path, tables: dict) -> None:
    text, refreshed = report.refresh_tables(path.read_text(encoding="utf-8"), tables)
    path.write_text(text, encoding="utf-8")
    print(f"{path}: refreshed {', '.join(refreshed) or 'no table'}")


def _data_paths(config_dir: str | None) -> dict:
    """The data files to read: the installed package's (None) or those of ``config_dir``."""
    if not config_dir:
        return dict.fromkeys(("hardware", "stacks", "targets", "figures"))
    folder = Path(config_dir).expanduser()
    return {"hardware": folder / HARDWARE_FILE, "stacks": folder / STACKS_FILE, "targets": folder / TARGETS_FILE,
            "figures": folder / FIGURES_FILE}


def _list(profiles: dict, stacks: tuple, targets: dict) -> int:
    named, defaults = stacks
    for name, profile in sorted(profiles.items()):
        print(f"hardware {name:10s} {profile.kind:6s} default stack {defaults.get(name, '-'):24s} {profile.source}")
    for name, stack in sorted(named.items()):
        print(f"stack    {name:24s} {stack.date}  on {', '.join(stack.hardware):18s} {stack.source}")
    for name, target in sorted(targets.items()):
        print(f"target   {name:30s} {target.total_params / 1e9:9.3f} B params  {target.source}")
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.write and not (args.calibrate and args.config_dir):
        parser.error("--write stores fitted constants: it needs --calibrate and --config-dir")
    if args.write_docs and not args.validate:
        parser.error("--write-docs needs --validate")
    try:
        settings = _settings(args)
        extra = [*extra_files(settings), *args.hardware_file]
        paths = _data_paths(args.config_dir)
        profiles = hardware_profiles(extra, hardware_path=paths["hardware"])
        stacks = serving_stacks(extra, stacks_path=paths["stacks"])
        targets = target_models(args.model_dir, targets_path=paths["targets"])
        if args.list:
            return _list(profiles, stacks, targets)
        if args.validate:
            return _validate(published_figures(paths["figures"]), profiles, stacks[0], targets, args.write_docs)
        if args.calibrate:
            return _calibrate(published_figures(paths["figures"]), profiles, stacks[0], targets,
                              Path(args.config_dir) if args.write else None)
        emulator = emulator_from_settings(settings, profiles, stacks, targets)
        if args.placement:
            print(placement_report(emulator.placement))
            if emulator.draft_placement is not None:
                print(placement_report(emulator.draft_placement))
            return 0
        timing = emulator.plan_time(args.prompt_tokens, args.generated_tokens,
                                    reasoning_tokens=args.reasoning_tokens)
    except (EmulatorDataError, OSError, calibration.CalibrationError, ValueError) as error:
        print(f"wafer-reasoner emulate: {error}", file=sys.stderr)
        return 2
    print(json.dumps(timing.to_dict(), indent=2) if args.json else _timing_text(timing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
