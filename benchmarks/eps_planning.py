"""The tables of ``docs/choosing-eps.md``: what eps and how many records
a private stat needs, from :func:`plotnine_private.accuracy`.

* counts (every count family): the 95% ``+-`` of one cell at each eps;
* box plots: records per box for the quartiles within ``+-x`` (the
  largest error of the three, 95%), limits (0, 100), 64 fine bins, eps 1,
  records spread like a normal of sd 100/6 centred in the limits;
* densities and ECDFs: records per group for the whole curve within
  ``+-x`` (95%) on the same limits, default bins;
* means of a summary: records per cell for ``+-x`` (95%), bounds (0, 100).

Run: ``python benchmarks/eps_planning.py`` (about a minute); it prints
Markdown tables.
"""

from __future__ import annotations

import math
import warnings

import plotnine_private as pp

EPS = (0.1, 0.5, 1, 2, 5)
SIMS = 1000


def n_for(stat: str, error: float, eps: float = 1.0, **kw) -> int:
    """The smallest n (to 2%, by bisection in log n) with accuracy at
    most ``error``; ``-1`` beyond 10^6."""

    def ok(n: float) -> bool:
        return pp.accuracy(stat, eps=eps, n=int(n), sims=SIMS, **kw) <= error

    lo, hi = 2.0, 1e6
    if not ok(hi):
        return -1
    while hi / lo > 1.02:
        mid = math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return int(math.ceil(hi))


def table(header: list[str], rows: list[list]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    warnings.simplefilter("ignore")
    print("Counts: 95% +- of one cell\n")
    rows = [
        [
            adj,
            *(
                f"{pp.accuracy('count_dp', eps=e, adjacency=adj):.0f}"
                for e in EPS
            ),
        ]
        for adj in ("replace", "add_remove")
    ]
    print(table(["adjacency", *(f"eps={e}" for e in EPS)], rows))
    targets = (10, 5, 2)
    box = {"limits": (0, 100), "bins": 64}
    print("\nBox plots at eps=1: records per box\n")
    rows = [[f"+-{x}", n_for("boxplot_dp", x, **box)] for x in targets]
    print(table(["quartiles within", "n"], rows))
    print("\nDensities and ECDFs at eps=1: records per group\n")
    rows = []
    for x in (0.01, 0.005):
        rows.append(
            [
                f"density +-{x}",
                n_for("density_dp", x, limits=(0, 100)),
            ]
        )
    for x in (0.1, 0.05):
        rows.append([f"ECDF +-{x}", n_for("ecdf_dp", x, limits=(0, 100))])
    print(table(["whole curve within", "n"], rows))
    print("\nMeans (summary_dp) at eps=1, bounds (0, 100): records/cell\n")
    rows = [
        [f"+-{x}", n_for("summary_dp", x, bounds=(0, 100))] for x in (10, 5, 1)
    ]
    print(table(["mean within", "n"], rows))


if __name__ == "__main__":
    main()
