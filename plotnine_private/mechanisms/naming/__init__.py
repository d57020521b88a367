"""Names of cells, ids and rows that key the noise."""
