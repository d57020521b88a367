"""The DP and CKM mixins of the private stats: each one's parameters,
their validation, its mechanism (and, for CKM, the record keys).

``class stat_x_dp(DPMixin, FamilyBase)`` and ``class stat_x_ckm(CKMMixin,
FamilyBase)``, with ``DP_PARAMS`` or ``CKM_PARAMS`` merged into
``DEFAULT_PARAMS``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..mechanisms.ptable.ckm import record_key_integers
from ..mechanisms.release.engine import CKMCounts, LaplaceCounts
from ..mechanisms.samplers.laplace import DEFAULT_DELTA
from ..units import ONE_ROW, Unit
from ..validation import (
    as_ptable,
    validate_choice,
    validate_delta,
    validate_eps,
    validate_seed,
    validate_threshold,
)
from ..validation import fail as _fail
from .intervals import validate_level
from .signal import validate_total

DP_PARAMS: dict[str, Any] = {
    "eps": None,
    "delta": DEFAULT_DELTA,
    "seed": None,
    "adjacency": "replace",
    "noise": "discrete_laplace",
    "level": 0.95,
    "total": None,
    "label": None,
    "noise_marks": "fade",
}

CKM_PARAMS: dict[str, Any] = {
    "ptable": None,
    "threshold": None,
    "level": 0.95,
    "label": None,
    "noise_marks": "fade",
}


def layer_unit(stat: Any) -> Unit:
    """The privacy unit of the data a stat releases (its door's; one row
    before the stat has seen a door, e.g. when planning)."""
    door = getattr(getattr(stat, "build", None), "door", None)
    unit = getattr(door, "unit", None)
    return unit if isinstance(unit, Unit) else ONE_ROW


class DPMixin:
    """Parameters, validation and mechanism of the DP stats."""

    params: dict[str, Any]  # of the stat it is mixed into

    DP = True

    def validate_params(self) -> None:
        """Check ``eps``, ``delta``, ``seed``, ``adjacency`` and ``noise``,
        then the family's own parameters.

        Raises
        ------
        PlotninePrivateError
            Naming the parameter, the value and the fix.
        """
        p = self.params
        name = type(self).__name__
        # no eps: a figure drawn from a synopsis (post-processing of its
        # release); on data, making the mechanism asks for it
        if p["eps"] is not None:
            p["eps"] = validate_eps(name, p["eps"])
        p["delta"] = validate_delta(name, p["delta"])
        p["seed"] = validate_seed(name, p["seed"])
        validate_choice(
            name, "adjacency", p["adjacency"], ("replace", "add_remove")
        )
        validate_choice(
            name, "noise", p["noise"], ("discrete_laplace", "laplace")
        )
        p["level"] = validate_level(name, p.get("level", 0.95))
        p["total"] = validate_total(name, p.get("total"))
        super().validate_params()  # type: ignore[misc]

    def make_mechanism(self) -> LaplaceCounts:
        """Discrete (or continuous) Laplace noise on counts, from ``eps``,
        ``delta``, ``adjacency`` and ``noise``, scaled to the privacy unit
        the data declare (:attr:`Door.unit`: a unit keeps up to
        ``max_records`` records). ``max_cells`` is left to the step that
        enforces it (``PrivateCountStat.release_at_door``): a threshold
        that counted fewer cells than a unit can open would leak."""
        p = self.params
        if p["eps"] is None:
            validate_eps(type(self).__name__, None)  # "eps is required"
        mech = LaplaceCounts(p["eps"], p["delta"], p["adjacency"], p["noise"])
        unit = layer_unit(self)
        if unit.bounded:
            mech = mech.bounded(unit.max_records)
        return mech

    def check_input(self, data: pd.DataFrame) -> None:
        """The base checks, and refuse a mapped weight (whatever its
        values): one record of unbounded weight has unbounded sensitivity.

        Parameters
        ----------
        data
            The layer's rows after the mapping.
        """
        super().check_input(data)  # type: ignore[misc]
        if "weight" in data.columns:
            # refused by the mapping alone (public), never by the weights'
            # values: a check of the values would raise or not by one record
            raise _fail(
                type(self).__name__,
                "the weight aesthetic is not supported by DP stats: one "
                "record of unbounded weight has unbounded sensitivity. "
                "Remove aes(weight=...) or use the CKM twin, which "
                "perturbs weighted counts.",
            )


class CKMMixin:
    """Parameters, validation and mechanism of the CKM stats."""

    params: dict[str, Any]  # of the stat it is mixed into

    def validate_params(self) -> None:
        """Check ``ptable`` and ``threshold``, then the family's own
        parameters. Without a ``ptable`` the stat may be made (a figure
        drawn from a CKM synopsis takes the synopsis's); on data,
        :meth:`make_mechanism` asks for it.

        Raises
        ------
        PlotninePrivateError
            Naming the parameter, the value and the fix.
        """
        p = self.params
        name = type(self).__name__
        if p["ptable"] is not None:
            p["ptable"] = as_ptable(name, p["ptable"])
        p["threshold"] = validate_threshold(name, p["threshold"])
        p["level"] = validate_level(name, p.get("level", 0.95))
        super().validate_params()  # type: ignore[misc]

    def make_mechanism(self) -> CKMCounts:
        """The Cell Key Method with the layer's p-table and threshold."""
        p = self.params
        self.require_ptable()
        return CKMCounts(p["ptable"], p["threshold"])

    def require_ptable(self) -> None:
        """On data: ``ptable``, which a figure drawn from a CKM synopsis
        leaves out, is required."""
        if self.params["ptable"] is None:
            raise _fail(
                type(self).__name__,
                "ptable is required: a PTable from create_cnt_ptable(D, V, "
                "js) or read_ptable(path) with your office's p-table.",
            )

    def record_key_integers(self, data: pd.DataFrame):
        """The ``rkey`` aesthetic as exact integers, in the p-table's key
        convention (uniform keys in [0, 1) or integer keys mod K).

        Parameters
        ----------
        data
            The layer's rows after the mapping.

        Returns
        -------
        numpy.ndarray
            int64 keys whose per-cell sums give exact cell keys.

        Raises
        ------
        PlotninePrivateError
            If ``rkey`` is not mapped or holds invalid keys.
        """
        name = type(self).__name__
        self.require_ptable()
        if "rkey" not in data.columns:
            raise _fail(
                name,
                "needs record keys: map them with aes(rkey='<column>'). "
                "Create them once with add_record_keys(data) and store them "
                "with the data, so every output gets the same noise.",
            )
        ptable = self.params["ptable"]  # type: ignore[attr-defined]
        kind = ptable.key_kind
        try:
            return record_key_integers(
                data["rkey"].to_numpy(),
                kind=kind,
                modulus=ptable.key_modulus if kind == "integer" else None,
            )
        except ValueError as err:
            raise _fail(name, f"aesthetic rkey: {err}") from None
