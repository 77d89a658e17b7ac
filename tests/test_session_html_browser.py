"""The HTML session report in a real headless browser (Debian's chromium,
installed by .ci/run): the page is rendered to a PNG screenshot, the PNG is
decoded here (zlib, no image library) and the chart is checked to be drawn:
pixels of the fill line's colour, and of the refresh and compaction marks,
inside the chart's area (found by its own background colour)."""

import os
import shutil
import struct
import subprocess
import zlib

import pytest

from engine.session import build_report, load_style, render_html
from session_fixtures import synthetic, write

WIDTH, HEIGHT = 1000, 700


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no chromium on the PATH: .ci/run installs Debian's chromium (apt-get install -y chromium)")


def decode_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return width, height, rows


def _rgb(hex_color):
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def _near(a, b, tol=6):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    style = load_style()
    report = build_report(str(write(tmp / "s.jsonl", synthetic())), style)
    page = tmp / "report.html"
    page.write_text(render_html(report, style), encoding="utf-8")
    png = tmp / "shot.png"
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp / 'profile'}", "--hide-scrollbars", "--force-device-scale-factor=1",
           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}", page.as_uri()]
    run = subprocess.run(cmd, capture_output=True, timeout=120, env=dict(os.environ, HOME=str(tmp)))
    assert png.is_file() and png.stat().st_size > 0, run.stderr.decode(errors="replace")[-2000:]
    return style, report, decode_png(png.read_bytes())


def test_the_chart_is_drawn_in_the_browser(screenshot):
    style, report, (width, height, rows) = screenshot
    colors = style["html"]["colors"]
    area = _rgb(colors["chart_background"])
    inside = [(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if px == area]
    assert inside, "the chart's area was not painted"
    x0, x1 = min(x for x, _ in inside), max(x for x, _ in inside)
    y0, y1 = min(y for _, y in inside), max(y for _, y in inside)
    m = style["html"]["margin"]
    assert x1 - x0 + 1 == style["html"]["width"] - m["left"] - m["right"]  # the SVG at its declared size

    def found(color):
        want = _rgb(color)
        return [(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1) if _near(rows[y][x], want)]

    line = found(colors["line"])
    assert line, "no pixel of the fill line's colour inside the chart"
    # the line runs across the chart, and is higher (smaller y) where the fill is higher
    xs = [x for x, _ in line]
    assert max(xs) - min(xs) > 0.8 * (x1 - x0)
    left_band = [y for x, y in line if x < x0 + 0.1 * (x1 - x0)]
    peak_x = x0 + (x1 - x0) * 3 / 5  # the 4th of 6 responses holds the peak (140K)
    peak_band = [y for x, y in line if abs(x - peak_x) < 4]
    assert left_band and peak_band and min(peak_band) < min(left_band)
    assert found(colors["refresh"]), "no refresh mark"
    assert found(colors["compaction"]), "no compaction mark"
