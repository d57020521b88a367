"""The mechanisms core: numpy/scipy only, never plotnine."""
