#!/usr/bin/env python3
"""The public API of a module as text, one declaration a line, sorted: read from the symbol graphs that
swift-symbolgraph-extract wrote (the module's own and its extensions of other modules). scripts/docs compares it
with API/<Module>.txt, so that a change of public API is a change of that file too — deliberate and reviewed.
Given the module's sources, its `@_exported` imports are listed too (the symbol graphs leave them out, yet they are
what an app's `import` of the module brings with it): `@_exported import struct GatehouseProtocol.JSON`.

    scripts/api_listing.py <symbol-graph-dir> <Module> [<sources-dir>]
"""
import json
import re
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


def reexports(sources):
    """The module's `@_exported` imports, as written (access and `#if` aside), one a line."""
    lines = set()
    for path in sorted(Path(sources).rglob("*.swift")):
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*@_exported\s+(?:public\s+|package\s+)?import\s+(.+?)\s*(?://.*)?$", line)
            if match:
                lines.add("@_exported import " + " ".join(match.group(1).split()))
    return sorted(lines)


if __name__ == "__main__":
    directory, module = sys.argv[1], sys.argv[2]
    lines = listing(directory, module) + (reexports(sys.argv[3]) if len(sys.argv) > 3 else [])
    sys.stdout.write("".join(line + "\n" for line in lines))
