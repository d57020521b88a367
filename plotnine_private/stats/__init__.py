"""Private stats: one module per family, DP and CKM twins share a base."""
