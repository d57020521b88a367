"""The five things a case compares: statistical columns, panels (ranges
and breaks), legends, and for a drawn case its texts and its image."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.testing.compare import calculate_rms

from .cases import Case
from .harness import Built, build_pair, save_images

ASPECTS = ("stat", "panels", "legends", "labels", "image")
#: what a case that is built, not drawn, compares
BUILT_ASPECTS = ASPECTS[:3]

#: columns each family computes (compared where both sides have them)
STAT_COLUMNS = {
    "count": ("x", "count", "prop", "width", "y", "ymin", "ymax", "group"),
    "bin": (
        "x",
        "xmin",
        "xmax",
        "count",
        "density",
        "ncount",
        "ndensity",
        "width",
        "y",
        "ymin",
        "ymax",
        "group",
    ),
    "bin_2d": ("xmin", "xmax", "ymin", "ymax", "count", "density", "group"),
    "sum": ("x", "y", "n", "prop", "size", "group"),
    "summary": ("x", "y", "ymin", "ymax", "group"),
    "boxplot": ("x", "ymin", "lower", "middle", "upper", "ymax", "group"),
}
#: families drawn from one fine histogram: curves agree to a tolerance
FINE = {"density": "density", "ecdf": "ecdf", "boxplot": None}
#: zero cells: plotnine leaves them out, the private twin releases them
ZERO_DROPPED = {"count": "count", "bin_2d": "count", "sum": "n"}
#: RMS pixel difference allowed between the two images
IMAGE_TOL = {"density": 6.0, "ecdf": 6.0, "boxplot": 6.0}


def _pair(case: Case, cache: dict) -> tuple[Built, Built]:
    if case.id not in cache:
        cache[case.id] = build_pair(case, cache.setdefault("plotnine", {}))
    return cache[case.id]


def _sorted(d: pd.DataFrame) -> pd.DataFrame:
    keys = [
        c
        for c in ("PANEL", "x", "xmin", "y", "ymin", "group")
        if c in d.columns
    ]
    if "PANEL" in d.columns:
        d = d.assign(PANEL=d["PANEL"].astype(int))
    return d.sort_values(keys, kind="stable").reset_index(drop=True)


def _nonzero(d: pd.DataFrame, family: str) -> pd.DataFrame:
    col = ZERO_DROPPED.get(family)
    if col and col in d.columns:
        d = d[d[col].astype(float) != 0]
    return d


def _num(s: pd.Series) -> np.ndarray:
    return np.asarray(pd.to_numeric(s, errors="coerce"), dtype=float)


def _group_ranks(s: pd.Series) -> np.ndarray:
    v = s.to_numpy(dtype=np.int64)
    ranks = pd.Series(v).rank(method="dense").to_numpy(dtype=np.int64)
    return np.where(v < 0, v, ranks)


def _fine_tolerance(pn: pd.DataFrame, col: str) -> float:
    v = _num(pn[col])
    return 0.04 * (np.nanmax(np.abs(v)) if len(v) else 1.0) + 1e-9


def _check_curves(case, pn, pr, col) -> None:
    """Private curve, read at plotnine's x, within 4% of its maximum."""
    for key, a in pn.groupby(["PANEL", "group"], observed=True):
        b = pr[
            (pr["PANEL"].astype(int) == int(key[0])) & (pr["group"] == key[1])
        ]
        assert len(b), f"{case.id}: no private curve for panel/group {key}"
        b = b.sort_values("x")
        got = np.interp(_num(a["x"]), _num(b["x"]), _num(b[col]))
        np.testing.assert_allclose(
            got,
            _num(a[col]),
            atol=_fine_tolerance(pn, col),
            err_msg=f"{case.id}: {col} of panel/group {key}",
        )


def check_stat(case: Case, pn_all: list, pr_all: list) -> None:
    for i, (pn, pr) in enumerate(zip(pn_all, pr_all, strict=True)):
        if case.family in ("density", "ecdf") and i == 0:
            _check_curves(case, pn, pr, FINE[case.family])
            continue
        pn = _sorted(_nonzero(pn, case.family))
        pr = _sorted(_nonzero(pr, case.family))
        assert len(pn) == len(pr), (
            f"{case.id} layer {i}: {len(pn)} rows in plotnine, "
            f"{len(pr)} private\n{pn}\n{pr}"
        )
        cols = [
            c
            for c in STAT_COLUMNS.get(case.family, ())
            if c in pn.columns and c in pr.columns
        ]
        if "count" in cols and "weight" not in case.mapping:
            # a float count prints "57.0": the same type as plotnine's
            # (weighted, plotnine's type is the weights' own)
            assert pr["count"].dtype.kind == pn["count"].dtype.kind, (
                f"{case.id} layer {i}: count is {pr['count'].dtype}, "
                f"plotnine's {pn['count'].dtype}"
            )
        atol = 1e-9
        if case.family == "boxplot":
            # quantiles of the fine histogram against R's type 7 of the
            # records: on whole-number data up to about one unit apart
            atol = 1.5
        for c in cols:
            if c == "group":
                # ids are labels: the same partition in the same order
                # (-1, no group, must match exactly)
                a, b = _group_ranks(pn[c]), _group_ranks(pr[c])
                assert list(b) == list(a), f"{case.id} layer {i}: groups"
                continue
            np.testing.assert_allclose(
                _num(pr[c]),
                _num(pn[c]),
                rtol=1e-6,
                atol=atol,
                err_msg=f"{case.id} layer {i}: column {c!r}",
            )
        if "label" in pn.columns:
            assert list(pr["label"].astype(str)) == list(
                pn["label"].astype(str)
            ), f"{case.id} layer {i}: labels"


def check_panels(case: Case, pn: Built, pr: Built) -> None:
    fine = case.family in FINE
    assert len(pn.ranges) == len(pr.ranges), f"{case.id}: panel count"
    for k, (a, b) in enumerate(zip(pn.ranges, pr.ranges, strict=True)):
        for ax, ra, rb in zip("xy", a, b, strict=True):
            np.testing.assert_allclose(
                rb,
                ra,
                rtol=0.03 if fine else 1e-6,
                atol=1e-9,
                err_msg=f"{case.id}: panel {k + 1} {ax} range",
            )
    if not fine:
        for k, (a, b) in enumerate(zip(pn.breaks, pr.breaks, strict=True)):
            for ax, ba, bb in zip("xy", a, b, strict=True):
                assert len(ba) == len(bb), f"{case.id}: panel {k + 1} {ax}"
                np.testing.assert_allclose(
                    np.asarray(bb, dtype=float),
                    np.asarray(ba, dtype=float),
                    rtol=1e-6,
                    err_msg=f"{case.id}: panel {k + 1} {ax} breaks",
                )


def check(case: Case, aspect: str, cache: dict) -> None:
    pn, pr = _pair(case, cache)
    if aspect == "stat":
        check_stat(case, pn.data, pr.data)
    elif aspect == "panels":
        check_panels(case, pn, pr)
    elif aspect == "legends":
        assert pr.legends == pn.legends, f"{case.id}: legends"
    elif aspect == "labels":
        for part, shown in pn.texts.items():
            assert pr.texts[part] == shown, (
                f"{case.id}: {part}: {pr.texts[part]} private, "
                f"{shown} in plotnine"
            )
    else:
        tol = IMAGE_TOL.get(case.family, 1.0)
        if pn.image.shape != pr.image.shape:
            where = save_images(case, pn, pr)
            raise AssertionError(f"{case.id}: image sizes differ ({where})")
        rms = calculate_rms(pn.image.astype(float), pr.image.astype(float))
        if rms > tol:
            where = save_images(case, pn, pr)
            raise AssertionError(
                f"{case.id}: images differ, RMS {rms:.2f} > {tol} ({where})"
            )
