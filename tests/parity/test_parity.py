"""plotnine's figure, swap for swap: every case of :mod:`cases` is drawn
with plotnine's stat and with the private twin in the same run, and the
two must agree in statistical columns, panel ranges, breaks, legends and
pixels, unless the case is on the list of documented differences."""

from __future__ import annotations

import pytest

from .compare import ASPECTS, check
from .differences import expected_failure
from .table import CASES

_BUILT: dict = {}


def _params():
    for case in CASES:
        for aspect in ASPECTS if case.image else ASPECTS[:-1]:
            marks = []
            reason = expected_failure(case.id, aspect)
            if reason:
                marks.append(pytest.mark.xfail(reason=reason, strict=True))
            yield pytest.param(
                case, aspect, id=f"{case.id}:{aspect}", marks=marks
            )


@pytest.mark.parametrize(("case", "aspect"), list(_params()))
def test_parity(case, aspect):
    check(case, aspect, _BUILT)
