"""Image comparison for the few tests that need a picture.

``assert_image_matches(plot, "name")`` saves the plot to
``tests/result_images/<test module>/name.png`` (640 x 480 px at 72 dpi,
Agg, matplotlib defaults, DejaVu Sans) and compares it with
``tests/baseline_images/<test module>/name.png`` by RMS pixel difference.

Text rendering changes between matplotlib minor versions, so baselines
belong to the version written in ``tests/baseline_images/MATPLOTLIB_VERSION``
and the check is skipped under any other version; likewise for the
plotnine release in ``PLOTNINE_VERSION``, whose releases change layouts. To
add or update a baseline: run the test (it fails and writes the result
image), look at the image, then
``python tools/promote_baselines.py <test module> [name ...]``.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import matplotlib as mpl
import plotnine
import pytest

TESTS_DIR = Path(__file__).resolve().parent
BASELINE_DIR = TESTS_DIR / "baseline_images"
RESULT_DIR = TESTS_DIR / "result_images"
VERSION_FILE = BASELINE_DIR / "MATPLOTLIB_VERSION"
# plotnine's releases change how plots are laid out, too (0.15.7 changed
# line spacing under matplotlib 3.11): baselines are for one release
PLOTNINE_FILE = BASELINE_DIR / "PLOTNINE_VERSION"

WIDTH_IN, HEIGHT_IN, DPI = 6.4, 4.8, 72
FONT = "DejaVu Sans"

__all__ = ["assert_image_matches", "baseline_matplotlib_version"]


def baseline_matplotlib_version() -> str:
    """The matplotlib ``major.minor`` that the baselines were made with."""
    return VERSION_FILE.read_text().strip()


def _running_version() -> str:
    return ".".join(mpl.__version__.split(".")[:2])


def _caller_stem(depth: int = 2) -> str:
    """File stem of the test module calling assert_image_matches."""
    frame = sys._getframe(depth)
    return Path(frame.f_globals["__file__"]).stem


def _save(plot, path: Path) -> None:
    """Save with fixed size, dpi, backend, rcParams and font."""
    import matplotlib.pyplot as plt
    from plotnine import element_text, theme

    plot = plot + theme(
        text=element_text(family=FONT),
        figure_size=(WIDTH_IN, HEIGHT_IN),
        dpi=DPI,
    )
    before = set(plt.get_fignums())
    with mpl.rc_context():
        mpl.rcdefaults()
        mpl.use("Agg")
        try:
            plot.save(
                path,
                width=WIDTH_IN,
                height=HEIGHT_IN,
                units="in",
                dpi=DPI,
                verbose=False,
            )
        finally:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)


def assert_image_matches(plot, name: str, tol: float = 2) -> None:
    """Fail unless ``plot`` renders like its baseline ``name``.png.

    Skips when matplotlib's major.minor differs from the baselines'.
    The result is always written first, so a missing baseline fails with
    an image ready to inspect and promote.
    """
    from matplotlib.testing.compare import compare_images

    wanted, running = baseline_matplotlib_version(), _running_version()
    if running != wanted:
        pytest.skip(
            f"image baselines are for matplotlib {wanted}, running "
            f"{mpl.__version__}: text metrics differ between minor versions"
        )
    wanted_pn = PLOTNINE_FILE.read_text().strip()
    if plotnine.__version__ != wanted_pn:
        pytest.skip(
            f"image baselines are for plotnine {wanted_pn}, running "
            f"{plotnine.__version__}: layouts differ between releases"
        )

    stem = _caller_stem()
    result_dir = RESULT_DIR / stem
    result_dir.mkdir(parents=True, exist_ok=True)
    result = result_dir / f"{name}.png"
    _save(plot, result)

    baseline = BASELINE_DIR / stem / f"{name}.png"
    if not baseline.exists():
        pytest.fail(
            f"no baseline image {baseline.relative_to(TESTS_DIR)}; the "
            f"result is in {result.relative_to(TESTS_DIR)}. Look at it, "
            f"then run: python tools/promote_baselines.py {stem} {name}",
            pytrace=False,
        )
    expected = result_dir / f"{name}-expected.png"
    (result_dir / f"{name}-failed-diff.png").unlink(missing_ok=True)
    shutil.copyfile(baseline, expected)
    err = compare_images(str(expected), str(result), tol, in_decorator=True)
    if err is not None:
        pytest.fail(
            f"images not close: {result.relative_to(TESTS_DIR)} vs "
            f"{baseline.relative_to(TESTS_DIR)} (RMS {err['rms']:.2f}, "
            f"tol {tol}); diff in {Path(err['diff']).name}",
            pytrace=False,
        )
