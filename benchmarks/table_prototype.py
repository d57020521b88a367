"""What a versioned ``dp_table`` would cost: a prototype, not the package.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/table_prototype.py
[--repeat 5]``.

``dp_table`` over 10**6 declared labels spends most of its time on work
its released numbers are defined by (``benchmarks/floors.py --only
table`` prints the stages): the data digest sorts the cells by their words
and hashes them in that order, the identity and the cells' name hash every
label's bytes, and each cell's noise is a SipHash of its words. This
script times, on the same data and next to the current ``dp_table``, the
same release with three changes that would need a new stream / digest
version (none is in the package):

* the data digest of a public domain hashes the counts in the domain's
  order (no sort, no gather of the cells' words);
* the identity and the cells' name take one BLAKE2b digest of the labels'
  lengths and bytes (read from their buffer) instead of each label's
  length-prefixed bytes;
* each cell's stream is named by its place in the domain (one word), so
  the cells need no words.

It also times the sampler's hash alone on 10**6 one-word names:
SipHash-2-4 (the package's) against SipHash-1-3 (one compression and
three finalisation rounds, written here with the package's round).
Figures are the least CPU seconds of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

# the data and the current figure are those of floors.py
from floors import declared_frame, first_table  # noqa: E402

from plotnine_private.cells import (  # noqa: E402
    CHUNK,
    Dimension,
    combined_codes,
    object_column,
)
from plotnine_private.mechanisms import laplace as lap  # noqa: E402
from plotnine_private.mechanisms import siphash  # noqa: E402
from plotnine_private.mechanisms.randomness import (  # noqa: E402
    _key_words,
)
from plotnine_private.mechanisms.release import (  # noqa: E402
    Query,
    stream_key,
)
from plotnine_private.mechanisms.streams import cell_streams  # noqa: E402
from plotnine_private.tables import (  # noqa: E402
    label_values,
    labelled_dimension,
)


def least(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return min(out)


def prototype(df: pd.DataFrame, spent: dict[str, float]) -> pd.DataFrame:
    """The release of ``dp_table(df, "x", eps=1, seed=1)`` with the three
    changes of the module docstring, each step's CPU seconds added to
    ``spent``."""

    def step(name, fn):
        t0 = time.process_time()
        out = fn()
        spent[name] = spent.get(name, 0.0) + time.process_time() - t0
        return out

    m = len(df)
    x = step("labels from Arrow", lambda: labelled_dimension("x", df["x"]))
    labels = x.content[0]
    panel = Dimension(
        "PANEL", np.zeros(m, np.int8), [object_column([()])], [()], True
    )

    def count():
        n = np.zeros(x.size, np.int64)
        for a in range(0, m, CHUNK):
            code, _ = combined_codes([panel, x], slice(a, a + CHUNK))
            n += np.bincount(code, minlength=x.size)
        return n

    n = step("codes and counts", count)

    def domain():  # one digest of the labels, named by identity and cells
        h = hashlib.blake2b(digest_size=32, person=b"pnp-domain-proto")
        h.update(np.diff(labels.offsets).astype("<u4").data)
        h.update(labels.data.data)
        return h.digest()

    query = Query.make(
        "count", "data", 1, aes=(("x", "x"),), domain=step("domain", domain)
    )
    secret = query.secret()
    identity = step("identity", lambda: query.identity(secret))
    digest = step(
        "data digest (counts in domain order)",
        lambda: hashlib.blake2b(n.data, digest_size=16).digest(),
    )
    key = stream_key(secret, identity, digest, "counts")
    places = np.arange(x.size, dtype=np.uint64)
    noise = step(
        "exact discrete Laplace, cells named by place",
        lambda: lap.discrete_laplace(
            cell_streams(key, places, 2), lap.rational_scale(2, 1.0)
        ),
    )
    values = step("values", lambda: np.clip(n + noise, 0, None))
    return step(
        "output frame",
        lambda: pd.DataFrame(
            {"x": label_values(labels, np.arange(x.size)), "count": values}
        ),
    )


def siphash13(k0, k1, words: np.ndarray) -> np.ndarray:
    """SipHash-1-3 of one-word messages (64-bit tags), a chunk at a time,
    with the package's SipRound (scratch: the package has no 1-3)."""
    n = len(words)
    out = np.empty(n, np.uint64)
    buffers = np.empty((5, min(n, siphash._CHUNK)), np.uint64)
    last = np.uint64(8 << 56)
    for a in range(0, n, siphash._CHUNK):
        b = min(a + siphash._CHUNK, n)
        v = list(buffers[:4, : b - a])
        tmp = buffers[4, : b - a]
        keys = (np.broadcast_to(k, (b - a,)) for k in (k0, k1))
        siphash._set_start(v, *keys, False)
        for word in (words[a:b], last):
            v[3] ^= word
            siphash._sipround(*v, tmp)
            v[0] ^= word
        v[2] ^= np.uint64(0xFF)
        for _ in range(3):
            siphash._sipround(*v, tmp)
        np.bitwise_xor(v[0], v[1], out=tmp)
        tmp ^= v[2]
        np.bitwise_xor(tmp, v[3], out=out[a:b])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    m = 10**6
    df = declared_frame(m)

    def current():
        first_table(df)

    current()
    now = least(current, args.repeat)
    runs = []
    for _ in range(args.repeat):
        spent: dict[str, float] = {}
        t0 = time.process_time()
        prototype(df, spent)
        runs.append((time.process_time() - t0, spent))
    total, spent = min(runs, key=lambda r: r[0])
    print(f"load {os.getloadavg()[0]:.1f}; least CPU s of {args.repeat} runs")
    print(f"{'dp_table now':<48} {now:7.3f} s ({m / now:.2g} cells/s)")
    print(f"{'prototype':<48} {total:7.3f} s ({m / total:.2g} cells/s)")
    for name, sec in spent.items():
        print(f"  {name:<46} {sec:7.3f} s")
    k0, k1 = _key_words(bytes(range(16)))
    words = np.arange(m, dtype=np.uint64)
    for name, fn in (
        ("SipHash-2-4, 10**6 one-word names", siphash.siphash24),
        ("SipHash-1-3, 10**6 one-word names", siphash13),
    ):
        sec = least(lambda fn=fn: fn(k0, k1, words), args.repeat)
        print(f"{name:<48} {sec:7.3f} s")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    main()
