"""Copy result images of the image tests into the baselines.

Usage::

    python tools/promote_baselines.py                 # every result image
    python tools/promote_baselines.py test_geom_hex   # one test module
    python tools/promote_baselines.py test_geom_hex hex_basic hex_facets

Look at each result image before promoting it: a baseline is a claim that
the picture is right. The baselines are tied to the matplotlib minor
version in tests/baseline_images/MATPLOTLIB_VERSION; promoting under a
different version updates that file too (and so every other baseline
should be regenerated).
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import matplotlib as mpl

TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"
RESULT_DIR = TESTS_DIR / "result_images"
BASELINE_DIR = TESTS_DIR / "baseline_images"
VERSION_FILE = BASELINE_DIR / "MATPLOTLIB_VERSION"
PLOTNINE_FILE = BASELINE_DIR / "PLOTNINE_VERSION"

# comparison by-products written next to the results
_SUFFIXES = ("-expected", "-failed-diff")


def result_images(module: str | None, names: list[str]) -> list[Path]:
    """Result PNGs of one test module (or all), optionally by name."""
    dirs = [RESULT_DIR / module] if module else sorted(RESULT_DIR.iterdir())
    found = []
    for d in dirs:
        if not d.is_dir():
            raise SystemExit(f"no result images for {d.name!r} in {d}")
        for png in sorted(d.glob("*.png")):
            if png.stem.endswith(_SUFFIXES):
                continue
            if names and png.stem not in names:
                continue
            found.append(png)
    missing = set(names) - {p.stem for p in found}
    if missing:
        raise SystemExit(f"no result image named {sorted(missing)}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("module", nargs="?", help="test module stem")
    parser.add_argument("names", nargs="*", help="image names (no .png)")
    args = parser.parse_args()

    version = ".".join(mpl.__version__.split(".")[:2])
    recorded = VERSION_FILE.read_text().strip()
    if version != recorded:
        print(
            f"warning: baselines were for matplotlib {recorded}, "
            f"now {version}; recording {version}"
        )
        VERSION_FILE.write_text(version + "\n")
    import plotnine

    pn_version = plotnine.__version__
    if pn_version != PLOTNINE_FILE.read_text().strip():
        print(f"warning: recording plotnine {pn_version} for the baselines")
        PLOTNINE_FILE.write_text(pn_version + "\n")

    for png in result_images(args.module, args.names):
        target = BASELINE_DIR / png.parent.name / png.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, target)
        print(
            f"{png.relative_to(TESTS_DIR)} -> {target.relative_to(TESTS_DIR)}"
        )


if __name__ == "__main__":
    main()
