"""Reading and checking the emulator's YAML data (config/hardware.yaml, config/target_models.yaml, ...).

The emulator never looks for files: callers pass paths (``runtime/resources.py`` finds the package's own).

Every loader turns a mapping into a frozen dataclass through :func:`build`, which names the file, the entry and
the field in its error: a missing or unknown field, a non-number, a negative bandwidth, a fraction above 1.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import yaml


class EmulatorDataError(ValueError):
    """A profile, target or emulator setting is missing, malformed or physically impossible."""


def read_yaml(path) -> dict:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError, RecursionError) as error:  # ValueError: bad UTF-8, huge ints
        raise EmulatorDataError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{path}: expected a mapping at the top level")
    return data


def _number(where: str, value) -> float:
    if isinstance(value, str):  # PyYAML (YAML 1.1) reads 2.0e15 without an exponent sign as text
        try:
            value = float(value)
        except ValueError:
            raise EmulatorDataError(f"{where}: expected a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EmulatorDataError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise EmulatorDataError(f"{where}: expected a finite number, got {value!r}")
    return value


def check_value(where: str, name: str, value, kind: str):
    """``kind``: 'positive', 'nonnegative', 'fraction' (0 < x <= 1), 'count' (int >= 1), 'text', 'flag'."""
    label = f"{where}: field '{name}'"
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            raise EmulatorDataError(f"{label}: expected text, got {value!r}")
        return value
    if kind == "flag":
        if not isinstance(value, bool):
            raise EmulatorDataError(f"{label}: expected true or false, got {value!r}")
        return value
    number = _number(label, value)
    if kind == "count":
        if int(number) != number or number < 1:
            raise EmulatorDataError(f"{label}: expected a whole number >= 1, got {value!r}")
        return int(number)
    if kind == "positive" and number <= 0:
        raise EmulatorDataError(f"{label}: must be > 0, got {value!r}")
    if kind == "nonnegative" and number < 0:
        raise EmulatorDataError(f"{label}: must be >= 0, got {value!r}")
    if kind == "fraction" and not 0 < number <= 1:
        raise EmulatorDataError(f"{label}: must be in (0, 1], got {value!r}")
    return float(number)


def build(cls, where: str, data: dict, kinds: dict, *, defaults: dict | None = None, sourced: tuple = ()):
    """Make ``cls`` from ``data``: every field of ``kinds`` checked, unknown keys refused.

    ``sourced``: fields that need an entry in ``data['sources']`` (a short note on where the figure comes from).
    """
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping, got {type(data).__name__}")
    merged = dict(defaults or {})
    merged.update(data)
    field_names = {field.name for field in dataclasses.fields(cls)}
    unknown = sorted(set(merged) - field_names)
    if unknown:
        raise EmulatorDataError(f"{where}: unknown field(s) {', '.join(unknown)}")
    values = {}
    for name, kind in kinds.items():
        if name not in merged:
            raise EmulatorDataError(f"{where}: missing field '{name}'")
        values[name] = check_value(where, name, merged[name], kind)
    sources = merged.get("sources", {})
    if sourced:
        if not isinstance(sources, dict):
            raise EmulatorDataError(f"{where}: 'sources' must map field names to text")
        missing = [name for name in sourced if not isinstance(sources.get(name), str) or not sources[name].strip()]
        if missing:
            raise EmulatorDataError(f"{where}: no source given for {', '.join(missing)} (add them under 'sources')")
        values["sources"] = tuple(sorted((name, text) for name, text in sources.items()))
    return cls(**values)


_BLOCK = re.compile(r"^  ([A-Za-z0-9][\w.\-]*):\s*$")  # an entry of a top-level section ("  gpt-fast-2024:")
_VALUE = re.compile(r"^    (\w+): (\S+)\s*$")  # one of its scalar fields ("    memory_efficiency: 0.6538")


def stored_value_text(value: float) -> str:
    """A fitted constant as the data files store it: 4 significant figures."""
    value = float(f"{value:.4g}")
    return "0" if value == 0 else repr(value)


def store_values(text: str, values: dict) -> tuple:
    """``text`` (a hardware or stacks YAML file) with ``values`` ({entry: {field: number}}) written over the
    entries' existing scalar fields, comments and layout kept: (new text, ['entry.field: old -> new', ...]).
    A field named in ``values`` that the file does not hold is an error (nothing is added silently)."""
    lines, entry, written, changes = text.split("\n"), None, set(), []
    for index, line in enumerate(lines):
        block = _BLOCK.match(line)
        if block:
            entry = block.group(1)
            continue
        field = _VALUE.match(line)
        if entry not in values or not field or field.group(1) not in values[entry]:
            continue
        name, old = field.group(1), field.group(2)
        new = stored_value_text(values[entry][name])
        written.add((entry, name))
        if _number(f"{entry}.{name}", old) != float(new):
            lines[index] = f"    {name}: {new}"
            changes.append(f"{entry}.{name}: {old} -> {new}")
    missing = sorted(f"{entry}.{name}" for entry, fields in values.items() for name in fields
                     if (entry, name) not in written)
    if missing:
        raise EmulatorDataError(f"no stored value to replace for {', '.join(missing)}")
    return "\n".join(lines), changes
