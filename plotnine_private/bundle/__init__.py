"""Bundles for output checking: saving, their tables, their checks."""
