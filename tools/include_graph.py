#!/usr/bin/env python3
"""herd's include graph by layer (the folders of src/), and its checks
(ctest: layers.check).

A file's layer is its folder under src/ (src/omp/kmp/ is omp); a quoted
include "X/name.h" names a header of layer X. Prints each edge between
layers with the headers it goes through, then the checks:

1. no include cycle between layers (a file's own layer does not count);
2. each seam holds: a layer that has a seam header into a lower layer
   includes nothing else of that layer (SEAMS below).

Prints one line per problem and `layers: N problems`; exit status 1 if any.
With --dot, prints the layer graph for Graphviz instead (dot -Tsvg).

usage: tools/include_graph.py [--dot] [REPO_ROOT]
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)
# layer -> (lower layer, the headers of it that the layer may include)
SEAMS = {
    "omp": ("core", {"seam_omp.h"}),
    "tools": ("core", {"seam_tools.h"}),
}


def layer_of(path):
    parts = path.split(os.sep)
    return parts[1] if len(parts) > 2 else None


def edges(root):
    """{(from_layer, to_layer): {header: [files]}} over src/."""
    out = {}
    src = os.path.join(root, "src")
    for d, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".c", ".h", ".S", ".def")):
                continue
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)
            a = layer_of(rel)
            text = open(p, errors="replace").read()
            for m in INCLUDE.finditer(text):
                b, header = m.group(1), m.group(2)
                if a is None or b == a or not os.path.isdir(os.path.join(src, b)):
                    continue
                out.setdefault((a, b), {}).setdefault(header, []).append(rel)
    return out


def cycles(graph):
    """Every cycle between layers, each once, as a list of layers."""
    nodes = sorted({n for e in graph for n in e})
    succ = {n: sorted(b for a, b in graph if a == n) for n in nodes}
    found = set()
    out = []

    def walk(start, n, path):
        for m in succ[n]:
            if m == start:
                key = frozenset(path)
                if key not in found:
                    found.add(key)
                    out.append(path + [start])
            elif m not in path and m > start:
                walk(start, m, path + [m])

    for n in nodes:
        walk(n, n, [n])
    return out


def main(argv):
    dot = "--dot" in argv
    args = [a for a in argv if a != "--dot"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..")
    graph = edges(root)
    if dot:
        print("digraph herd_layers {")
        for (a, b), hs in sorted(graph.items()):
            print(f'  "{a}" -> "{b}" [label="{len(hs)}"];')
        print("}")
        return 0
    for (a, b), hs in sorted(graph.items()):
        print(f"{a} -> {b}: " + ", ".join(f"{h} ({len(fs)})" for h, fs in sorted(hs.items())))
    problems = []
    for c in cycles(graph):
        problems.append("cycle: " + " -> ".join(c))
    for a, (b, allowed) in SEAMS.items():
        for h, fs in sorted(graph.get((a, b), {}).items()):
            if h not in allowed:
                problems.append(f"{a} includes {b}/{h} past its seam ({', '.join(sorted(allowed))}):"
                                f" {', '.join(sorted(set(fs)))}")
    for p in problems:
        print(p)
    print(f"layers: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
