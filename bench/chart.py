"""Renders bench/install.sh's hyperfine results as an SVG bar chart: for each filesystem
and tree, the median install time of pkg, cp -a --reflink=always and GNU tar -xf, and the
irreducible floor, each as a bar relative to cp --reflink, labelled with its seconds.
Written without plotting libraries, so that it runs wherever the benchmark does.

usage: chart.py RESULTS_DIR OUT.svg FS... -- SHAPE...
"""
import json
import os
import sys
from xml.sax.saxutils import escape

TOOLS = [  # hyperfine command name, label, colour
    ("pkg install", "pkg install", "#2b6cb0"),
    ("cp --reflink", "cp -a --reflink", "#a0aec0"),
    ("tar -xf", "GNU tar -xf", "#ed8936"),
    ("irreducible floor", "floor (tails only)", "#48bb78"),
]
BAR, GAP, LEFT, TOP, WIDTH, CAP = 14, 16, 190, 40, 760, 4.0


def medians(path):
    with open(path) as f:
        return {r["command"]: r["median"] for r in json.load(f)["results"]}


def main():
    results, out, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sep = rest.index("--")
    fss, shapes = rest[:sep], rest[sep + 1:]
    groups = []
    for fs in fss:
        for shape in shapes:
            path = os.path.join(results, f"{fs}-{shape}-install.json")
            if os.path.exists(path):
                groups.append((f"{shape} on {fs}", medians(path)))
    if not groups:
        sys.exit(f"chart.py: no results in {results}")
    # The longest bar, relative to cp, sets the scale, up to CAP: tar on big files is 250x
    # cp, and would flatten every other bar; longer bars end in a break mark.
    scale = min(CAP, max(t[c] / t["cp --reflink"] for _, t in groups for c, _, _ in TOOLS if c in t))
    plot = WIDTH - LEFT - 200
    height = TOP + len(groups) * (len(TOOLS) * BAR + GAP) + 30
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="{LEFT}" y="16" font-size="13" font-weight="bold">Install time relative to '
           f'cp -a --reflink (shorter is faster; seconds, medians)</text>']
    for i, (_, _, colour) in enumerate(TOOLS):
        svg.append(f'<rect x="{LEFT + i * 140}" y="24" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{LEFT + i * 140 + 14}" y="33">{escape(TOOLS[i][1])}</text>')
    y = TOP + 4
    one = LEFT + plot / scale
    for label, t in groups:
        svg.append(f'<text x="{LEFT - 8}" y="{y + len(TOOLS) * BAR / 2 + 4}" text-anchor="end">{escape(label)}</text>')
        for cmd, _, colour in TOOLS:
            if cmd in t:
                ratio = t[cmd] / t["cp --reflink"]
                w = plot * min(ratio, scale) / scale
                label = f"{t[cmd]:.3g} s" + (f" ({ratio:.0f}x, off the scale)" if ratio > scale else "")
                svg.append(f'<rect x="{LEFT}" y="{y}" width="{w:.1f}" height="{BAR - 2}" fill="{colour}"/>'
                           f'<text x="{LEFT + w + 4:.1f}" y="{y + BAR - 4}">{escape(label)}</text>')
            y += BAR
        y += GAP
    svg.append(f'<line x1="{one:.1f}" y1="{TOP}" x2="{one:.1f}" y2="{y - GAP}" stroke="black" stroke-dasharray="3,3"/>')
    svg.append(f'<text x="{one:.1f}" y="{y + 4}" text-anchor="middle">cp = 1</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


main()
