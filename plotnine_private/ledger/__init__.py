"""The persistent privacy ledger: its file, its key binding, reading it."""
