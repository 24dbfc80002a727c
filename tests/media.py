"""Real image and PDF files for tests: a valid PNG of any size (its pixels from a seed) and a PDF with a
number of pages, small enough to write anywhere."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path


def png_bytes(seed: int = 1, side: int = 8, *, padding: int = 0) -> bytes:
    """A ``side``×``side`` RGB PNG with random pixels; ``padding`` bytes of a private chunk make it as
    large as a test needs."""
    pixels = random.Random(seed).randbytes(side * side * 3)
    rows = b"".join(b"\0" + pixels[row * side * 3 : (row + 1) * side * 3] for row in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    chunks = [_chunk(b"IHDR", header)]
    if padding:
        chunks.append(_chunk(b"teST", random.Random(seed).randbytes(padding)))
    chunks += [_chunk(b"IDAT", zlib.compress(rows)), _chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def pdf_bytes(pages: int = 1) -> bytes:
    """A PDF of ``pages`` empty pages."""
    kids = " ".join(f"{3 + n} 0 R" for n in range(pages))
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>"]
    objects += ["<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>"] * pages
    body = b"%PDF-1.4\n"
    offsets = []
    for number, text in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n{text}\nendobj\n".encode()
    table = f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n" + "".join(
        f"{o:010d} 00000 n \n" for o in offsets
    )
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{len(body)}\n%%EOF\n"
    return body + table.encode() + trailer.encode()


def write_png(path: Path, seed: int = 1, **options: int) -> bytes:
    data = png_bytes(seed, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
