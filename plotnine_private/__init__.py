"""plotnine_private: privacy-protected plotnine stats.

Importing this package registers every private stat (``stat="count_dp"``,
``"bin_ckm"``, ...) and ``geom_hex`` with plotnine.
"""

from __future__ import annotations

from . import stats as stats  # callable: pp.stats() lists every stat
from ._compat import DoorHooks, install_hooks, layer_data
from ._version import __version__ as __version__
from .bundle.saving import save_release
from .compare import Comparison, compare
from .declarations import Declaration, NoiseGeom
from .door import (
    facet_skeleton,
    is_private,
    label,
    refuse_raw_layers,
    release_layer,
)
from .engines import (
    ContributionTable,
    contributions,
    record_key_expr,
    record_keys_sql,
    source,
)
from .exceptions import (
    BudgetExceededError,
    PlotninePrivateError,
    PrivacyWarning,
)
from .geoms.hex import geom_hex
from .geoms.noise import geom_noise
from .ledger.book import LedgerBook, ledger, rebind_ledger
from .ledger.store import use_ledger
from .mechanisms.ptable import (
    PTable,
    PTableVarianceWarning,
    create_cnt_ptable,
    create_num_ptable,
    read_ptable,
)
from .mechanisms.ptable.ckm import (
    RecordKeyWarning,
    cell_keys,
    record_key_integers,
)
from .mechanisms.release.engine import Release
from .mechanisms.streams.keys import create_key, use_key
from .mechanisms.streams.versions import stream_version, use_stream_version
from .noise import NoiseIntervals, noise_caption, noise_interval
from .pca import DPPCAResult, dp_pca, dp_score
from .planning import accuracy, eps_for
from .plots.ptable import plot_ptable
from .record_keys import add_record_keys
from .report import (
    PrivacyBudget,
    PrivacyReport,
    privacy_budget,
    privacy_report,
)
from .report.budget import add_to_composition, check_composition
from .sessions import session
from .stats.bin import stat_bin_ckm, stat_bin_dp
from .stats.bin2d import (
    stat_bin2d_ckm,
    stat_bin2d_dp,
    stat_bin_2d_ckm,
    stat_bin_2d_dp,
)
from .stats.binhex import (
    stat_bin_hex_ckm,
    stat_bin_hex_dp,
    stat_binhex_ckm,
    stat_binhex_dp,
)
from .stats.boxplot import stat_boxplot_ckm, stat_boxplot_dp
from .stats.count import stat_count_ckm, stat_count_dp
from .stats.density import stat_density_ckm, stat_density_dp
from .stats.dp_pca_score import stat_dp_pca_score
from .stats.ecdf import stat_ecdf_ckm, stat_ecdf_dp
from .stats.hex_counts import stat_bin_hex, stat_binhex
from .stats.signal import SignalWarning, new_figure
from .stats.sum import stat_sum_ckm, stat_sum_dp
from .stats.summary.stat import stat_summary_ckm, stat_summary_dp
from .stats.violin import stat_violin_ckm, stat_violin_dp
from .synopsis import (
    Synopsis,
    SynopsisPlan,
    load_synopsis,
    plan_synopsis,
    synopsis,
)
from .synopsis.draw import compute_from_synopsis, synopsis_layer
from .synopsis.summary import draw_summary, is_summary
from .tables import ckm_table, dp_table


def _in_engine(plot, lyr) -> bool:
    """Whether a layer's data are a table in an engine or a synopsis
    (neither hands plotnine any row)."""
    if synopsis_layer(plot, lyr):
        return True
    # imported when a plot is built: the engines' modules are not needed
    # for plots of in-memory data
    from .engines.plot import engine_layer

    return engine_layer(plot, lyr)


def _release_in_engine(lyr, plot) -> None:
    if synopsis_layer(plot, lyr):
        if is_summary(lyr):
            draw_summary(lyr, plot)
        else:
            compute_from_synopsis(lyr, plot)
        return
    from .engines.plot import compute_in_engine

    compute_in_engine(lyr, plot)


def _start_figure(plot, layers) -> None:
    """A figure's build starts: its warnings are given once per cause,
    and a layer that is not private on a private source is refused."""
    new_figure()
    refuse_raw_layers(plot, layers)


install_hooks(
    DoorHooks(
        is_private=is_private,
        release=release_layer,
        in_engine=_in_engine,
        release_in_engine=_release_in_engine,
        skeleton=facet_skeleton,
        add_to_composition=add_to_composition,
        before_composition_draw=check_composition,
        check_layers=_start_figure,
    )
)

__all__ = [
    "BudgetExceededError",
    "Comparison",
    "ContributionTable",
    "Declaration",
    "NoiseGeom",
    "DPPCAResult",
    "LedgerBook",
    "NoiseIntervals",
    "PTable",
    "PTableVarianceWarning",
    "PrivacyBudget",
    "PrivacyReport",
    "RecordKeyWarning",
    "SignalWarning",
    "accuracy",
    "add_record_keys",
    "cell_keys",
    "compare",
    "contributions",
    "create_key",
    "create_cnt_ptable",
    "create_num_ptable",
    "plot_ptable",
    "privacy_budget",
    "privacy_report",
    "read_ptable",
    "record_key_expr",
    "record_key_integers",
    "record_keys_sql",
    "save_release",
    "session",
    "source",
    "stats",
    "PlotninePrivateError",
    "PrivacyWarning",
    "Release",
    "ckm_table",
    "dp_pca",
    "dp_score",
    "dp_table",
    "load_synopsis",
    "plan_synopsis",
    "synopsis",
    "Synopsis",
    "SynopsisPlan",
    "eps_for",
    "geom_hex",
    "geom_noise",
    "noise_caption",
    "noise_interval",
    "label",
    "layer_data",
    "ledger",
    "rebind_ledger",
    "stat_bin2d_ckm",
    "stat_bin2d_dp",
    "stat_bin_2d_ckm",
    "stat_bin_2d_dp",
    "stat_bin_ckm",
    "stat_bin_hex",
    "stat_bin_hex_ckm",
    "stat_bin_hex_dp",
    "stat_binhex",
    "stat_binhex_ckm",
    "stat_binhex_dp",
    "stat_bin_dp",
    "stat_boxplot_ckm",
    "stat_boxplot_dp",
    "stat_count_ckm",
    "stat_count_dp",
    "stat_density_ckm",
    "stat_density_dp",
    "stat_dp_pca_score",
    "stat_ecdf_ckm",
    "stat_ecdf_dp",
    "stat_sum_ckm",
    "stat_sum_dp",
    "stat_summary_ckm",
    "stat_summary_dp",
    "stat_violin_ckm",
    "stat_violin_dp",
    "stream_version",
    "use_key",
    "use_ledger",
    "use_stream_version",
]
