#!/usr/bin/env python3
"""Write an MNIST-shaped data set (and optionally the whole example as one archive for the data import).

Why: the example trainer (`train.py`) reads MNIST in its own distribution format, the four gzipped IDX
files, from the datasets volume, and must never download anything at run time. This script writes a
small *synthetic* set in that format with the standard library only (no TensorFlow, no NumPy), so the
example runs offline, in the tests, and on a fresh cluster: each of the 10 classes is a fixed random
28x28 stroke pattern, drawn shifted by up to 2 pixels and with noise, which a small network learns to
well above 90% accuracy in a few hundred steps. For the real data set put the four original files
(`train-images-idx3-ubyte.gz`, ...) in the same directory instead; `train.py` reads either.

    python examples/training/mnist/make_data.py --out DIR          # the four IDX files
    python examples/training/mnist/make_data.py --archive X.tar.gz # train.py + the data, one archive

The archive unpacks to `mnist/{train.py, *.gz}`; the platform's data import (`dataImport`, docs/workloads.md)
installs a single top directory's contents at the import's path, so `path: mnist` on the `datasets` volume
gives `/data/mnist/train.py` in the training pods.
"""

from __future__ import annotations

import argparse
import gzip
import io
import random
import struct
import sys
import tarfile
from pathlib import Path

SIDE = 28
CLASSES = 10
FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
TRAINER = Path(__file__).resolve().parent / "train.py"


def _templates(rng: random.Random) -> list[list[int]]:
    """One 28x28 pattern per class: a few random strokes (horizontal or vertical bars) of full intensity."""
    out = []
    for _ in range(CLASSES):
        img = [0] * (SIDE * SIDE)
        for _ in range(4):
            horizontal = rng.random() < 0.5
            fixed = rng.randrange(6, SIDE - 6)
            start = rng.randrange(4, 12)
            length = rng.randrange(8, 14)
            for t in range(start, min(SIDE - 4, start + length)):
                for w in (0, 1):
                    y, x = (fixed + w, t) if horizontal else (t, fixed + w)
                    img[y * SIDE + x] = 255
        out.append(img)
    return out


def _sample(template: list[int], rng: random.Random) -> bytes:
    """The template shifted by up to 2 pixels each way, with salt noise."""
    dx, dy = rng.randint(-2, 2), rng.randint(-2, 2)
    img = bytearray(SIDE * SIDE)
    for y in range(SIDE):
        sy = y - dy
        if not 0 <= sy < SIDE:
            continue
        for x in range(SIDE):
            sx = x - dx
            if 0 <= sx < SIDE:
                img[y * SIDE + x] = template[sy * SIDE + sx]
    for _ in range(20):
        img[rng.randrange(SIDE * SIDE)] = rng.randrange(64, 256)
    return bytes(img)


def idx_files(count: int, seed: int) -> dict[str, bytes]:
    """The four gzipped IDX files (file name -> bytes): `count` training and `count // 5` test examples."""
    rng = random.Random(seed)
    templates = _templates(rng)
    out: dict[str, bytes] = {}
    for split, n in (("train", count), ("test", max(CLASSES, count // 5))):
        labels = [rng.randrange(CLASSES) for _ in range(n)]
        images = b"".join(_sample(templates[label], rng) for label in labels)
        # IDX: magic (0x0803 images / 0x0801 labels), then big-endian dimensions, then the bytes.
        image_file = struct.pack(">IIII", 0x0803, n, SIDE, SIDE) + images
        label_file = struct.pack(">II", 0x0801, n) + bytes(labels)
        names = FILES[split]
        out[names[0]] = gzip.compress(image_file, mtime=0)
        out[names[1]] = gzip.compress(label_file, mtime=0)
    return out


def write_archive(path: Path, files: dict[str, bytes]) -> None:
    """`mnist/train.py` and the data files in one .tar.gz, the form the data import takes."""
    entries = {**files, "train.py": TRAINER.read_bytes()}
    with tarfile.open(path, "w:gz") as tar:
        for name, data in sorted(entries.items()):
            info = tarfile.TarInfo(f"mnist/{name}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="directory for the four IDX files")
    target.add_argument("--archive", type=Path, help="a .tar.gz holding mnist/train.py and the data")
    parser.add_argument("--count", type=int, default=4000, help="training examples (test: a fifth). Default 4000")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    if args.count < CLASSES:
        parser.error(f"--count {args.count} must be at least {CLASSES}")
    files = idx_files(args.count, args.seed)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            (args.out / name).write_bytes(data)
        print(f"wrote {len(files)} IDX files to {args.out}")
    else:
        args.archive.parent.mkdir(parents=True, exist_ok=True)
        write_archive(args.archive, files)
        print(f"wrote {args.archive} (mnist/train.py and {len(files)} IDX files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
