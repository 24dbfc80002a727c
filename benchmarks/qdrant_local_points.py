"""What a point costs the process in qdrant-client's local mode (mem0's default store), by what its
payload holds: RSS growth per point while ``--points`` points of 384 dimensions and ``--chars``
characters of text that does not repeat are upserted 256 at a time into a new local folder, each shape
in a process of its own.

The shapes: ``mem0`` is what mem0's verbatim ``add`` writes (the text, its lemmatised copy for mem0's
keyword search, the record's metadata); ``ours`` is what the store writes now (the metadata, no text:
``store.bulk.POINT_WITHOUT_TEXT``); ``empty`` is a point with no payload at all, the floor of local
mode (ids, the vector matrix that doubles as it grows, the point written to its SQLite file).

Usage: python benchmarks/qdrant_local_points.py [--points 4000] [--chars 1400]
"""

from __future__ import annotations

import argparse
import subprocess
import sys

SHAPES = ("mem0", "ours", "empty")
MEASURE = """
import hashlib, random, sys, tempfile, uuid
from qdrant_client import QdrantClient
from qdrant_client.models import Distance, PointStruct, VectorParams
from mem0.memory.main import lemmatize_for_bm25

shape, points, chars = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS"))


def payload(chooser, words):
    text = " ".join(chooser.choices(words, k=chars // 5))[:chars]
    digest = hashlib.md5(text.encode()).hexdigest()
    found = {"user_id": "massgen", "domain": "general", "task_type": "general", "agent": "import",
             "session": "long_1", "turn": 0, "attempt": 1, "key": "general:general:" + digest[:16],
             "massgen_write": uuid.uuid4().hex, "speaker": "Ana", "role": "user", "hash": digest,
             "created_at": "2026-11-29T01:00:00+00:00", "updated_at": "2026-11-29T01:00:00+00:00"}
    if shape == "mem0":
        found |= {"data": text, "text_lemmatized": lemmatize_for_bm25(text)}
    return {} if shape == "empty" else found


with tempfile.TemporaryDirectory() as folder:
    client = QdrantClient(path=folder)
    client.create_collection("m", vectors_config=VectorParams(size=384, distance=Distance.COSINE))
    chooser = random.Random(7)
    words = ["".join(chooser.choices("abcdefghijklmnop", k=chooser.randint(4, 9))) for _ in range(60_000)]
    before = rss()
    for start in range(0, points, 256):
        batch = [
            PointStruct(id=str(uuid.uuid4()), vector=[chooser.random() for _ in range(384)],
                        payload=payload(chooser, words))
            for _ in range(start, min(points, start + 256))
        ]
        client.upsert("m", batch)
    print(round((rss() - before) * 1024 / points, 2))
    client.close()
"""


def kilobytes_per_point(shape: str, points: int, chars: int) -> float:
    command = [sys.executable, "-c", MEASURE, shape, str(points), str(chars)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=4000)
    parser.add_argument("--chars", type=int, default=1400)
    args = parser.parse_args()
    for shape in SHAPES:
        cost = kilobytes_per_point(shape, args.points, args.chars)
        print(f"local_qdrant_kb_per_point_{shape:<6} {cost:>8g}")


if __name__ == "__main__":
    main()
