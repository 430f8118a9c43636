#!/usr/bin/env python3
"""The public API of a module as text, one declaration a line, sorted: read from the symbol graphs that
swift-symbolgraph-extract wrote (the module's own and its extensions of other modules). scripts/docs compares it
with API/<Module>.txt, so that a change of public API is a change of that file too — deliberate and reviewed.

    scripts/api_listing.py <symbol-graph-dir> <Module>
"""
import json
import sys
from pathlib import Path


def declaration(symbol):
    text = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    return " ".join(text.split())


def listing(directory, module):
    lines = set()
    for path in sorted(Path(directory).glob(f"{module}*.symbols.json")):
        graph = json.loads(path.read_text(encoding="utf-8"))
        extended = path.name[len(module) + 1:-len(".symbols.json")] if "@" in path.name else ""
        for symbol in graph.get("symbols", []):
            where = ".".join(symbol.get("pathComponents", []))
            prefix = f"[{extended}] " if extended else ""
            lines.add(f"{prefix}{where}: {declaration(symbol)}")
    return sorted(lines)


if __name__ == "__main__":
    directory, module = sys.argv[1], sys.argv[2]
    sys.stdout.write("".join(line + "\n" for line in listing(directory, module)))
