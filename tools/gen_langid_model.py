"""Generate ``src/guardlex/langid/data/ngram.bin.xz`` from py3langid's model.

py3langid (BSD-3-Clause, Marco Lui and Adrien Barbaresi; a fork of langid.py) is a
naive-Bayes classifier over byte n-grams (1-6 bytes) with a model for 142 languages.
guardlex ships a restricted copy of that model, so language identification needs no
numpy and no runtime dependency, and behaves the same whatever extras are installed:

* languages: ``LANGUAGES`` (the shipped locales plus other frequent ones, so a new
  locale folder for one of them is identified without new data);
* features: py3langid walks an Aho-Corasick DFA; at each byte it counts the longest
  feature that ends there. The state strings are recovered from the DFA (breadth-first:
  a state's string is the shortest path to it) and the automaton is stored sparsely
  (parent, byte, failure link, output per state), so guardlex walks the same automaton
  with a dict (``tests/langid`` checks that the counts equal py3langid's);
* pruning: a feature whose log-probabilities differ by less than ``PRUNE`` over the kept
  languages cannot change a decision between them much, and is left out;
* weights: log-probabilities (float16 in py3langid) stored as int16 of ``SCALE`` times
  the value, so the runtime reads them with ``array("h")`` and needs no numpy.

File layout (after LZMA): one JSON header line ``{"languages", "prior", "features",
"states", "scale", "source", "format": 2}``, then per state (breadth-first order) the
parent (int32), last byte (uint8), failure link (int32) and output feature (int32, -1
for none), each as one array, then ``features * len(languages)`` little-endian int16
weights, row-major.

Run ``python tools/gen_langid_model.py`` (needs ``pip install py3langid==0.4.0``: it pins
numpy>=2, which the ``tools`` extra's hazm pin forbids, so it is its own extra,
``langid-tools``); ``--check`` compares the committed file with a fresh build.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "guardlex" / "langid" / "data" / "ngram.bin.xz"
LANGUAGES = (
    # shipped locales
    "ar", "de", "en", "es", "fa", "fr", "hi", "pt", "ru", "zh",
    # frequent languages a locale may be added for
    "it", "nl", "pl", "tr", "uk", "ja", "ko", "id", "vi", "sv",
)  # fmt: skip
PRUNE = 0.05
SCALE = 1000


def build() -> bytes:
    """The model file's bytes."""
    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE
    from py3langid.modelio import load_model

    ptc, pc, classes, nextmove, rows, out = load_model(MODEL_DIR / MODEL_FILE)
    dtype = np.uint16 if nextmove.itemsize == 2 else np.uint32
    nm = np.frombuffer(nextmove, dtype=dtype).astype(np.int64)
    row = np.asarray(rows, dtype=np.int64)
    strings: list[bytes | None] = [None] * len(row)
    strings[0] = b""
    frontier = [0]
    while frontier:
        nxt = []
        for s in frontier:
            base = int(row[s]) << 8
            targets = nm[base : base + 256].tolist()
            prefix = strings[s]
            assert prefix is not None
            for b, t in enumerate(targets):
                if strings[t] is None:
                    strings[t] = prefix + bytes([b])
                    nxt.append(t)
        frontier = nxt
    feature: dict[int, bytes] = {}
    for st_id, f in enumerate(out):
        st = strings[st_id]
        if f >= 0 and st is not None and (f not in feature or len(st) < len(feature[f])):
            feature[f] = st
    cols = [classes.index(code) for code in LANGUAGES]
    weights = np.asarray(ptc, dtype=np.float32)[:, cols]
    spread = weights.max(axis=1) - weights.min(axis=1)
    keep = [f for f in sorted(feature) if spread[f] >= PRUNE]
    new_index = {f: i for i, f in enumerate(keep)}
    # the automaton: states in breadth-first order (a parent before its children), each
    # with its parent, its last byte, its failure link (the longest proper suffix that is
    # a state) and its output (the longest feature ending there, as py3langid counts)
    order = sorted(range(len(strings)), key=lambda s: (len(strings[s] or b""), strings[s] or b""))
    new_id = {s: i for i, s in enumerate(order)}
    by_string = {strings[s]: new_id[s] for s in order}
    parent, last, fail, output = [], [], [], []
    for s in order:
        st = strings[s] or b""
        parent.append(by_string[st[:-1]] if st else 0)
        last.append(st[-1] if st else 0)
        link = 0
        for k in range(1, len(st)):
            if st[k:] in by_string:
                link = by_string[st[k:]]
                break
        fail.append(link)
        output.append(new_index.get(int(out[s]), -1) if out[s] >= 0 else -1)
    header = {
        "languages": list(LANGUAGES),
        "prior": [round(float(pc[c]), 6) for c in cols],
        "features": len(keep),
        "states": len(order),
        "source": f"py3langid {version('py3langid')} data/model.npz.xz (BSD-3-Clause)",
        "prune": PRUNE,
        "scale": SCALE,
        "format": 2,
    }
    blob = bytearray(json.dumps(header, sort_keys=True).encode() + b"\n")
    blob += np.asarray(parent, dtype="<i4").tobytes()
    blob += np.asarray(last, dtype="u1").tobytes()
    blob += np.asarray(fail, dtype="<i4").tobytes()
    blob += np.asarray(output, dtype="<i4").tobytes()
    assert float(np.abs(weights).max()) * SCALE < 32767
    blob += np.rint(weights[keep] * SCALE).astype("<i2").tobytes()
    # fixed preset and no timestamps: the same input gives the same bytes
    return lzma.compress(bytes(blob), preset=9 | lzma.PRESET_EXTREME)


def main(argv: list[str] | None = None) -> int:
    """Write the model, or with ``--check`` report whether the committed one is current."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    data = build()
    if args.check:
        same = OUT.exists() and lzma.decompress(OUT.read_bytes()) == lzma.decompress(data)
        if not same:
            print(f"{OUT} is out of date; run python tools/gen_langid_model.py")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data) / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
