"""The private PCA's mechanisms: directions, scree, frame, points."""
