"""Command line: ``python -m plotnine_private ledger PATH``.

Prints a privacy ledger (:func:`plotnine_private.ledger`): one row per
release with its data set and label, the total per data set with its
cap, and any mixed protection.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m plotnine_private",
        description="Tools for plotnine_private.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser(
        "ledger", help="print a privacy ledger (SQLite file)"
    )
    show.add_argument("path", help="the ledger file")
    show.add_argument(
        "--dataset", default=None, help="only this data set's releases"
    )
    args = parser.parse_args(argv)

    from .exceptions import PlotninePrivateError
    from .ledger.book import ledger

    try:
        book = ledger(args.path, args.dataset)
    except PlotninePrivateError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(book)
    return 0


if __name__ == "__main__":
    sys.exit(main())
