"""CPU seconds of a private box plot's build, the Tukey whiskers'
intervals included: mpg's seven classes (``hwy``, 128 fine bins on
(0, 50), eps 1), 100 boxes of 200 records each (the same settings) and
the same 100 boxes under CKM (``create_cnt_ptable(D=2, V=1)``).

Each build is timed in the process that runs it (``time.process_time``)
after one untimed build (imports, the cached public simulation). With
``--against DIR`` the script also runs on the package at ``DIR`` (say a
checkout of the former code), alternating with this one, one fresh
process per repeat, so both see the same load.

Run: ``python benchmarks/boxplot_speed.py [--repeats 5] [--against DIR]``
from the project's root.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent.parent


def plots() -> dict:
    from plotnine import aes, geom_boxplot, ggplot
    from plotnine.data import mpg

    import plotnine_private as pp

    box = geom_boxplot(stat="boxplot_dp", eps=1, seed=1, limits=(0, 50))
    # declared classes: every box is drawn (undeclared ones are thresholded)
    cars = mpg.assign(**{"class": pd.Categorical(mpg["class"])})
    rng = np.random.default_rng(3)
    names = [f"b{i:03d}" for i in range(100)]
    which = np.repeat(np.arange(100), 200)
    many = pd.DataFrame(
        {
            "box": pd.Categorical(np.take(names, which), categories=names),
            "y": np.clip(rng.normal(10 + 0.3 * which, 2 + which % 5), 0, 50),
            "rk": rng.random(len(which)),
        }
    )
    ckm = geom_boxplot(
        stat="boxplot_ckm",
        ptable=pp.create_cnt_ptable(D=2, V=1),
        limits=(0, 50),
    )
    return {
        "mpg": ggplot(cars, aes("class", "hwy")) + box,
        "100 boxes": ggplot(many, aes("box", "y")) + box,
        "100 CKM": ggplot(many, aes("box", "y", rkey="rk")) + ckm,
    }


#: the plots' names, in the order printed
PLOTS = ("mpg", "100 boxes", "100 CKM")


def timings(builds: int) -> dict[str, list[float]]:
    """CPU seconds of ``builds`` builds of each plot, after one."""
    from plotnine_private import layer_data

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, plot in plots().items():
            layer_data(plot)
            times = []
            for _ in range(builds):
                start = time.process_time()
                layer_data(plot)
                times.append(time.process_time() - start)
            out[name] = times
    return out


def run_child(root: Path, builds: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    cmd = [sys.executable, __file__, "--child", "--builds", str(builds)]
    res = subprocess.run(
        cmd, env=env, cwd=root, capture_output=True, text=True, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--builds", type=int, default=1)
    ap.add_argument("--against", type=Path, default=None)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(timings(args.builds)))
        return
    roots = {"this": HERE}
    if args.against is not None:
        roots = {"against": args.against.resolve(), **roots}
    seen: dict = {(r, n): [] for r in roots for n in PLOTS}
    for _ in range(args.repeats):
        for label, root in roots.items():
            for name, times in run_child(root, args.builds).items():
                seen[label, name] += times
    for (label, name), times in seen.items():
        t = np.array(times)
        print(
            f"{label:8s} {name:10s} median {np.median(t):.3f} s  "
            f"min {t.min():.3f}  max {t.max():.3f}  "
            f"({' '.join(f'{v:.3f}' for v in t)})"
        )


if __name__ == "__main__":
    main()
