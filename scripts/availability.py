#!/usr/bin/env python3
"""The SDK's iOS floor, checked on Linux from the toolchain's own availability (scripts/check-availability runs it).

Every symbol the client modules' sources reference is read from the index store the debug build writes (through the
toolchain's libIndexStore); each one's iOS availability comes from the symbol graphs of the modules that declare it
(`swift-symbolgraph-extract`: the standard library, _Concurrency, Synchronization, Observation, Foundation's
annotated part, the SwiftNIO and swift-crypto modules, and the project's own modules), plus a short hand-kept list for
Apple frameworks whose Linux modules carry no Apple availability (FOUNDATION_ABOVE_FLOOR). A reference to a symbol
introduced after the floor fails the check unless it lies inside a matching `@available(iOS N, ...)` declaration or an
`if #available(iOS N, ...)` / `guard #available(iOS N, ...)` scope with N at least the symbol's version.

Usage: availability.py --store DIR --graphs DIR --floor 16.0 --modules M1,M2 --root SOURCES_ROOT
Prints the figure (references checked, symbols with iOS availability, violations) and every violation; exits 1 on any.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import sys

# What Linux's modules leave unannotated, as Apple declares it: FoundationNetworking's URLSession carries no Apple
# availability on Linux (FoundationEssentials, FoundationInternationalization and the toolchain's modules do; Security
# and UIKit are stand-ins under Tests/AppleStandIns, which carry Apple's own annotations). (USR prefix of the module,
# the symbol's name as the index store reports it, iOS version.)
FOUNDATION_ABOVE_FLOOR = [
    ("s:20FoundationNetworking", "cancelByProducingResumeData(completionHandler:)", (17, 0)),
    ("s:20FoundationNetworking", "uploadTask(withResumeData:)", (17, 0)),
    ("s:20FoundationNetworking", "uploadTask(withResumeData:completionHandler:)", (17, 0)),
    ("s:20FoundationNetworking", "didCreateTask(_:)", (16, 0)),
    ("s:20FoundationNetworking", "urlSession(_:needNewBodyStreamForTask:from:completionHandler:)", (17, 0)),
    ("s:20FoundationNetworking", "urlSession(_:task:didReceiveInformationalResponse:)", (17, 0)),
    ("s:20FoundationNetworking", "assumesHTTP3Capable", (15, 0)),
    ("s:20FoundationNetworking", "usesClassicLoadingMode", (18, 4)),
]

ROLE_REFERENCE = 1 << 2
ROLE_DECLARATION = 1 << 0
ROLE_DEFINITION = 1 << 1
ROLE_IMPLICIT = 1 << 8
# Implicit references the compiler makes only where the deployment target has them, with a fallback below it:
# `for await` calls AsyncIteratorProtocol's `next(isolation:)` from iOS 18 and `next()` before (SE-0421).
DEPLOYMENT_CHOSEN = {"next(isolation:)"}
DEPENDENCY_RECORD = 2


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.length).decode() if self.data else ""


def load_indexstore(path):
    lib = ctypes.CDLL(path)
    vp = ctypes.c_void_p
    lib.indexstore_store_create.restype = vp
    lib.indexstore_store_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.indexstore_unit_reader_create.restype = vp
    lib.indexstore_unit_reader_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
    lib.indexstore_record_reader_create.restype = vp
    lib.indexstore_record_reader_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
    for name in ("indexstore_unit_reader_get_module_name", "indexstore_unit_reader_get_main_file",
                 "indexstore_unit_dependency_get_name", "indexstore_unit_dependency_get_filepath",
                 "indexstore_symbol_get_usr", "indexstore_symbol_get_name", "indexstore_error_get_description"):
        getattr(lib, name).restype = StringRef
        getattr(lib, name).argtypes = [vp]
    lib.indexstore_error_get_description.restype = ctypes.c_char_p
    lib.indexstore_unit_dependency_get_kind.restype = ctypes.c_int
    lib.indexstore_unit_dependency_get_kind.argtypes = [vp]
    lib.indexstore_occurrence_get_symbol.restype = vp
    lib.indexstore_occurrence_get_symbol.argtypes = [vp]
    lib.indexstore_occurrence_get_roles.restype = ctypes.c_uint64
    lib.indexstore_occurrence_get_roles.argtypes = [vp]
    lib.indexstore_occurrence_get_line_col.argtypes = [vp, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
    lib.indexstore_unit_reader_dispose.argtypes = [vp]
    lib.indexstore_record_reader_dispose.argtypes = [vp]
    return lib


APPLY = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p)
APPLY_NAME = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, StringRef)


def references(lib, store_path, modules, root):
    """(file, line, column, usr, name) of every reference made by the sources under `root` of `modules`."""
    error = ctypes.c_void_p()
    store = lib.indexstore_store_create(store_path.encode(), ctypes.byref(error))
    if not store:
        sys.exit(f"availability: cannot open the index store {store_path}")
    units = []
    lib.indexstore_store_units_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p, APPLY_NAME]
    lib.indexstore_store_units_apply_f(store, 0, None, APPLY_NAME(lambda _, name: units.append(name.text()) or True))
    records = {}
    for unit in units:
        reader = lib.indexstore_unit_reader_create(store, unit.encode(), ctypes.byref(error))
        if not reader:
            continue
        module = lib.indexstore_unit_reader_get_module_name(reader).text()
        if module in modules:
            def on_dependency(_, dependency):
                if lib.indexstore_unit_dependency_get_kind(dependency) == DEPENDENCY_RECORD:
                    path = lib.indexstore_unit_dependency_get_filepath(dependency).text()
                    # The store keeps the units of sources since deleted (a probe file, a moved type): not built now.
                    if os.path.realpath(path).startswith(root) and os.path.exists(path):
                        records[lib.indexstore_unit_dependency_get_name(dependency).text()] = os.path.realpath(path)
                return True
            lib.indexstore_unit_reader_dependencies_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, APPLY]
            lib.indexstore_unit_reader_dependencies_apply_f(reader, None, APPLY(on_dependency))
        lib.indexstore_unit_reader_dispose(reader)
    found = []
    for record, path in sorted(records.items(), key=lambda item: item[1]):
        reader = lib.indexstore_record_reader_create(store, record.encode(), ctypes.byref(error))
        if not reader:
            continue

        def on_occurrence(_, occurrence):
            roles = lib.indexstore_occurrence_get_roles(occurrence)
            if roles & ROLE_REFERENCE and not roles & (ROLE_DECLARATION | ROLE_DEFINITION):
                symbol = lib.indexstore_occurrence_get_symbol(occurrence)
                if roles & ROLE_IMPLICIT and lib.indexstore_symbol_get_name(symbol).text() in DEPLOYMENT_CHOSEN:
                    return True
                line, column = ctypes.c_uint(), ctypes.c_uint()
                lib.indexstore_occurrence_get_line_col(occurrence, ctypes.byref(line), ctypes.byref(column))
                found.append((path, line.value, column.value, lib.indexstore_symbol_get_usr(symbol).text(),
                              lib.indexstore_symbol_get_name(symbol).text()))
            return True
        lib.indexstore_record_reader_occurrences_apply_f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, APPLY]
        lib.indexstore_record_reader_occurrences_apply_f(reader, None, APPLY(on_occurrence))
        lib.indexstore_record_reader_dispose(reader)
    return found, len(records)


def ios_availability(graph_dir):
    """USR -> (major, minor) of iOS `introduced`, from every symbol graph in `graph_dir`."""
    introduced = {}
    for path in glob.glob(os.path.join(graph_dir, "**", "*.symbols.json"), recursive=True):
        with open(path) as handle:
            graph = json.load(handle)
        for symbol in graph.get("symbols", []):
            for entry in symbol.get("availability") or []:
                if entry.get("domain") == "iOS" and "introduced" in entry:
                    version = entry["introduced"]
                    introduced[symbol["identifier"]["precise"]] = (version.get("major", 0), version.get("minor", 0))
    return introduced


def strip_comments_and_strings(text):
    """The source with comments and string literals blanked (newlines kept), so that braces count true."""
    out = []
    index, length = 0, len(text)
    while index < length:
        if text.startswith("//", index):
            end = text.find("\n", index)
            end = length if end < 0 else end
            out.append(" " * (end - index))
            index = end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            end = length if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[index:end]))
            index = end
        elif text.startswith('"""', index):
            end = text.find('"""', index + 3)
            end = length if end < 0 else end + 3
            out.append(re.sub(r"[^\n]", " ", text[index:end]))
            index = end
        elif text[index] == '"':
            end = index + 1
            while end < length and text[end] not in '"\n':
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, length)
            out.append(" " * (end - index))
            index = end
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def matching_brace(text, open_index):
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def enclosing_close(text, index):
    """The `}` that closes the scope containing `index` (the end of the file at top level)."""
    depth = 0
    for position in range(index, len(text)):
        if text[position] == "{":
            depth += 1
        elif text[position] == "}":
            if depth == 0:
                return position
            depth -= 1
    return len(text) - 1


VERSION = re.compile(r"\biOS\s+(\d+)(?:\.(\d+))?")


def guarded_ranges(source):
    """(start offset, end offset, (major, minor)) of every scope that an iOS availability condition covers."""
    text = strip_comments_and_strings(source)
    ranges = []
    for match in re.finditer(r"@available\s*\(([^)]*)\)", text):
        version = VERSION.search(match.group(1))
        if not version:
            continue
        brace = text.find("{", match.end())
        if brace < 0:
            continue
        ranges.append((match.start(), matching_brace(text, brace), (int(version.group(1)), int(version.group(2) or 0))))
    for match in re.finditer(r"\b(if|guard|while)\b[^{]*?#available\s*\(([^)]*)\)", text):
        version = VERSION.search(match.group(2))
        if not version:
            continue
        level = (int(version.group(1)), int(version.group(2) or 0))
        brace = text.find("{", match.end())
        if brace < 0:
            continue
        if match.group(1) == "guard":
            # After `guard #available(...) else { ... }`, the rest of the enclosing scope.
            else_end = matching_brace(text, brace)
            ranges.append((else_end, enclosing_close(text, else_end + 1), level))
        else:
            ranges.append((brace, matching_brace(text, brace), level))
    return ranges


def line_offsets(text):
    offsets, total = [0], 0
    for line in text.split("\n"):
        total += len(line) + 1
        offsets.append(total)
    return offsets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--graphs", required=True)
    parser.add_argument("--floor", default="16.0")
    parser.add_argument("--modules", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--libindexstore", default="/opt/swift/usr/lib/libIndexStore.so")
    arguments = parser.parse_args()
    floor = tuple(int(part) for part in (arguments.floor.split(".") + ["0"])[:2])
    modules = set(arguments.modules.split(","))
    root = os.path.realpath(arguments.root)

    lib = load_indexstore(arguments.libindexstore)
    found, files = references(lib, arguments.store, modules, root)
    introduced = ios_availability(arguments.graphs)
    def version_of(usr, name):
        if usr in introduced:
            return introduced[usr]
        for prefix, listed, version in FOUNDATION_ABOVE_FLOOR:
            if usr.startswith(prefix) and name == listed:
                return version
        return None

    sources, violations, annotated = {}, [], 0
    for path, line, column, usr, name in found:
        version = version_of(usr, name)
        if version is None:
            continue
        annotated += 1
        if version <= floor:
            continue
        if path not in sources:
            with open(path) as handle:
                text = handle.read()
            sources[path] = (line_offsets(text), guarded_ranges(text))
        offsets, ranges = sources[path]
        offset = offsets[line - 1] + column - 1 if line - 1 < len(offsets) else 0
        if any(start <= offset <= end and level >= version for start, end, level in ranges):
            continue
        violations.append((path, line, column, name, usr, version))

    seen = set()
    for path, line, column, name, usr, version in violations:
        key = (path, line, column, usr)
        if key in seen:
            continue
        seen.add(key)
        relative = os.path.relpath(path, os.getcwd())
        print(f"{relative}:{line}:{column}: '{name}' needs iOS {version[0]}.{version[1]}, above the floor iOS "
              f"{floor[0]}.{floor[1]}, and no @available/#available covers it")
    print(f"availability: {len(found)} references in {files} files of {len(modules)} modules checked, "
          f"{annotated} to symbols with an iOS availability, {len(seen)} above iOS {floor[0]}.{floor[1]} unguarded")
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
