"""The release engine: queries, cell tables, mechanisms, records."""
