"""Node parameters declared one way for every node: typed by their default, described, ranged, read-only.

    PARAMETERS = {"control_rate_hz": Param(20.0, "Executor tick rate, Hz.", 1.0, 200.0), ...}
    declare_parameters(node, PARAMETERS)
    values = parameter_values(node, PARAMETERS)          # {name: value}

Each node's table is mirrored in its ``config/*.yaml`` (the tests compare them). Write doubles with a decimal
point in YAML: a double parameter rejects ``20``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType

_TYPES = {
    bool: ParameterType.PARAMETER_BOOL,
    int: ParameterType.PARAMETER_INTEGER,
    float: ParameterType.PARAMETER_DOUBLE,
    str: ParameterType.PARAMETER_STRING,
}


@dataclass(frozen=True)
class Param:
    """One declared parameter: its default (which fixes its type), description and optional range."""

    default: object
    description: str
    low: float | int | None = None
    high: float | int | None = None


def descriptor(param: Param) -> ParameterDescriptor:
    result = ParameterDescriptor(type=_TYPES[type(param.default)], description=param.description, read_only=True)
    if isinstance(param.default, float) and param.low is not None:
        result.floating_point_range = [FloatingPointRange(from_value=param.low, to_value=param.high, step=0.0)]
    elif isinstance(param.default, int) and not isinstance(param.default, bool) and param.low is not None:
        result.integer_range = [IntegerRange(from_value=param.low, to_value=param.high, step=1)]
    return result


def declare_parameters(node, table: dict) -> None:
    for name, param in table.items():
        node.declare_parameter(name, param.default, descriptor(param))


def parameter_values(node, table: dict, prefix: str = "") -> dict:
    """{name: value} of the table's parameters whose names start with ``prefix``, the prefix removed."""
    return {name[len(prefix):]: node.get_parameter(name).value for name in table if name.startswith(prefix)}
