#!/usr/bin/env python3
"""Draws docs/architecture.svg: rope-mlir's data flow, stage by stage, with
the layer (folder of lib/) that owns each stage, the layers the stages use,
and the entry points that register them.

    python3 utils/draw_architecture.py > docs/architecture.svg

Plain Python (standard library only) writing SVG by hand, so the output is
the same byte for byte on every machine; test/docs/architecture-figure-fresh.test
regenerates it and diffs it against the committed copy. To change the
figure, change the tables below, rerun the command above and commit both.
"""

import sys
from xml.sax.saxutils import escape

WIDTH = 1000
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"

# Colours: one per kind of box.
STAGE = ("#e8f0fe", "#3b6fc9")     # a step of the data flow (fill, stroke)
IO = ("#f1f3f4", "#5f6368")        # what comes in, what runs
SUPPORT = ("#fef7e0", "#b08400")   # a layer the stages use
ENTRY = ("#e6f4ea", "#2f7d47")     # an entry point
TEXT = "#202124"
NOTE = "#5f6368"

# The data flow, top to bottom: (title, note, colours). The title is code
# (a pass, pipeline or IR); the note names the layer that owns the step.
FLOW_X, FLOW_W, STAGE_H, STEP = 30, 440, 46, 66
FLOW_TOP = 70
STAGES = [
    ("frontend IR", "torch-mlir (linalg on tensors), TOSA, linalg; or rope ops by hand", IO),
    ("rope-raise", "lib/Raising: RoPE and attention patterns become rope ops", STAGE),
    ("rope-fold-rotation-into-qk", "lib/Fusion: the rotation moves into the Q·Kᵀ product", STAGE),
    ("rope-convert-attention-to-online, tile, decompose",
     "lib/Dialect/Rope/Transforms: rope.online_attention, tiled", STAGE),
    ("convert-rope-to-linalg", "lib/Conversion/RopeToLinalg: linalg on tensors", STAGE),
    ("fuse, bufferize, check dynamic shapes", "lib/Codegen/Common", STAGE),
]
# After the last stage the flow splits into the two targets, then joins at
# the runtime.
TARGETS = [
    ("CPU: micro-kernels, OpenMP", "lib/Codegen/CPU → LLVM dialect"),
    ("GPU: a thread per row", "lib/Codegen/GPU → NVVM, cubin"),
]
RUN = ("run", "JIT in process (lib/CAPI, ExecutionEngine) or an AOT .so / GPU "
       "kernel folder; lib/Runtime reports failed checks")

# Layers the stages use (right-hand column): (title, note lines, first stage,
# last stage it spans, stages that use it).
SIDE_X, SIDE_W = 560, 190
IR_X, IR_W = 775, 205


def stage_y(i):
    # Room above the fold for the frame of the pipelines.
    return FLOW_TOP + i * STEP + (14 if i >= 2 else 0)


def text(x, y, s, size=12, anchor="middle", family=FONT, weight="normal", fill=TEXT,
         style="normal"):
    attrs = (f'x="{x}" y="{y}" font-family="{family}" font-size="{size}" '
             f'text-anchor="{anchor}" fill="{fill}"')
    if weight != "normal":
        attrs += f' font-weight="{weight}"'
    if style != "normal":
        attrs += f' font-style="{style}"'
    return f"  <text {attrs}>{escape(s)}</text>"


def box(x, y, w, h, colours, dashed=False, radius=6):
    fill, stroke = colours
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return (f'  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{radius}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"{dash}/>')


def arrow(x1, y1, x2, y2, colour=TEXT, marker="flow", dashed=False):
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    return (f'  <line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" '
            f'stroke-width="1.5"{dash} marker-end="url(#{marker})"/>')


def titled_box(x, y, w, h, title, notes, colours, mono=True):
    out = [box(x, y, w, h, colours)]
    cx = x + w // 2
    lines = [title] + list(notes)
    top = y + (h - 15 * len(lines)) // 2 + 12
    out.append(text(cx, top, title, size=12, family=MONO if mono else FONT, weight="bold"))
    for k, note in enumerate(notes):
        out.append(text(cx, top + 15 * (k + 1), note, size=11, fill=NOTE))
    return out


def draw():
    out = []
    n = len(STAGES)
    targets_y = stage_y(n)
    run_y = stage_y(n + 1)
    entry_y = run_y + STAGE_H + 50
    height = entry_y + 2 * STAGE_H + 60

    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
               f'viewBox="0 0 {WIDTH} {height}">')
    out.append("  <defs>")
    for name, colour in (("flow", TEXT), ("uses", SUPPORT[1]), ("entry", ENTRY[1])):
        out.append(f'    <marker id="{name}" viewBox="0 0 10 10" refX="10" refY="5" '
                   f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                   f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    out.append("  </defs>")
    out.append(f'  <rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>')
    out.append(text(WIDTH // 2, 28, "rope-mlir: the data flow and the layers that own each step",
                    size=16, weight="bold"))
    out.append(text(FLOW_X + FLOW_W // 2, 52, "data flow (top to bottom)", size=12,
                    fill=NOTE, style="italic"))
    out.append(text(SIDE_X + SIDE_W // 2, 52, "used by the steps", size=12, fill=NOTE,
                    style="italic"))
    out.append(text(IR_X + IR_W // 2, 52, "the dialect", size=12, fill=NOTE, style="italic"))

    # The pipelines run stages 2 (the fold) to the targets: a dashed frame,
    # named by a box beside it.
    top = stage_y(2) - 18
    bottom = stage_y(n) + STAGE_H + 10
    out.append(box(FLOW_X - 14, top, FLOW_W + 28, bottom - top, ("none", NOTE), dashed=True,
                   radius=10))
    py = stage_y(n - 1)
    ph = stage_y(n) + STAGE_H - py
    out += titled_box(SIDE_X, py, SIDE_W, ph, "lib/Pipelines",
                      ["rope-lower-to-cpu", "rope-lower-to-nvvm", "compose the steps",
                       "in the frame"], ("#ffffff", NOTE))
    out.append(f'  <line x1="{FLOW_X + FLOW_W + 14}" y1="{py + ph // 2}" x2="{SIDE_X}" '
               f'y2="{py + ph // 2}" stroke="{NOTE}" stroke-width="1.5" stroke-dasharray="6 4"/>')

    cx = FLOW_X + FLOW_W // 2
    for i, (title, note, colours) in enumerate(STAGES):
        y = stage_y(i)
        out += titled_box(FLOW_X, y, FLOW_W, STAGE_H, title, [note], colours,
                          mono=(i != 0))
        if i + 1 < n:
            out.append(arrow(cx, y + STAGE_H, cx, stage_y(i + 1)))

    # The two targets, side by side, then the runtime.
    half = (FLOW_W - 20) // 2
    last = stage_y(n - 1) + STAGE_H
    for k, (title, note) in enumerate(TARGETS):
        x = FLOW_X + k * (half + 20)
        out += titled_box(x, targets_y, half, STAGE_H, title, [note], STAGE, mono=False)
        tx = x + half // 2
        out.append(arrow(tx, last, tx, targets_y))
        out.append(arrow(tx, targets_y + STAGE_H, tx, run_y))
    out += titled_box(FLOW_X, run_y, FLOW_W, STAGE_H + 14, RUN[0],
                      [RUN[1][:62], RUN[1][62:].strip()], IO, mono=False)

    # lib/Analysis, used by raising and fusion (not by the dialect).
    ay = stage_y(1)
    ah = stage_y(2) + STAGE_H - ay
    out += titled_box(SIDE_X, ay, SIDE_W, ah, "lib/Analysis",
                      ["terms, constant evaluation,", "op classification", "(MLIR only; no passes)"],
                      SUPPORT)
    for i in (1, 2):
        y = stage_y(i) + STAGE_H // 2
        out.append(arrow(FLOW_X + FLOW_W, y, SIDE_X, y, colour=SUPPORT[1], marker="uses",
                         dashed=True))

    # The dialect itself: every stage from raising to the conversion uses it.
    iy = stage_y(1)
    ih = stage_y(4) + STAGE_H - iy
    out += titled_box(IR_X, iy, IR_W, ih, "lib/Dialect/Rope/IR",
                      ["ops, attributes, interfaces", "verifiers, folders, tiling",
                       "their decompositions:", "LinalgBuilders, AttentionRules",
                       "ExtentRelations", "", "used by every step", "after the frontend IR"],
                      SUPPORT)
    for i in (3, 4):
        y = stage_y(i) + STAGE_H // 2
        out.append(arrow(FLOW_X + FLOW_W, y, IR_X, y, colour=SUPPORT[1], marker="uses",
                         dashed=True))

    # Entry points: everything is registered in one place.
    out.append(text(WIDTH // 2, entry_y - 14, "entry points (all register through lib/Registration)",
                    size=12, fill=NOTE, style="italic"))
    entries = [
        ("tools/rope-opt", ["+ test/lib (test passes)"]),
        ("lib/Plugin", ["for the stock mlir-opt"]),
        ("lib/CAPI", ["libRopeCAPI.so ← rope_mlir"]),
        ("tools/rope-fuzz", ["libFuzzer target"]),
    ]
    ew, gap = 220, 20
    ex0 = (WIDTH - (len(entries) * ew + (len(entries) - 1) * gap)) // 2
    reg_y = entry_y + STAGE_H + 40
    for k, (title, notes) in enumerate(entries):
        x = ex0 + k * (ew + gap)
        out += titled_box(x, entry_y, ew, STAGE_H, title, notes, ENTRY)
        out.append(arrow(x + ew // 2, entry_y + STAGE_H, x + ew // 2, reg_y, colour=ENTRY[1],
                         marker="entry"))
    out += titled_box(ex0, reg_y, len(entries) * ew + (len(entries) - 1) * gap, STAGE_H,
                      "lib/Registration",
                      ["InitAllRope: every dialect, pass and pipeline above"], ENTRY)
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(draw())
