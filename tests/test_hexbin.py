"""Hexagon lattice mechanism: ggplot2's exact geometry (spec hexbin 1.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plotnine_private.mechanisms.domains.hexbin import (
    default_binwidth,
    ggplot2_bounds,
    hex_assign,
    hex_cell_counts,
    hex_centres,
    hex_lattice,
    hex_vertices,
)
from plotnine_private.mechanisms.errors import ParameterError

SQRT3 = math.sqrt(3)

# the six neighbours of hexagon (row, col), for even and odd rows
_NEIGHBOURS = {
    0: [(0, -1), (0, 1), (1, -1), (1, 0), (-1, -1), (-1, 0)],
    1: [(0, -1), (0, 1), (1, 0), (1, 1), (-1, 0), (-1, 1)],
}


def _random_setup(seed: int, n: int = 20_000):
    rng = np.random.default_rng(seed)
    origin = tuple(rng.uniform(-2, 2, 2))
    binwidth = tuple(rng.uniform(0.1, 3, 2))
    x = rng.uniform(-10, 10, n)
    y = rng.uniform(-10, 10, n)
    return x, y, origin, binwidth


def _inside(points, verts, strict=False, tol=1e-9):
    """Points (n, 2) inside counter-clockwise convex polygons (n, k, 2)."""
    edge = np.roll(verts, -1, axis=1) - verts
    rel = points[:, None, :] - verts
    cross = edge[..., 0] * rel[..., 1] - edge[..., 1] * rel[..., 0]
    scale = np.abs(edge).max(axis=(1, 2))[:, None] ** 2
    if strict:
        return (cross > tol * scale).all(axis=1)
    return (cross >= -tol * scale).all(axis=1)


def _area(verts):
    """Shoelace area of polygons (n, k, 2)."""
    x, y = verts[..., 0], verts[..., 1]
    return 0.5 * np.abs(
        (x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y).sum(axis=1)
    )


# geometry ---------------------------------------------------------------


def test_vertices_are_ggplot2_offsets():
    w, h = 2.0, 3.0
    v = hex_vertices([10.0], [20.0], w, h)[0] - [10.0, 20.0]
    expected = [
        (w / 2, -h / (2 * SQRT3)),
        (w / 2, h / (2 * SQRT3)),
        (0, h / SQRT3),
        (-w / 2, h / (2 * SQRT3)),
        (-w / 2, -h / (2 * SQRT3)),
        (0, -h / SQRT3),
    ]
    np.testing.assert_allclose(v, expected)
    # flat-to-flat width w, tip-to-tip height 2h/sqrt(3): pointy-top
    assert np.ptp(v[:, 0]) == pytest.approx(w)
    assert np.ptp(v[:, 1]) == pytest.approx(2 * h / SQRT3)


def test_hexagon_is_regular_in_binwidth_units():
    w, h = 0.3, 7.0
    v = hex_vertices([0.0], [0.0], w, h)[0] / [w, h]
    radius = np.hypot(v[:, 0], v[:, 1])
    side = np.hypot(*(np.roll(v, -1, axis=0) - v).T)
    np.testing.assert_allclose(radius, 1 / SQRT3)
    np.testing.assert_allclose(side, 1 / SQRT3)


def test_hexagon_area_is_half_the_lattice_cell():
    # Area of a pointy-top hexagon of flat width w and tip height
    # H = 2h/sqrt(3): a w x H/2 rectangle plus two triangles of base w and
    # height H/4, i.e. w*h/sqrt(3) + w*h/(2*sqrt(3)) = sqrt(3)/2 * w * h.
    # (Not w*h*2/sqrt(3), which is the bounding box w * H.) Each lattice
    # cell w x sqrt(3)*h holds one A and one B hexagon, so the hexagons
    # tile the plane with no room for gaps or overlaps.
    rng = np.random.default_rng(3)
    w, h = rng.uniform(0.1, 5, 2)
    v = hex_vertices([0.0], [0.0], w, h)
    assert _area(v)[0] == pytest.approx(SQRT3 / 2 * w * h)
    assert 2 * _area(v)[0] == pytest.approx(w * SQRT3 * h)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_point_is_inside_its_hexagon(seed):
    x, y, origin, bw = _random_setup(seed)
    row, col = hex_assign(x, y, origin, bw)
    cx, cy = hex_centres(row, col, origin, bw)
    verts = hex_vertices(cx, cy, *bw)
    assert _inside(np.column_stack([x, y]), verts).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_no_point_is_inside_a_neighbouring_hexagon(seed):
    x, y, origin, bw = _random_setup(seed)
    row, col = hex_assign(x, y, origin, bw)
    points = np.column_stack([x, y])
    for parity in (0, 1):
        sel = row % 2 == parity
        for dr, dc in _NEIGHBOURS[parity]:
            cx, cy = hex_centres(row[sel] + dr, col[sel] + dc, origin, bw)
            verts = hex_vertices(cx, cy, *bw)
            assert not _inside(points[sel], verts, strict=True).any()


@pytest.mark.parametrize("seed", [0, 1])
def test_assigned_centre_is_nearest_in_binwidth_units(seed):
    x, y, origin, bw = _random_setup(seed)
    row, col = hex_assign(x, y, origin, bw)

    def dist2(r, c):
        cx, cy = hex_centres(r, c, origin, bw)
        return ((x - cx) / bw[0]) ** 2 + ((y - cy) / bw[1]) ** 2

    own = dist2(row, col)
    assert (own <= 1 / 3 + 1e-9).all()  # within the circumradius
    for parity in (0, 1):
        sel = row % 2 == parity
        for dr, dc in _NEIGHBOURS[parity]:
            other = dist2(row + dr, col + dc)
            assert (own[sel] <= other[sel] + 1e-12).all()


def test_centres_round_trip():
    rng = np.random.default_rng(5)
    row = rng.integers(-50, 50, 1000)
    col = rng.integers(-50, 50, 1000)
    origin, bw = (0.7, -3.1), (0.4, 2.5)
    cx, cy = hex_centres(row, col, origin, bw)
    r2, c2 = hex_assign(cx, cy, origin, bw)
    np.testing.assert_array_equal(r2, row)
    np.testing.assert_array_equal(c2, col)


def test_centre_formula():
    x, y = hex_centres([0, 1, 2, 3], [0, 0, 1, -1], (1.0, 2.0), (2.0, 4.0))
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0, 0.0])
    np.testing.assert_allclose(y, 2.0 + np.arange(4) * 4.0 * SQRT3 / 2)


# assignment, hand-checked -------------------------------------------------


def test_hand_checked_assignment():
    # binwidth 1: A centres at integer x on rows 0, 2, ... (y = k*sqrt(3)),
    # B centres at x + 1/2 on rows 1, 3, ... (y = sqrt(3)/2 + k*sqrt(3))
    x = [0.1, 0.45, 0.5, 0.6, 1.2, -0.3, 0.1]
    y = [0.1, 0.2, 0.9, 0.7, -0.2, -0.8, 1.6]
    row, col = hex_assign(x, y, (0.0, 0.0), 1.0)
    assert row.tolist() == [0, 0, 1, 1, 0, -1, 2]
    assert col.tolist() == [0, 0, 0, 0, 1, -1, 0]


def test_tie_between_a_and_b_goes_to_a():
    # (1/4, sqrt(3)/4)*bw is equidistant from A (0, 0) and B (1/2, sqrt3/2)
    # ggplot2/hexbin keep A (dist_A <= dist_B); matplotlib would pick B.
    # Coordinates are built so that the scaled values are exactly 1/4.
    for bwx, bwy in [(1.0, 1.0), (0.5, 2.0)]:
        x = 0.25 * bwx
        y = 0.25 * (bwy * SQRT3)
        row, col = hex_assign([x], [y], (0.0, 0.0), (bwx, bwy))
        assert (row[0], col[0]) == (0, 0)
        # a hair further from A flips it to B
        row, col = hex_assign([x], [y * (1 + 1e-9)], (0.0, 0.0), (bwx, bwy))
        assert (row[0], col[0]) == (1, 0)


def test_shared_vertical_side_goes_right():
    # x = 1/2 lies between A(0, 0) and A(0, 1); floor(sx + 1/2) rounds up
    row, col = hex_assign([0.5, 1.0], [0.0, SQRT3 / 2], (0.0, 0.0), 1.0)
    assert list(zip(row.tolist(), col.tolist())) == [(0, 1), (1, 1)]


def test_negative_coordinates_use_floor():
    row, col = hex_assign([-1.0, -0.4], [-SQRT3, 0.0], (0.0, 0.0), 1.0)
    assert list(zip(row.tolist(), col.tolist())) == [(-2, -1), (0, 0)]


def test_binwidth_pair_scales_axes_independently():
    x, y = np.array([0.3, 2.7]), np.array([5.0, -9.0])
    r1, c1 = hex_assign(x, y, (0.0, 0.0), (1.0, 1.0))
    r2, c2 = hex_assign(x * 3, y * 7, (0.0, 0.0), (3.0, 7.0))
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(c1, c2)


@pytest.mark.parametrize("bad", [0, -1, np.nan, (1, 0), (1, 2, 3), "a"])
def test_bad_binwidth_raises(bad):
    with pytest.raises(ParameterError, match="binwidth"):
        hex_assign([0.0], [0.0], (0.0, 0.0), bad)


# ggplot2 defaults -----------------------------------------------------


def test_ggplot2_bounds():
    assert ggplot2_bounds(0.3, 2.2, 0.5) == pytest.approx((-1e-6, 2.5 + 1e-6))
    lo, hi = ggplot2_bounds(-1.7, -0.2, 0.25)
    assert lo == pytest.approx(-1.75 - 1e-6)
    assert hi == pytest.approx(0.0 + 1e-6)
    # a value on a multiple stays there: floor/ceil do not widen
    assert ggplot2_bounds(1.0, 3.0, 1.0) == pytest.approx((1 - 1e-6, 3 + 1e-6))


def test_default_binwidth():
    assert default_binwidth((0, 3), (10, 40)) == pytest.approx((0.1, 1.0))
    assert default_binwidth((0, 3), (10, 40), (10, 60)) == pytest.approx(
        (0.3, 0.5)
    )
    with pytest.raises(ParameterError, match="bins"):
        default_binwidth((0, 1), (0, 1), 0)


# public lattice ---------------------------------------------------------


def _box_points(xlim, ylim, rng, n=60_000):
    """Random points in the box, on its edges and at its corners."""
    (x0, x1), (y0, y1) = xlim, ylim
    t = rng.uniform(0, 1, n // 6)
    xs = [rng.uniform(x0, x1, n), x0 + (x1 - x0) * t, x0 + (x1 - x0) * t]
    ys = [rng.uniform(y0, y1, n), np.full(t.size, y0), np.full(t.size, y1)]
    xs += [np.full(t.size, x0), np.full(t.size, x1), [x0, x0, x1, x1]]
    ys += [y0 + (y1 - y0) * t, y0 + (y1 - y0) * t, [y0, y1, y0, y1]]
    return np.concatenate(xs), np.concatenate(ys)


def _clip_to_box(poly, xlim, ylim):
    """Sutherland-Hodgman clip of a convex polygon (k, 2) to a box."""
    (x0, x1), (y0, y1) = xlim, ylim
    planes = [(0, x0, 1), (0, x1, -1), (1, y0, 1), (1, y1, -1)]
    pts = [tuple(p) for p in poly]
    for axis, bound, sign in planes:
        out = []
        for i, cur in enumerate(pts):
            prev = pts[i - 1]
            cin = sign * (cur[axis] - bound) >= 0
            pin = sign * (prev[axis] - bound) >= 0
            if cin != pin:
                t = (bound - prev[axis]) / (cur[axis] - prev[axis])
                q = [prev[0] + t * (cur[0] - prev[0])]
                q.append(prev[1] + t * (cur[1] - prev[1]))
                q[axis] = bound
                out.append(tuple(q))
            if cin:
                out.append(cur)
        pts = out
        if not pts:
            break
    return np.array(pts).reshape(-1, 2)


LATTICE_CASES = [
    # box, origin, binwidth
    ((0.0, 3.0), (0.0, SQRT3), (0.0, 0.0), (1.0, 1.0)),  # edges on lattice
    ((0.0, 1.0), (0.0, 0.5), (0.0, 0.0), (1.0, 1.0)),
    ((-2.3, 4.1), (1.7, 9.2), (-2.3, 1.7), (0.7, 1.3)),  # origin at corner
    ((-2.3, 4.1), (1.7, 9.2), (0.11, -0.37), (0.7, 1.3)),
    ((10.0, 10.5), (-1.0, 3.0), (0.0, 0.0), (2.0, 0.4)),  # narrow box
]


@pytest.mark.parametrize(("xlim", "ylim", "origin", "bw"), LATTICE_CASES)
def test_box_points_never_leave_the_lattice(xlim, ylim, origin, bw):
    row, col = hex_lattice(xlim, ylim, origin, bw)
    lattice = set(zip(row.tolist(), col.tolist()))
    x, y = _box_points(xlim, ylim, np.random.default_rng(11))
    r, c = hex_assign(x, y, origin, bw)
    assert set(zip(r.tolist(), c.tolist())) <= lattice


@pytest.mark.parametrize(("xlim", "ylim", "origin", "bw"), LATTICE_CASES)
def test_every_lattice_hexagon_can_receive_a_point(xlim, ylim, origin, bw):
    row, col = hex_lattice(xlim, ylim, origin, bw)
    assert len(row) == len(set(zip(row.tolist(), col.tolist())))
    cx, cy = hex_centres(row, col, origin, bw)
    verts = hex_vertices(cx, cy, *bw)
    for i in range(len(row)):
        part = _clip_to_box(verts[i], xlim, ylim)
        assert len(part), f"hexagon {(row[i], col[i])} misses the box"
        # witnesses: the centroid of the overlap, or, when the hexagon
        # only touches the box, the contact's ends and middle
        mids = (part + np.roll(part, -1, axis=0)) / 2
        cand = np.vstack([part.mean(axis=0), part, mids])
        cand[:, 0] = np.clip(cand[:, 0], *xlim)
        cand[:, 1] = np.clip(cand[:, 1], *ylim)
        r, c = hex_assign(cand[:, 0], cand[:, 1], origin, bw)
        assert ((r == row[i]) & (c == col[i])).any(), (row[i], col[i])


def test_lattice_touching_hexagons_follow_the_tie_rules():
    # box [0, 3] x [0, sqrt(3)] with origin at its corner, binwidth 1:
    # the right edge x = 3 is the shared side of B(1, 2) and B(1, 3);
    # points on it go right, to B(1, 3), which only touches the box.
    # On the left edge x = 0 they go to B(1, 0), never to B(1, -1).
    row, col = hex_lattice((0.0, 3.0), (0.0, SQRT3), (0.0, 0.0), 1.0)
    lattice = set(zip(row.tolist(), col.tolist()))
    assert (1, 3) in lattice
    assert (1, -1) not in lattice
    assert {(0, 0), (0, 3), (2, 0), (2, 3)} <= lattice
    assert (-1, 0) not in lattice and (3, 0) not in lattice


def test_lattice_is_sorted_and_bad_limits_raise():
    row, col = hex_lattice((-2.3, 4.1), (1.7, 9.2), (0.0, 0.0), (0.7, 1.3))
    key = row * 10_000 + col
    assert (np.diff(key) > 0).all()
    with pytest.raises(ParameterError, match="limits"):
        hex_lattice((1.0, 0.0), (0.0, 1.0), (0.0, 0.0), 1.0)


# aggregation ----------------------------------------------------------------


def test_hand_built_counts():
    row = [0, 1, 0, 0, 2, 1]
    col = [2, 0, 2, -1, 5, 0]
    hc = hex_cell_counts(row, col)
    assert hc.row.tolist() == [0, 0, 1, 2]
    assert hc.col.tolist() == [-1, 2, 0, 5]
    assert hc.count.tolist() == [1, 2, 2, 1]
    assert hc.count.dtype == np.int64
    assert hc.inverse.tolist() == [1, 2, 1, 0, 3, 2]
    # other per-record quantities sum through the inverse index
    v = np.array([1.0, 10.0, 100.0, 1000.0, 5.0, 20.0])
    sums = np.bincount(hc.inverse, v, minlength=len(hc.row))
    assert sums.tolist() == [1000.0, 101.0, 30.0, 5.0]


def test_weighted_counts_keep_occupied_zero_weight_hexagons():
    hc = hex_cell_counts([0, 0, 1], [0, 0, 0], weight=[0.5, 2.0, 0.0])
    assert hc.count.tolist() == [2.5, 0.0]
    assert hc.row.tolist() == [0, 1]


def test_sparse_keys_match_dense_path():
    rng = np.random.default_rng(2)
    row = rng.integers(-5, 5, 500)
    col = rng.integers(0, 8, 500)
    dense = hex_cell_counts(row, col)
    # a far-away point forces the sort-based path
    sparse = hex_cell_counts(np.append(row, 10**7), np.append(col, -(10**7)))
    np.testing.assert_array_equal(sparse.row[:-1], dense.row)
    np.testing.assert_array_equal(sparse.col[:-1], dense.col)
    np.testing.assert_array_equal(sparse.count[:-1], dense.count)
    np.testing.assert_array_equal(sparse.inverse[:-1], dense.inverse)
    assert (sparse.row[-1], sparse.col[-1]) == (10**7, -(10**7))


def test_empty_input():
    hc = hex_cell_counts([], [])
    assert len(hc.row) == len(hc.count) == len(hc.inverse) == 0
