"""Record keys and cell keys for the Cell Key Method (``docs/ptables.md``).

Every microdata record carries a fixed random **record key**. The key of a
cell (a bar, a bin, a tile) is the sum of the keys of the records in it,
modulo 1 (uniform keys) or modulo ``K`` (ONS integer keys). The p-table
then turns ``(count, cell key)`` into a deviation (:meth:`PTable.noise`).

Keys are handled as integers so that cell keys are exact: a uniform key
with 8 decimals ``0.12345678`` becomes ``12345678``; sums of such integers
are exact in int64 (up to ~9e10 records), and the cell key is the sum mod
``10**8``. No floating-point rounding can move a cell key across an
interval bound of the p-table.

**Record keys must be drawn once, stored with the microdata and reused
for every output.** If they are drawn again, the same cell gets different
noise in different plots and tables, and averaging those outputs undoes
the protection.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ..errors import ParameterError
from . import PTable

__all__ = [
    "RecordKeyWarning",
    "cell_keys",
    "perturb_counts",
    "record_key_integers",
]


class RecordKeyWarning(UserWarning):
    """Record keys were generated without a seed and must be saved."""


def record_key_integers(
    keys: Any,
    kind: Literal["uniform", "integer"] = "uniform",
    digits: int = 8,
    modulus: int | None = None,
) -> np.ndarray:
    """Validate record keys and return them as exact int64 integers.

    Parameters
    ----------
    keys : array-like
        The ``rkey`` values, one per record.
    kind : {"uniform", "integer"}
        ``"uniform"``: keys in [0, 1) with ``digits`` decimals (R ptable /
        cellKey / Tau-Argus style); each becomes ``round(key * 10**digits)``.
        Keys with more decimals are rounded to the nearest multiple of
        ``10**-digits`` (a key that rounds up to 1 becomes 0, since cell
        keys are taken mod 1). ``"integer"``: whole numbers in
        ``[0, modulus)`` (ONS style), returned unchanged.
    digits : int
        Decimals of uniform keys (default 8, as in cellKey and Tau-Argus).
    modulus : int, optional
        Key range of integer keys (e.g. 256 or 4096); if None, any
        non-negative whole number is accepted.

    Returns
    -------
    numpy.ndarray of int64
        Sum these per cell, then pass the sums to :meth:`PTable.noise`
        (cell key = sum mod ``10**digits`` or ``modulus``).

    Examples
    --------
    >>> record_key_integers([0.7, 0.6, 0.9]).tolist()
    [70000000, 60000000, 90000000]
    >>> int(record_key_integers([0.7, 0.6, 0.9]).sum() % 10**8)
    20000000
    >>> record_key_integers([3, 255], kind="integer", modulus=256).tolist()
    [3, 255]
    """
    if kind not in ("uniform", "integer"):
        raise ParameterError(
            f"kind must be 'uniform' or 'integer', got {kind!r}"
        )
    try:
        arr = np.asarray(keys, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(
            "the rkey aesthetic (record keys) must be numeric"
        ) from None
    arr = arr.ravel()
    if not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        if n_nan:
            raise ParameterError(
                f"the rkey aesthetic (record keys) has {n_nan} missing "
                f"(NaN) values; every record needs its stored key (see "
                f"add_record_keys)"
            )
        raise ParameterError(
            "the rkey aesthetic (record keys) has infinite values"
        )
    if kind == "uniform":
        digits = int(digits)
        if not 1 <= digits <= 15:
            raise ParameterError(
                f"digits must be between 1 and 15, got {digits}"
            )
        if arr.size and (arr.min() < 0 or arr.max() >= 1):
            first = float(arr[(arr < 0) | (arr >= 1)][0])
            raise ParameterError(
                f"the rkey aesthetic (record keys) must lie in [0, 1) for a "
                f"uniform p-table; found {first!r}. Use integer keys "
                f"only with an ONS p-table"
            )
        return _uniform_key_integers(arr, 10**digits)
    if np.any(arr != np.round(arr)) or np.any(arr < 0):
        raise ParameterError(
            "the rkey aesthetic (record keys) must be non-negative whole "
            "numbers for an ONS (integer-key) p-table"
        )
    out = arr.astype(np.int64)
    if modulus is not None and out.size and out.max() >= modulus:
        raise ParameterError(
            f"the rkey aesthetic (record keys) must be below the key range "
            f"{modulus} of the p-table; found {int(out.max())}"
        )
    return out


_KEY_BLOCK = 1 << 16  # keys converted per block (cache-sized temporaries)


def _uniform_key_integers(arr: np.ndarray, scale: int) -> np.ndarray:
    """``rint(key * scale) mod scale`` for keys in [0, 1), a block at a
    time: the temporaries stay in cache instead of costing four passes
    over 10**7 keys in fresh memory (the same integers)."""
    out = np.empty(arr.size, dtype=np.int64)
    tmp = np.empty(min(arr.size, _KEY_BLOCK))
    for start in range(0, arr.size, _KEY_BLOCK):
        part = arr[start : start + _KEY_BLOCK]
        t = tmp[: part.size]
        np.multiply(part, scale, out=t)
        np.rint(t, out=t)
        o = out[start : start + part.size]
        o[:] = t
        # keys in [0, 1) round to 0..scale; "mod scale" maps scale to 0
        o[o == scale] = 0
    return out


def cell_keys(key_sums: Any, modulus: int) -> np.ndarray:
    """Cell keys in [0, 1) from exact integer key sums (for reports).

    Examples
    --------
    >>> cell_keys([150_000_000, 220_000_000], 10**8).tolist()
    [0.5, 0.2]
    >>> cell_keys([300], 256).tolist()
    [0.171875]
    """
    sums = np.asarray(key_sums, dtype=np.int64)
    return np.mod(sums, int(modulus)) / int(modulus)


def key_scale(digits: int, integer_range: int | None) -> int:
    """The range of the key integers: ``10**digits`` or ``integer_range``."""
    if integer_range is not None:
        if (
            isinstance(integer_range, bool)
            or int(integer_range) != integer_range
            or integer_range < 1
        ):
            raise ParameterError(
                f"integer_range must be a positive whole number such as "
                f"256, got {integer_range!r}"
            )
        return int(integer_range)
    digits = int(digits)
    if not 1 <= digits <= 15:
        raise ParameterError(f"digits must be between 1 and 15, got {digits}")
    return 10**digits


def perturb_counts(
    counts: Any, key_sums: Any, ptable: PTable, **kwargs: Any
) -> np.ndarray:
    """Published counts ``counts + ptable.noise(counts, key_sums)``.

    Examples
    --------
    >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
    >>> pt = create_cnt_ptable(D=2, V=0.9)
    >>> perturb_counts([0, 1, 2], [0, 72_500_000, 50_000_000], pt).tolist()
    [0, 2, 2]
    """
    if not isinstance(ptable, PTable):
        raise ParameterError(
            f"ptable must be a PTable (create_cnt_ptable or read_ptable), "
            f"got {type(ptable).__name__}"
        )
    counts = np.asarray(counts)
    noise = ptable.noise(counts, key_sums, **kwargs)
    return counts.astype(np.int64) + noise
