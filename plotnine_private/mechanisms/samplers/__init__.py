"""Exact samplers and calibrations of the noise distributions."""
