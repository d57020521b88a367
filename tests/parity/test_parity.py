"""plotnine's figure, swap for swap: every case of :mod:`cases` is drawn
with plotnine's stat and with the private twin in the same run, and the
two must agree in statistical columns, panel ranges, breaks, legends,
texts and pixels, unless the case is on the list of documented differences."""

from __future__ import annotations

from pathlib import Path

import plotnine
import pytest

from .compare import ASPECTS, BUILT_ASPECTS, check
from .differences import VERSION_DIFFERENCES, expected_failure
from .table import CASES

PLOTNINE_VERSION = (
    Path(__file__).resolve().parents[1]
    / "baseline_images"
    / "PLOTNINE_VERSION"
)

_BUILT: dict = {}
#: the plotnine release the image baselines (and this list) belong to
STRICT = plotnine.__version__ == PLOTNINE_VERSION.read_text().strip()


def _params():
    for case in CASES:
        for aspect in ASPECTS if case.image else BUILT_ASPECTS:
            marks = []
            reason = expected_failure(case.id, aspect)
            if reason:
                # strict on the plotnine release the list was made with;
                # another release may draw a listed difference away (its
                # breaks or pixels), which is no failure of ours
                marks.append(pytest.mark.xfail(reason=reason, strict=STRICT))
            elif plotnine.__version__ in VERSION_DIFFERENCES:
                # a difference of the running release alone: strict there
                reason = expected_failure(
                    case.id, aspect, plotnine.__version__
                )
                if reason:
                    marks.append(pytest.mark.xfail(reason=reason, strict=True))
            yield pytest.param(
                case, aspect, id=f"{case.id}:{aspect}", marks=marks
            )


@pytest.mark.parametrize(("case", "aspect"), list(_params()))
def test_parity(case, aspect):
    check(case, aspect, _BUILT)
