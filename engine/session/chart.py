"""The context fill as a terminal chart, and as an SVG for the HTML page.

x runs over the session's API responses in order (time runs left to right;
an idle hour does not stretch the chart); y is the fill in percent of the
context window.  A compaction starts a new stretch: the line is not joined
across it.  Marks show where a refresh was injected and where a compaction
happened (before the response at that x).  Glyphs, sizes and colours come
from the report style (`chart:` and `html:`).
"""

from html import escape

from engine.base.controls import paint as colored


def _col(x, n, width):
    return 0 if n <= 1 else round(x * (width - 1) / (n - 1))


def _marks(report):
    refresh = {r["x"] for r in report["refreshes"]}
    compaction = {c["x"] for c in report["compactions"]}
    return refresh, compaction


def terminal(report, style, color=False):
    """The chart as lines of text (no trailing newline)."""
    c = style["chart"]
    points = report["fill"]
    n = len(points)
    if not n:
        return "  (no usage records: nothing to draw)"
    width = c["width"]
    height = c["height"]
    top = max(100.0, max(p["percent"] for p in points))
    grid = [[" "] * width for _ in range(height)]

    def row(pct):
        return height - 1 - min(height - 1, int(round(pct / top * (height - 1))))

    def paint(rw, col, ch, kind):
        grid[rw][col] = (ch, kind) if color else ch

    prev = None
    for p in points:
        col, rw = _col(p["x"], n, width), row(p["percent"])
        if prev is not None and prev[2] == p["segment"] and col - prev[0] > 1:
            for k in range(prev[0] + 1, col):  # join the two responses
                frac = (k - prev[0]) / (col - prev[0])
                r = int(round(prev[1] + (rw - prev[1]) * frac))
                if grid[r][k] == " ":
                    paint(r, k, c["join"], "line")
        paint(rw, col, c["line"], "line")
        prev = (col, rw, p["segment"])
    refresh, compaction = _marks(report)
    marks = [" "] * width
    for x in refresh | compaction:
        col = _col(min(x, n - 1), n, width)
        glyph = c["both"] if x in refresh and x in compaction else c["refresh"] if x in refresh else c["compaction"]
        # two different marks squeezed into one column show as both
        marks[col] = glyph if marks[col] in (" ", glyph) else c["both"]

    def paint_text(ch, kind):
        if not color or ch == " ":
            return ch
        return colored(c["colors"][kind], ch)  # the engine's own colour: a mark (engine/base/controls.py)

    lines = []
    label_rows = {0: f"{top:.0f}%", (height - 1) // 2: f"{top / 2:.0f}%", height - 1: "0%"}
    for i, cells in enumerate(grid):
        label = label_rows.get(i, "")
        text = "".join(paint_text(*cell) if isinstance(cell, tuple) else cell for cell in cells)
        lines.append(f"{label:>5} {paint_text('│', 'axis')}{text}")
    lines.append(f"{'':>5} {paint_text('└' + '─' * width, 'axis')}")
    kinds = {c["refresh"]: "refresh", c["compaction"]: "compaction", c["both"]: "refresh"}
    lines.append(f"{'':>5}  " + "".join(paint_text(m, kinds.get(m, "axis")) for m in marks).rstrip())
    first, last = points[0], points[-1]
    lines.append(f"{'':>5}  response 1{n:>{max(1, width - len('response 1'))}}")
    legend = f"{c['line']} fill   {c['refresh']} refresh   {c['compaction']} compaction   {c['both']} both"
    lines.append(f"{'':>5}  {legend}")
    if first.get("time") and last.get("time"):
        lines.append(f"{'':>5}  {first['time']} .. {last['time']}")
    return "\n".join(line.rstrip() for line in lines)


def svg(report, style):
    """The chart as one inline <svg> element (escaped, no script, no link)."""
    h = style["html"]
    W, H, m = h["width"], h["height"], h["margin"]
    left, right, top_, bottom = m["left"], W - m["right"], m["top"], H - m["bottom"]
    col = h["colors"]
    points = report["fill"]
    n = len(points)
    top = max([100.0] + [p["percent"] for p in points])
    grid_pcts = sorted(set(h["grid_percent"]) | ({top} if top > 100 else set()))

    def X(x):
        return left + (0 if n <= 1 else (right - left) * x / (n - 1))

    def Y(pct):
        return bottom - (bottom - top_) * pct / top

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'role="img" aria-label="context fill per API response">',
           f'<rect x="0" y="0" width="{W}" height="{H}" fill="{col["background"]}"/>',
           f'<rect class="area" x="{left}" y="{top_}" width="{right - left}" height="{bottom - top_}" '
           f'fill="{col["chart_background"]}"/>']
    for g in grid_pcts:
        if g > top:
            continue
        y = Y(g)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{col["grid"]}" stroke-width="1"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="{col["text"]}">{g:g}%</text>')
    for c_ in report["compactions"]:
        x = X(min(c_["x"], max(n - 1, 0)) - 0.5 if n > 1 and c_["x"] > 0 else 0)
        title = escape(f"compaction ({c_.get('trigger') or '?'}), {c_.get('pre_tokens') or '?'} tokens before")
        out.append(f'<line class="compaction" x1="{x:.1f}" y1="{top_}" x2="{x:.1f}" y2="{bottom}" stroke="{col["compaction"]}" '
                   f'stroke-width="2" stroke-dasharray="6 4"><title>{title}</title></line>')
    for r in report["refreshes"]:
        x = X(min(r["x"], max(n - 1, 0)) - 0.25 if n > 1 and r["x"] > 0 else 0)
        tokens = "" if r.get("tokens") is None else f", {r['tokens']} tokens"
        title = escape(f"refresh {r['handler']}, {r['chars']} characters{tokens}")
        out.append(f'<line class="refresh" x1="{x:.1f}" y1="{top_}" x2="{x:.1f}" y2="{bottom}" stroke="{col["refresh"]}" '
                   f'stroke-width="2"><title>{title}</title></line>')
    stretches = {}
    for p in points:
        stretches.setdefault(p["segment"], []).append(p)
    for seg in stretches.values():
        coords = " ".join(f"{X(p['x']):.1f},{Y(p['percent']):.1f}" for p in seg)
        out.append(f'<polyline class="fill" points="{coords}" fill="none" stroke="{col["line"]}" '
                   f'stroke-width="{h["line_width"]}" stroke-linejoin="round"/>')
        if h["point_radius"]:
            for p in seg:
                title = escape(f"{p['tokens']:,} tokens ({p['percent']}%) {p.get('time') or ''}")
                out.append(f'<circle cx="{X(p["x"]):.1f}" cy="{Y(p["percent"]):.1f}" r="{h["point_radius"]}" '
                           f'fill="{col["line"]}"><title>{title}</title></circle>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="{col["text"]}" stroke-width="1"/>')
    out.append(f'<text x="{(left + right) / 2:.0f}" y="{H - 10}" text-anchor="middle" font-size="12" '
               f'fill="{col["text"]}">API responses, in order (1 .. {n})</text>')
    out.append("</svg>")
    return "\n".join(out)
