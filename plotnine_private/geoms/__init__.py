"""Geoms plotnine lacks (the hexagon)."""
