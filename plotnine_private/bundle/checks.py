"""The output checks of a bundle: rule-of-thumb checks on a layer's
released counts and its output entry in ``results.json`` (ACRO's
layout)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..report.composition import trained_axes

FIGURE = "figure.png"
_STATBARN = "https://www.w3id.org/statbarnsdc#"


# --------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------
def _count_column(table: pd.DataFrame) -> str | None:
    for c in ("count", "n"):
        if c in table.columns:
            return c
    return None


def _cell_checks(table: pd.DataFrame, rules: dict[str, Any]):
    """Rule-of-thumb flags on released counts: (flags per row, sdc)."""
    col = _count_column(table)
    flags: list[list[str]] = [[] for _ in range(len(table))]
    cells: dict[str, list] = {"threshold": [], "zeros": [], "negative": []}
    if col is not None:
        j = list(table.columns).index(col)
        v = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
        for r, x in enumerate(v):
            if not np.isfinite(x):
                continue
            if x < 0:
                cells["negative"].append([r, j])
                flags[r].append("negative")
            elif x == 0:
                if rules["zeros_are_disclosive"]:
                    cells["zeros"].append([r, j])
                    flags[r].append("zero")
            elif x < rules["threshold"]:
                cells["threshold"].append([r, j])
                flags[r].append("threshold")
    sdc = {
        "summary": {
            "suppressed": False,
            "negative": len(cells["negative"]),
            "missing": 0,
            "threshold": len(cells["threshold"]),
            "zeros": len(cells["zeros"]),
            "checked_column": col,
        },
        "cells": cells,
    }
    return flags, sdc


#: what each family releases, in words for the method statement
_STATISTICS = {
    "count": "counts",
    "bin": "histogram counts",
    "bin2d": "2-D histogram counts",
    "binhex": "hexagon counts",
    "bin_hex": "hexagon counts",
    # stat_sum (geom_count): how many records lie at each point
    "sum": "counts at each point",
    "boxplot": "quartiles and whiskers (read from a noisy fine histogram)",
    "violin": "densities (from a noisy fine histogram)",
    "density": "densities (from a noisy fine histogram)",
    "ecdf": "ECDFs (from a noisy fine histogram)",
    "dp_pca_score": "PCA directions, ranges and score counts",
}
_SUMMARIES = {
    "mean": "means (noisy totals over noisy record counts)",
    "sum": "totals and record counts",
    "quantile": "quantiles (read from a noisy fine histogram)",
}


def released_statistic(stat: Any) -> str:
    """What a private layer's stat releases, in words (``"means (noisy
    totals over noisy record counts)"``): the method statement says it
    per statistic."""
    name = type(stat).__name__.removeprefix("stat_")
    family = name.rsplit("_", 1)[0] if name.endswith(("_dp", "_ckm")) else name
    if family == "summary":
        return _SUMMARIES.get(str(stat.params.get("fun")), "summaries")
    return _STATISTICS.get(family, "values")


def _output_type(stat_name: str) -> tuple[str, str | None]:
    """(ACRO-style output type, statbarn class) of a stat; a statistic
    that is no frequency (a mean, a quantile, a curve) claims no class."""
    name = stat_name.removeprefix("stat_")
    if name.startswith(("bin_hex", "binhex")):
        return "hexbin plot", "Frequencies"
    if name.startswith(("bin2d", "bin_2d")):
        return "2-D histogram", "Frequencies"
    if name.startswith("bin"):
        return "histogram", "Histogram"
    if name.startswith("count"):
        return "bar graph", "BarGraph"
    if name.startswith("summary"):
        return "summary plot", None
    if name.startswith("sum"):
        # stat_sum (geom_count): records counted at each point
        return "point counts", "Frequencies"
    if "pca" in name:
        return "PCA score histogram", "Frequencies"
    if name.startswith(("boxplot", "density", "ecdf", "violin")):
        return "distribution plot", None
    return "custom", None


def _layer_output(
    i: int,
    lyr,
    rows: list[dict],
    table: pd.DataFrame | None,
    csv_name: str | None,
    rules: dict[str, Any],
    command: str,
    timestamp: str,
    comments: list[str],
) -> dict[str, Any]:
    from ..report.composition import COLUMNS
    from ..report.presentation import plain

    # what a checker needs of each release (the report's columns that
    # describe the mechanism, not the layer or the seed policy)
    skip = {"layer", "stat", "geom", "seed_policy"}
    release_fields = [c for c in COLUMNS if c not in skip]

    stat_name = type(lyr.stat).__name__
    otype, statbarn = _output_type(stat_name)
    privacy = [{k: plain(r[k]) for k in release_fields} for r in rows]
    mechanisms = {r["mechanism"] for r in rows if r["mechanism"]}
    properties: dict[str, Any] = {
        "method": stat_name,
        "geom": type(lyr.geom).__name__,
        "statbarn": None if statbarn is None else _STATBARN + statbarn,
        "statistic": released_statistic(lyr.stat),
        "seed_policy": rows[0]["seed_policy"] if rows else None,
        # what one protected unit is (a person with at most k records)
        "privacy_unit": rows[0]["unit"] if rows else None,
        "releases": privacy,
    }
    files: list[dict[str, Any]] = [{"name": FIGURE, "sdc": {}}]
    outcome: dict[str, str] = {}
    if table is None:
        status = "review"
        properties["mitigation"] = None
        axes = trained_axes(lyr)
        properties["trains"] = axes
        trains = (
            f" It trains the {' and '.join(axes)} axis from its data (the "
            "axis range can show its values, even where it draws nothing)."
            if axes
            else ""
        )
        summary = (
            "review; this layer is not protected by any privacy mechanism "
            "(it draws its data as given); its values are not exported. "
            f"A checker must judge whether its data is public.{trains}"
        )
        otype = "custom"
    else:
        flags, sdc = _cell_checks(table, rules)
        files.insert(0, {"name": csv_name, "sdc": sdc})
        outcome = {
            str(r): "; ".join(f) + "; " if f else "ok"
            for r, f in enumerate(flags)
        }
        n_thr = sdc["summary"]["threshold"]
        n_zero = sdc["summary"]["zeros"]
        rule = (
            f"{n_thr} cell(s) with a released count below "
            f"{rules['threshold']}, {n_zero} zero cell(s)"
        )
        if mechanisms == {"ckm"}:
            properties["mitigation"] = "CKM"
            if n_thr or sdc["summary"]["negative"]:
                status = "fail"
            elif n_zero:
                status = "review"
            else:
                status = "pass"
            summary = (
                f"{status}; Cell Key Method (no formal privacy guarantee): "
                f"checked on the released values: {rule}. CKM zero cells "
                "are true zeros. Differencing across overlapping outputs "
                "needs manual review."
            )
        else:
            properties["mitigation"] = "Noise"
            eps = sum((r["charged_eps"] or 0.0) for r in rows)
            status = "pass"
            summary = (
                "pass; differential privacy (noise is the mitigation, "
                f"eps charged {eps:.6g}): every value shown is noisy, so the "
                f"threshold checks are informational only: {rule} after "
                "noise."
            )
            if table is not None and "thresholded" in {
                r["domain"] for r in rows
            }:
                summary += (
                    " Cells were selected from the data by a noisy "
                    "threshold (eps, delta)."
                )
    return {
        "uid": f"output_{i}",
        "status": status,
        "type": otype,
        "properties": properties,
        "files": files,
        "outcome": outcome,
        "command": command,
        "summary": summary,
        "timestamp": timestamp,
        "comments": list(comments),
        "exception": "",
    }
