"""Cell names by their definition, value by value: the reference the
vectorised namers are tested against."""

from __future__ import annotations

import numpy as np

from plotnine_private.mechanisms.naming.cell_values import value_bytes


def words_by_definition(*columns) -> np.ndarray:
    """Each cell's row: its values' :func:`value_bytes` joined, as
    little-endian words, padded with zero words to the longest row."""
    rows = [
        np.frombuffer(b"".join(value_bytes(v) for v in cell), dtype="<u8")
        for cell in zip(*columns)
    ]
    out = np.zeros((len(rows), max(map(len, rows))), dtype=np.uint64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out
