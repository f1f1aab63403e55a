#!/usr/bin/env python3
"""The documentation's own checks (ctest: docs.check):

1. every HERD_* and OMP_* environment variable that herd's sources name
   (a string literal that is exactly such a name) is documented in the
   environment reference, docs/reference/environment.md, as `NAME`;
2. every relative link in README.md and docs/**/*.md resolves: the file
   exists, and a #fragment names a heading of that file.

Prints one line per problem and `docs: N problems`; exit status 1 if any.

usage: tools/check_docs.py [REPO_ROOT]
"""
import os
import re
import sys

REFERENCE = "docs/reference/environment.md"
NAME = re.compile(r'"((?:HERD|OMP)_[A-Z][A-Z0-9_]*)"')
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.*)")
# Names that are prefixes the code matches, not variables.
PREFIXES = {"HERD_POOL_"}


def anchor(title):
    a = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return a.replace(" ", "-")


def variables(root):
    found = {}
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                p = os.path.join(d, f)
                for m in NAME.finditer(open(p, errors="replace").read()):
                    if m.group(1) not in PREFIXES:
                        found.setdefault(m.group(1), os.path.relpath(p, root))
    return found


def markdown_files(root):
    yield os.path.join(root, "README.md")
    for d, _, files in os.walk(os.path.join(root, "docs")):
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(d, f)


def headings(path):
    out, incode = set(), False
    for ln in open(path, errors="replace"):
        if ln.startswith("```"):
            incode = not incode
        m = HEADING.match(ln)
        if m and not incode:
            out.add(anchor(m.group(1)))
    return out


def links(path):
    incode = False
    for n, ln in enumerate(open(path, errors="replace"), 1):
        if ln.startswith("```"):
            incode = not incode
            continue
        if not incode:
            for m in LINK.finditer(ln):
                yield n, m.group(1)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    ref_path = os.path.join(root, REFERENCE)
    ref = open(ref_path).read() if os.path.exists(ref_path) else ""
    if not ref:
        problems.append(f"{REFERENCE}: missing")
    for var, where in sorted(variables(root).items()):
        if f"`{var}" not in ref:
            problems.append(f"{REFERENCE}: {var} (read in {where}) is not documented")
    for md in markdown_files(root):
        rel = os.path.relpath(md, root)
        for n, target in links(md):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # a URL
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(dest):
                problems.append(f"{rel}:{n}: link to {target}: no such file")
            elif frag and dest.endswith(".md") and frag not in headings(dest):
                problems.append(f"{rel}:{n}: link to {target}: no heading #{frag}")
    for p in problems:
        print(p)
    print(f"docs: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
