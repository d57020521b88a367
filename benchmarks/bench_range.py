"""Benchmark: accuracy of the private axis range, old and new defaults.

For each data shape, ``n`` and ``eps`` (the range's own budget) it runs
the range over ``--keys`` stream keys on one fixed data set and prints
the median and 90th percentile over keys of

* ``missed``: share of the data's own 1%..99% span (``np.quantile``)
  that the range does not cover (0 = covers it all);
* ``width``: range width / that span (1 = as wide as the span);
* ``out``: share of records outside the range (clamped into the edge
  bins of a histogram).

Methods:

* ``old``: the range before ``mechanisms/domains/ranges.py``: signed Durfee
  quantiles at 0.01 and 0.99 with ``eps/2`` each, divided by 1.5 under
  replace, crossed ends widened to width 1;
* ``new``: :func:`plotnine_private.mechanisms.domains.ranges.private_range`.

Run: ``python benchmarks/bench_range.py [--keys 200] [--quick]``;
``--layer`` instead prints the table a user sees: n = 200, 1000, 10000 at
layer eps 0.5, 1, 2, the range getting the default share 0.2 of it.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from plotnine.data import mpg

from plotnine_private.mechanisms.domains.ranges import private_range
from plotnine_private.mechanisms.pca.quantile import signed_quantile
from plotnine_private.mechanisms.streams.randomness import derive_key

SHAPES = {
    "U(0,100)": lambda rng, n: rng.uniform(0, 100, n),
    "N(50,10)": lambda rng, n: rng.normal(50, 10, n),
    "hwy 12..44": lambda rng, n: rng.choice(mpg["hwy"].to_numpy(float), n),
    "year 1999..2008": lambda rng, n: rng.integers(1999, 2009, n) * 1.0,
    "lognormal(0,1)": lambda rng, n: rng.lognormal(0, 1, n),
    "1e6+N(0,10)": lambda rng, n: 1e6 + rng.normal(0, 10, n),
}
SECRET = bytes(32)  # benchmark keys: fixed, public


def old_range(x, eps, key):
    each = eps / 2 / 1.5
    lo = signed_quantile(x, 0.01, each, key=derive_key(key, "lo"))
    hi = signed_quantile(x, 0.99, each, key=derive_key(key, "hi"))
    if not hi > lo:
        mid = (lo + hi) / 2
        lo, hi = mid - 0.5, mid + 0.5
    return lo, hi


def new_range(x, eps, key):
    r = private_range(x, eps, key=key)
    return r.lo, r.hi


METHODS = {"old": old_range, "new": new_range}


def measure(method, x, eps, keys, label):
    a, b = np.quantile(x, [0.01, 0.99])
    span = max(b - a, 1e-12)
    xs = np.sort(x)
    missed, width, out = [], [], []
    for k in range(keys):
        lo, hi = method(x, eps, derive_key(SECRET, "bench_range", label, k))
        covered = max(0.0, min(hi, b) - max(lo, a))
        missed.append(
            1 - covered / span if b > a else float(not lo <= a <= hi)
        )
        width.append((hi - lo) / span)
        inside = np.searchsorted(xs, hi, "right") - np.searchsorted(
            xs, lo, "left"
        )
        out.append(1 - inside / x.size)
    q = lambda v: (np.median(v), np.quantile(v, 0.9))  # noqa: E731
    return q(missed), q(width), q(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--layer", action="store_true")
    args = parser.parse_args()
    if args.layer:
        layer_table(args.keys)
        return
    ns = [200, 1000] if args.quick else [200, 1000, 10000]
    epss = [0.2, 0.5, 1.0, 2.0]
    warnings.simplefilter("ignore")
    print(
        f"median / 90th percentile over {args.keys} keys; eps = the "
        "range's own budget, replace adjacency"
    )
    head = (
        f"{'data':16} {'n':>6} {'eps':>4} {'meth':4} "
        f"{'missed':>11} {'width':>13} {'out':>11}"
    )
    print(head)
    print("-" * len(head))
    t0 = time.time()
    for shape, draw in SHAPES.items():
        for n in ns:
            rng = np.random.default_rng([n, len(shape)])
            x = draw(rng, n)
            for eps in epss:
                for name, method in METHODS.items():
                    label = (shape, n, eps)
                    (m1, m9), (w1, w9), (o1, o9) = measure(
                        method, x, eps, args.keys, label
                    )
                    print(
                        f"{shape:16} {n:>6} {eps:>4} {name:4} "
                        f"{m1:5.2f}/{m9:5.2f} {w1:6.2f}/{w9:6.1f} "
                        f"{o1:5.2f}/{o9:5.2f}",
                        flush=True,
                    )
    print(f"({time.time() - t0:.0f} s)")


def layer_table(keys: int, share: float = 0.2) -> None:
    """Range quality by n and layer eps (the range gets ``share``)."""
    warnings.simplefilter("ignore")
    print(
        f"median/90th percentile over {keys} keys; the range gets "
        f"{share:g} of the layer eps"
    )
    print("| data | n | layer eps | missed | width | out |")
    print("|---|---|---|---|---|---|")
    for shape in ["U(0,100)", "N(50,10)", "hwy 12..44"]:
        for n in [200, 1000, 10000]:
            x = SHAPES[shape](np.random.default_rng([n, len(shape)]), n)
            for eps in [0.5, 1.0, 2.0]:
                (m1, m9), (w1, w9), (o1, o9) = measure(
                    new_range, x, share * eps, keys, (shape, n, eps, "grid")
                )
                print(
                    f"| {shape} | {n} | {eps} | {m1:.2f}/{m9:.2f} | "
                    f"{w1:.2f}/{w9:.1f} | {o1:.2f}/{o9:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
