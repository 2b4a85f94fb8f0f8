"""Hardware profiles as data: wafer-scale engines (a grid of small cores) and devices (GPUs, the host CPU).

config/hardware.yaml holds one entry per profile, the unit in every field name and a source for every figure.
Only physics lives here: what the hardware itself does, whatever software runs on it. The software's constants
(kernel efficiency, collective and launch costs, serving overhead) belong to a serving stack (stacks.py).
The ``calibrated`` section holds the physics constants fitted on named published rows (calibration.py) and
applies to every profile of that kind that does not set them itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wafer_reasoner.emulator.datafiles import EmulatorDataError, build, read_yaml

LINKS_PER_CORE = 4  # a wafer core's router has N/E/S/W fabric links (Cerebras WSE architecture)


@dataclass(frozen=True)
class WaferProfile:
    name: str
    kind: str  # "wafer"
    cores: int  # cores on the wafer (published)
    fabric_rows: int  # usable grid the software can place on
    fabric_cols: int
    sram_bytes_per_core: float
    sram_bytes_per_s_total: float  # aggregate SRAM bandwidth (published)
    fabric_bits_per_s_total: float  # aggregate fabric bandwidth (published)
    peak_flops_per_s_total: float  # dense 16-bit
    sram_usable_fraction: float  # share of each core's SRAM free for weights + KV (the rest: code, buffers)
    system_link_bytes_per_s: float  # one system's I/O to the next system
    fabric_hop_latency_s: float  # one core-to-core hop on the fabric (calibrated)
    source: str
    sources: tuple = ()

    @property
    def grid_cores(self) -> int:
        return self.fabric_rows * self.fabric_cols

    @property
    def usable_bytes_per_core(self) -> float:
        return self.sram_bytes_per_core * self.sram_usable_fraction

    @property
    def sram_bytes_per_s_per_core(self) -> float:
        return self.sram_bytes_per_s_total / self.cores

    @property
    def flops_per_s_per_core(self) -> float:
        return self.peak_flops_per_s_total / self.cores

    @property
    def fabric_link_bytes_per_s(self) -> float:
        """One link, one direction: aggregate fabric bandwidth over cores x 4 links x 2 directions."""
        return self.fabric_bits_per_s_total / 8.0 / self.cores / (2 * LINKS_PER_CORE)


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    kind: str  # "gpu" or "cpu"
    memory_bytes: float  # HBM (GPU) or RAM (host) of one device
    memory_bytes_per_s: float  # peak memory bandwidth of one device
    peak_flops_per_s: float  # dense 16-bit tensor FLOP/s (host: measured float32 matmul)
    devices_per_node: int  # devices joined by the fast device link (NVLink) in one node
    device_link_bytes_per_s: float  # per device, one direction (0 when devices_per_node is 1)
    node_link_bytes_per_s: float  # per device, between nodes (InfiniBand)
    node_link_latency_s: float  # one hand-off between nodes
    memory_usable_fraction: float  # share of memory free for weights + KV (runtime, activations take the rest)
    source: str
    sources: tuple = ()

    @property
    def usable_bytes(self) -> float:
        return self.memory_bytes * self.memory_usable_fraction


HardwareProfile = WaferProfile | DeviceProfile

WAFER_KINDS = {
    "name": "text", "kind": "text", "cores": "count", "fabric_rows": "count", "fabric_cols": "count",
    "sram_bytes_per_core": "positive", "sram_bytes_per_s_total": "positive", "fabric_bits_per_s_total": "positive",
    "peak_flops_per_s_total": "positive", "sram_usable_fraction": "fraction", "system_link_bytes_per_s": "positive",
    "fabric_hop_latency_s": "nonnegative", "source": "text",
}
DEVICE_KINDS = {
    "name": "text", "kind": "text", "memory_bytes": "positive", "memory_bytes_per_s": "positive",
    "peak_flops_per_s": "positive", "devices_per_node": "count", "device_link_bytes_per_s": "nonnegative",
    "node_link_bytes_per_s": "positive", "node_link_latency_s": "nonnegative", "memory_usable_fraction": "fraction",
    "source": "text",
}
KINDS = {"wafer": (WaferProfile, WAFER_KINDS), "gpu": (DeviceProfile, DEVICE_KINDS),
         "cpu": (DeviceProfile, DEVICE_KINDS)}
# The fitted physics constants, per kind: fitted by calibration.py, stored under 'calibrated'.
CALIBRATED_FIELDS = {"wafer": ("fabric_hop_latency_s",)}


def profile_from_dict(name: str, data: dict, *, calibrated: dict | None = None, where: str = "hardware"):
    where = f"{where} profile '{name}'"
    if not isinstance(data, dict):
        raise EmulatorDataError(f"{where}: expected a mapping")
    kind = data.get("kind")
    if kind not in KINDS:
        raise EmulatorDataError(f"{where}: 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    cls, kinds = KINDS[kind]
    defaults = {}
    sources = dict(data.get("sources") or {})
    fitted = (calibrated or {}).get(kind, {})
    for field in CALIBRATED_FIELDS.get(kind, ()):
        if field not in data and field in fitted:
            defaults[field] = fitted[field]
            sources.setdefault(field, fitted.get("sources", {}).get(field, "calibrated"))
    numeric = tuple(field for field, check in kinds.items() if check not in ("text", "flag"))
    profile = build(cls, where, {**data, "name": name, "sources": sources}, kinds, defaults=defaults,
                    sourced=numeric)
    if kind == "gpu" and profile.devices_per_node > 1 and profile.device_link_bytes_per_s <= 0:
        raise EmulatorDataError(f"{where}: devices_per_node > 1 needs device_link_bytes_per_s > 0")
    if kind == "wafer" and profile.grid_cores > profile.cores:
        raise EmulatorDataError(f"{where}: fabric_rows x fabric_cols exceeds cores")
    return profile


def load_hardware(path, extra_paths=()) -> dict:
    """{name: profile} from a hardware file (config/hardware.yaml), then from each extra file (e.g. a fresh host
    bench)."""
    profiles, calibrated = {}, {}
    for file in [Path(path), *map(Path, extra_paths)]:
        data = read_yaml(file)
        entries = data.get("profiles")
        if not isinstance(entries, dict) or not entries:
            raise EmulatorDataError(f"{file}: expected a non-empty 'profiles' mapping")
        for kind, fitted in (data.get("calibrated") or {}).items():
            calibrated[kind] = {**calibrated.get(kind, {}), **fitted}
        for name, entry in entries.items():
            profiles[str(name)] = profile_from_dict(str(name), entry, calibrated=calibrated, where=str(file))
    return profiles


def pick(profiles: dict, name: str, what: str = "hardware profile"):
    """profiles[name] with an error that lists the known names."""
    if name not in profiles:
        raise EmulatorDataError(f"unknown {what} {name!r}; known: {', '.join(sorted(profiles))}")
    return profiles[name]
