#!/usr/bin/env python3
"""Check a headless-Chromium screenshot of an HTML report: a PNG of the expected size that is not blank.

Standard library only (zlib and struct decode the PNG). "Not blank" means enough pixels differ from the
page's background (the top-left pixel). "Charts visible" means the solid bar colours of vramdiff's charts
(src/report/chart/style.rs) fill large areas: the page's own styles use none of them, so a page whose embedded
PNGs did not decode has none (measured on the founding case: 0 such pixels without the pictures, 7.9 % ink
from text and tables alone).

usage: check_screenshot.py FILE.png WIDTH HEIGHT [MIN_FRACTION] [NEEDED]

NEEDED: the chart colours that must fill areas, comma-separated (default `estimated,actual,weights`: the
components and per-GPU charts; the serving timeline draws `weights` and `KV cache` lines).
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, width, height, colour, depth, idat = 8, 0, 0, 0, 0, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or colour not in (2, 6):
        raise SystemExit(f"{path}: expected 8-bit RGB or RGBA, got depth {depth} colour type {colour}")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        kind = raw[i]
        line = bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


# The bar fills of the charts (src/report/chart/style.rs): weights, KV, graph, projector, estimated, actual.
PALETTE = {
    (54, 110, 180): "weights",
    (230, 140, 40): "KV cache",
    (200, 70, 70): "compute graph",
    (140, 90, 170): "projector",
    (120, 150, 200): "estimated",
    (40, 70, 130): "actual",
}
# A bar is at least this many pixels of its colour.
MIN_BAR_PIXELS = 1500


def main():
    path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    min_fraction = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
    width, height, channels, rows = decode(path)
    if (width, height) != (want_w, want_h):
        raise SystemExit(f"{path}: {width}x{height}, expected {want_w}x{want_h}")
    background = rows[0][:3]
    inked = 0
    bars = {name: 0 for name in PALETTE.values()}
    for row in rows:
        for x in range(0, len(row), channels):
            px = row[x : x + 3]
            if px != background:
                inked += 1
                name = PALETTE.get(tuple(px))
                if name:
                    bars[name] += 1
    fraction = inked / (width * height)
    shown = sorted(name for name, n in bars.items() if n >= MIN_BAR_PIXELS)
    print(f"{path}: {width}x{height}, {fraction:.1%} non-background pixels; chart bars: "
          + ", ".join(f"{name} {n}" for name, n in sorted(bars.items())))
    if fraction < min_fraction:
        raise SystemExit(f"{path}: looks blank ({fraction:.1%} < {min_fraction:.0%} non-background)")
    # The components chart draws estimated and actual bars; the per-GPU chart stacks weights.
    wanted = sys.argv[5].split(",") if len(sys.argv) > 5 else ["estimated", "actual", "weights"]
    for needed in wanted:
        if needed not in shown:
            raise SystemExit(f"{path}: a chart is not visible (no {needed} bars; bars seen: {shown or 'none'})")


if __name__ == "__main__":
    main()
