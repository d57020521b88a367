"""What ``import plotnine_private`` adds to ``import plotnine``.

Run: ``python benchmarks/import_time.py [--repeat 7]`` from the
repository root (or with the package installed).

Each repeat is a fresh Python process that imports plotnine, then the
package, and reports both times (wall clock and CPU of the process); the
medians over the repeats are printed. The target is at most 0.5 s added.
Every notebook kernel and every subprocess of a pipeline pays it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import json, time
w0, c0 = time.perf_counter(), time.process_time()
import plotnine
w1, c1 = time.perf_counter(), time.process_time()
import plotnine_private
w2, c2 = time.perf_counter(), time.process_time()
print(json.dumps({"plotnine": [w1 - w0, c1 - c0],
                  "added": [w2 - w1, c2 - c1]}))
"""


def one_run() -> dict:
    """Import times of one fresh process (seconds: wall, CPU)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p
    )
    out = subprocess.run(
        [sys.executable, "-c", _CHILD],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    runs = [one_run() for _ in range(args.repeat)]

    def median(part: str, k: int) -> float:
        return statistics.median(r[part][k] for r in runs)

    import plotnine

    print(
        f"python {sys.version.split()[0]}, plotnine {plotnine.__version__}, "
        f"{args.repeat} fresh processes, medians"
    )
    print(
        f"import plotnine:                 {median('plotnine', 0):6.3f} s "
        f"wall, {median('plotnine', 1):6.3f} s CPU"
    )
    print(
        f"import plotnine_private adds:    {median('added', 0):6.3f} s "
        f"wall, {median('added', 1):6.3f} s CPU (target <= 0.5 s)"
    )


if __name__ == "__main__":
    main()
