"""The private summaries: ``stat_summary_dp`` and ``_ckm``."""
