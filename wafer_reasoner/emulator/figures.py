"""Published single-request inference figures (config/published_figures.yaml; docs/emulator.md lists them).

Each row names the target preset, the hardware profile and the serving stack, the serving configuration the
source states (precision, grid, systems, tensor parallelism, speculative decoding, a stated acceptance length)
and, where the source is silent, what is assumed (``note``). ``calibrates`` names the physics constants a row
fits (hardware.yaml's ``calibrated`` block); every other row validates: leave-one-stack-out, its stack's software
constants are taken from the other stacks' fits (calibration.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wafer_reasoner.emulator.datafiles import EmulatorDataError, build, read_yaml
from wafer_reasoner.emulator.targets import GROUPS, precision_pairs

DECODE = "decode_tokens_per_s"  # single-stream decode rate, tokens/s
FIRST_TOKEN = "first_token_s"  # time to first token, s
METRICS = (DECODE, FIRST_TOKEN)
# Where a first-token row's clock sits: inside the engine, a client on the server's own node (loopback HTTP), or
# a client across a network (a cloud API, an independent measurement service). Only a network client pays the
# stack's serving overhead (the API gateway, the network, queueing before the first token).
CLIENTS = ("engine", "node", "network")
NETWORK = "network"
ROW_CONTEXT_TOKENS = 1024  # context a decode rate is charged at when the source does not say
PHYSICS_CONSTANTS = ("fabric_hop_latency_s",)


@dataclass(frozen=True)
class PublishedFigure:
    key: str  # short row id
    target: str  # preset in config/target_models.yaml
    hardware: str  # profile in config/hardware.yaml
    stack: str  # serving stack in config/stacks.yaml
    metric: str  # DECODE or FIRST_TOKEN
    published: float
    source: str
    date: str  # "YYYY-MM" the figure was published
    setup: str  # the configuration in words (the table's "setup" column)
    note: str = ""  # what is assumed where the source is silent
    precision: tuple = ()  # ((group or "default", bytes per parameter), ...): serving precision the source states
    grid: tuple | None = None  # wafer grid (rows, cols) of the published run
    systems: int | None = None  # wafer systems of the published run
    tensor_parallel: int | None = None
    speculative: bool = True  # False: decoded without the stack's speculation for this target
    acceptance_length: float = 0.0  # mean tokens per speculative step, where the source states it (0: not)
    prompt_tokens: int = 0  # FIRST_TOKEN rows
    client: str = ""  # FIRST_TOKEN rows: where the clock sits (CLIENTS)
    context_tokens: int = ROW_CONTEXT_TOKENS  # DECODE rows: the context the rate is charged at
    calibrates: tuple = ()  # physics constants this row fits

    @property
    def role(self) -> str:
        return "calibration" if self.calibrates else "validation"

    @property
    def pays_serving_overhead(self) -> bool:
        """A first-token row measured across a network: the stack's serving overhead is in its figure."""
        return self.metric == FIRST_TOKEN and self.client == NETWORK


ROW_KINDS = {"key": "text", "target": "text", "hardware": "text", "stack": "text", "metric": "text",
             "published": "positive", "source": "text", "date": "text", "setup": "text",
             "speculative": "flag", "acceptance_length": "nonnegative", "prompt_tokens": "nonnegative",
             "context_tokens": "count"}
ROW_DEFAULTS = {"speculative": True, "acceptance_length": 0.0, "prompt_tokens": 0,
                "context_tokens": ROW_CONTEXT_TOKENS}
OPTIONAL = ("note", "precision", "grid", "systems", "tensor_parallel", "calibrates", "client")


def figure_from_dict(data: dict, *, where: str) -> PublishedFigure:
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping")
    where = f"{where} row {data.get('key', '?')!r}"
    extra = {name: data[name] for name in OPTIONAL if name in data}
    figure = build(PublishedFigure, where, {k: v for k, v in data.items() if k not in OPTIONAL}, ROW_KINDS,
                   defaults=ROW_DEFAULTS)
    if figure.metric not in METRICS:
        raise EmulatorDataError(f"{where}: metric must be one of {', '.join(METRICS)}")
    if figure.metric == FIRST_TOKEN and figure.prompt_tokens < 1:
        raise EmulatorDataError(f"{where}: a first-token row needs prompt_tokens")
    client = extra.get("client", "")
    if figure.metric == FIRST_TOKEN and client not in CLIENTS:
        raise EmulatorDataError(f"{where}: a first-token row needs client: one of {', '.join(CLIENTS)} (where its "
                                f"clock sits), got {client!r}")
    if figure.metric == DECODE and client:
        raise EmulatorDataError(f"{where}: 'client' is for first-token rows (a decode rate has no serving path)")
    precision = extra.get("precision")
    if isinstance(precision, (int, float)) and not isinstance(precision, bool):
        precision = {"default": precision}
    pairs = precision_pairs(where, {k: v for k, v in (precision or {}).items() if k != "default"})
    if precision and "default" in precision:
        pairs = (("default", float(precision["default"])),) + pairs
    calibrates = tuple(extra.get("calibrates") or ())
    if set(calibrates) - set(PHYSICS_CONSTANTS):
        raise EmulatorDataError(f"{where}: 'calibrates' names physics constants only ({', '.join(PHYSICS_CONSTANTS)})")
    grid = extra.get("grid")
    return PublishedFigure(**{**vars(figure), "note": extra.get("note", ""), "precision": pairs,
                              "grid": tuple(grid) if grid else None, "systems": extra.get("systems"),
                              "tensor_parallel": extra.get("tensor_parallel"), "calibrates": calibrates,
                              "prompt_tokens": int(figure.prompt_tokens), "client": client})


def load_figures(path) -> tuple:
    """The published rows of a figures file (config/published_figures.yaml), in file order; keys unique."""
    path = Path(path)
    rows = read_yaml(path).get("rows")
    if not isinstance(rows, list) or not rows:
        raise EmulatorDataError(f"{path}: expected a non-empty 'rows' list")
    figures = tuple(figure_from_dict(row, where=str(path)) for row in rows)
    keys = [row.key for row in figures]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise EmulatorDataError(f"{path}: duplicate row key(s) {', '.join(duplicates)}")
    return figures


def figure(figures, key: str) -> PublishedFigure:
    for row in figures:
        if row.key == key:
            return row
    raise KeyError(key)


__all__ = ["DECODE", "FIRST_TOKEN", "GROUPS", "PublishedFigure", "figure", "load_figures"]
