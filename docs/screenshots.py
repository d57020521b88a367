"""Screenshots of the built documentation with headless Chromium.

Renders the front page, the API page of ``stat_count_dp`` and the gallery
page of a built site (``python -m sphinx -W -b html docs docs/_build/html``)
into ``docs/_build/screenshots/*.png``, for a look at what a reader sees.

Run: ``python docs/screenshots.py [html_dir] [out_dir]``. Needs a Chromium
binary (``chromium`` from the OS packages, or ``CHROMIUM=/path``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGES = {
    "front.png": "index.html",
    "stat_count_dp.png": "api/generated/plotnine_private.stat_count_dp.html",
    "gallery.png": "gallery/index.html",
}
WINDOW = "1280,1600"


def chromium() -> str:
    """The Chromium executable: ``$CHROMIUM`` or the first one on PATH."""
    names = [
        os.environ.get("CHROMIUM", ""),
        "chromium",
        "chromium-browser",
        "google-chrome",
    ]
    for name in names:
        if name and (path := shutil.which(name)):
            return path
    sys.exit("no Chromium found: apt-get install chromium, or set CHROMIUM")


def shoot(browser: str, page: Path, png: Path) -> None:
    """Write a screenshot of ``page`` (a local HTML file) to ``png``."""
    if not page.exists():
        sys.exit(f"{page} is missing: build the site first")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={WINDOW}",
                f"--screenshot={png}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    if not png.exists() or png.stat().st_size == 0:
        sys.exit(f"Chromium wrote no screenshot of {page}")


def main(argv: list[str]) -> list[Path]:
    html = Path(argv[0]) if argv else HERE / "_build" / "html"
    out = Path(argv[1]) if len(argv) > 1 else HERE / "_build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    browser = chromium()
    written = []
    for name, rel in PAGES.items():
        png = out / name
        shoot(browser, html / rel, png)
        written.append(png)
        print(png)
    return written


if __name__ == "__main__":
    main(sys.argv[1:])
