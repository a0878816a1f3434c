#!/usr/bin/env bash
# Renders `pipeproof report` in a real headless Chromium (Debian's chromium package) and checks that the
# screenshot is not blank: the PNG is decoded with python3's standard library (zlib, no PIL) and must show
# many distinct colours, a fair share of non-white pixels, and the timeline's F and B box colours.
# Missing chromium is a FAILURE, not a skip: scripts/setup.sh installs it and CI runs this test.
# Usage: chromium_report_test.sh PIPEPROOF_BINARY   (KEEP_SCREENSHOT=FILE keeps the PNG for a person to look at)
set -euo pipefail
cli=${1:?usage: chromium_report_test.sh PIPEPROOF_BINARY}
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then
  echo "FAIL: chromium is not installed (apt-get install chromium; scripts/setup.sh does it)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cli" report 1f1b zb-h1 dualpipe -P 4 -M 8 --costs F=1,I=1,W=1,FB=3 -o "$work/report.html" >/dev/null

# Flags: no sandbox (CI runs as root), no GPU, and nothing that reaches the network.
if ! timeout 180 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$work/profile" --screenshot="$work/shot.png" --window-size=1200,1300 \
    "file://$work/report.html" >"$work/chromium.log" 2>&1; then
  echo "FAIL: chromium did not render the report"
  cat "$work/chromium.log"
  exit 1
fi
[ -s "$work/shot.png" ] || { echo "FAIL: no screenshot written"; cat "$work/chromium.log"; exit 1; }
[ -n "${KEEP_SCREENSHOT:-}" ] && cp "$work/shot.png" "$KEEP_SCREENSHOT"

python3 - "$work/shot.png" <<'PY'
import struct, sys, zlib

def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("FAIL: not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"FAIL: unexpected PNG layout depth={depth} colour={colour} interlace={interlace}")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride): line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride): line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows

width, height, bpp, rows = read_png(sys.argv[1])
colours, non_white = set(), 0
for line in rows:
    for x in range(0, len(line), bpp):
        rgb = (line[x], line[x + 1], line[x + 2])
        colours.add(rgb)
        if rgb != (255, 255, 255):
            non_white += 1
share = non_white / (width * height)

def seen(hex_colour, tolerance=6):
    want = tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return any(all(abs(c - w) <= tolerance for c, w in zip(rgb, want)) for rgb in colours)

print(f"screenshot {width}x{height}: {len(colours)} distinct colours, {share:.1%} non-white")
problems = []
if len(colours) < 50: problems.append("too few colours")
if share < 0.05: problems.append("almost all white")
for name, hex_colour in (("F box orange", "#f39c3d"), ("B box green", "#5fb86a")):
    if not seen(hex_colour): problems.append(f"no {name} {hex_colour}")
if problems:
    sys.exit("FAIL: the report looks blank or broken: " + "; ".join(problems))
print("PASS: the report renders with its timelines")
PY
