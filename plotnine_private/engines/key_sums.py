"""The exact sums of CKM record keys per group, computed in an engine.

A record's key integer is what
:func:`~plotnine_private.mechanisms.ptable.ckm.record_key_integers` gives in
memory (8 digits of a uniform key, or an ONS integer key); the engine
projects it from the key column as a double (exact below 2**53) and sums
it as an integer in the same pass as the counts (:func:`~plotnine_private.
engines.push.grouped`): whole when the keys are small, else in 24-bit
halves, recombined here (:func:`key_sums`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ..families import Stages

__all__ = ["RecordKeys", "key_integers", "key_sums"]

_LO_BITS = 1 << 24
_RINT = float(2**52)


@dataclasses.dataclass(frozen=True)
class RecordKeys:
    """A CKM layer's record-key column (an expression) and its p-table,
    whose key kind and modulus bound the key integers."""

    expr: Any
    ptable: Any

    @property
    def bound(self) -> int:
        """Every key integer is below this."""
        if self.ptable.key_kind == "uniform":
            return 10**8
        modulus = self.ptable.key_modulus
        return int(modulus) if modulus is not None else 2**53


def key_integers(expr, ptable, whole: bool = False) -> Stages:
    """Projections of the CKM key integers (as
    :func:`~plotnine_private.mechanisms.ptable.ckm.record_key_integers` with
    its
    default 8 digits) and ``_kbad`` (1 for an invalid key); the last
    stage holds what is summed: ``_ksum``, the integer (``whole``), or
    ``_khi`` and ``_klo``, its high and low 24 bits (so that their sums
    cannot overflow). Each quantity is projected once."""
    import narwhals as nw

    k = nw.col("_kk")
    bad = k.is_null() | ~k.fill_null(0.0).is_finite() | (k < 0)
    if ptable.key_kind == "uniform":
        bad = bad | (k >= 1)
    else:
        bad = bad | (k != k.floor())
        if ptable.key_modulus is not None:
            bad = bad | (k >= ptable.key_modulus)
    kbad = nw.col("_kbad") == 1
    stages: Stages = [
        {"_kk": expr.cast(nw.Float64)},
        {"_kbad": bad.fill_null(True).cast(nw.Int64)},
    ]
    # whole numbers below 2**53 stay in doubles (exact, and cheaper in
    # engines than integer division and modulo); only the halves summed
    # are cast to integers
    if ptable.key_kind == "uniform":
        scale = 10**8
        stages.append(
            {"_ks": nw.when(kbad).then(0.0).otherwise(k) * float(scale)}
        )
        # numpy.rint of a value in [0, 2**52): adding 2**52 leaves no
        # bits below the unit, so the sum rounds half to even as rint
        # does; two operations instead of a floor and the tie tests
        ks = nw.col("_ks")
        stages.append({"_kq": (ks + _RINT) - _RINT})
        kq = nw.col("_kq")
        # rint may reach the scale itself: that key is 0 (mod scale)
        wrap = (kq >= float(scale)).cast(nw.Float64) * float(scale)
        stages.append({"_kr": kq - wrap})
    else:
        stages.append({"_kr": nw.when(kbad).then(0.0).otherwise(k)})
    kr, hi = nw.col("_kr"), nw.col("_khf")
    if whole:
        stages.append({"_ksum": kr.cast(nw.Int64)})
        return stages
    stages.append({"_khf": (kr / float(_LO_BITS)).floor()})
    stages.append(
        {
            "_khi": hi.cast(nw.Int64),
            "_klo": (kr - hi * float(_LO_BITS)).cast(nw.Int64),
        }
    )
    return stages


def key_sums(g: pd.DataFrame) -> np.ndarray:
    """The exact key sums of grouped rows (:func:`grouped`)."""
    if "_ksum" in g:
        return g["_ksum"].to_numpy(dtype=np.int64)
    hi = g["_khi"].to_numpy(dtype=np.int64)
    lo = g["_klo"].to_numpy(dtype=np.int64)
    return hi * _LO_BITS + lo
