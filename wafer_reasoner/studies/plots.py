"""The hardware study's PNG plots, written the same bytes every time (matplotlib pinned in requirements-study.txt,
no timestamp or software version in the PNG metadata, the Agg backend)."""

from __future__ import annotations

import sys
from pathlib import Path

# PNG text chunks matplotlib would otherwise add (its version under "Software"); None drops a key.
PNG_METADATA = {"Software": None}
DPI = 120


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None (with a message) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots (pip install -r requirements-study.txt)", file=sys.stderr)
        return None
    return plt


def save(plt, figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI, metadata=PNG_METADATA)
    plt.close(figure)
    return path


def redirect_plot(plt, rows: list, title: str, path: Path) -> Path:
    """Wrong-way distance per profile, each bar labelled with its emulated latency."""
    rows = [row for row in rows if "wrong_way_m" in row]
    figure, axis = plt.subplots(figsize=(7, 4))
    axis.bar([row["profile"] for row in rows], [row["wrong_way_m"] for row in rows], color="tab:red")
    axis.set_ylabel("distance driven the wrong way (m)")
    axis.set_title(title, fontsize=9)
    for index, row in enumerate(rows):
        label = f"{row['emulated_ms']:.0f} ms" if row["emulated_ms"] < 10_000 else f"{row['emulated_ms'] / 1e3:.1f} s"
        axis.annotate(label, (index, row["wrong_way_m"]), ha="center", va="bottom", fontsize=8)
    axis.tick_params(axis="x", labelsize=8)
    return save(plt, figure, path)


def clutter_plot(plt, rows: list, title: str, path: Path) -> Path:
    figure, axis = plt.subplots(figsize=(7, 4))
    positions = range(len(rows))
    axis.bar([p - 0.2 for p in positions], [row["correct"] for row in rows], 0.4, label="correct plan")
    axis.bar([p + 0.2 for p in positions], [row["correct_within_deadline"] for row in rows], 0.4,
             label="correct within deadline")
    axis.set_xticks(list(positions), [row["profile"] for row in rows], fontsize=8)
    axis.set_ylim(0, 1)
    axis.set_ylabel("share of cases")
    axis.set_title(title, fontsize=9)
    axis.legend(loc="lower left")
    return save(plt, figure, path)


def reaction_plot(plt, rows: list, budgets: list, title: str, path: Path) -> Path:
    """Seconds to react per profile (log scale) against the reasoning budget, one line per profile."""
    figure, axis = plt.subplots(figsize=(7, 4))
    for row in rows:
        axis.plot(budgets, [row["reaction_s"][str(b)] for b in budgets], marker="o", label=row["profile"])
    axis.set_yscale("log")
    axis.set_xlabel("hidden reasoning tokens before the plan")
    axis.set_ylabel("emulated time to the plan (s)")
    axis.set_xticks(budgets)
    axis.grid(True, which="both", alpha=0.3)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7, ncol=2)
    return save(plt, figure, path)


def candidates_plot(plt, rows: list, deadlines: list, title: str, path: Path) -> Path:
    """The most best-of-N candidates that fit each deadline, per profile and budget."""
    figure, axes = plt.subplots(1, len(deadlines), figsize=(9, 4), sharey=True)
    axes = axes if len(deadlines) > 1 else [axes]
    budgets = sorted({row["reasoning_tokens"] for row in rows})
    profiles = list(dict.fromkeys(row["profile"] for row in rows))
    width = 0.8 / len(budgets)
    for axis, deadline in zip(axes, deadlines):
        for index, budget in enumerate(budgets):
            values = [next(r for r in rows if r["profile"] == p and r["reasoning_tokens"] == budget)
                      ["deadlines"][str(deadline)]["most_candidates"] for p in profiles]
            axis.bar([i - 0.4 + width * (index + 0.5) for i in range(len(profiles))], values, width,
                     label=f"{budget} tokens")
        axis.set_xticks(range(len(profiles)), profiles, rotation=45, ha="right", fontsize=7)
        axis.set_title(f"deadline {deadline / 1000:g} s", fontsize=9)
    axes[0].set_ylabel("best-of-N candidates that fit")
    axes[-1].legend(fontsize=7)
    figure.suptitle(title, fontsize=9)
    return save(plt, figure, path)
