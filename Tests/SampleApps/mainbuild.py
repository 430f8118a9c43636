#!/usr/bin/env python3
"""What the sample apps need from the repository's own debug build (`swift build`, whose modules the rest of the suite
tests): the compiler flags a target importing GatehouseMobileFirst and GatehouseClient is given (module search path, C
module maps and their include directories), and the object files of those modules and everything they depend on,
read from SwiftPM's build description (`.build/debug/description.json`). The apps are compiled and linked with swiftc
against them, so the client modules are built once per run, not again in a package of their own.

    mainbuild.py flags   BUILD_DIR           prints the flags, one per line
    mainbuild.py objects BUILD_DIR           prints the object files, one per line
"""
import glob
import json
import os
import sys

CLIENT_MODULES = ("GatehouseMobileFirst", "GatehouseClient")


def _description(build_dir):
    with open(os.path.join(build_dir, "description.json")) as file:
        return json.load(file)


def _command(description, module):
    for key, command in description["swiftCommands"].items():
        if command.get("moduleName") == module and not key.endswith("-tool.module"):
            return command
    raise SystemExit(f"the build description has no module {module} (build the package first: swift build)")


def flags(build_dir):
    """-I for the build's modules, and every -Xcc pair (module maps, include directories) the client modules get."""
    description = _description(build_dir)
    result = []
    for module in CLIENT_MODULES:
        command = _command(description, module)
        if not result:
            result += ["-I", command["importPath"]]
        arguments = command["otherArguments"]
        index = 0
        while index < len(arguments):
            if arguments[index] == "-Xcc" and index + 1 < len(arguments):
                pair = ["-Xcc", arguments[index + 1]]
                # "-Xcc -I -Xcc DIR" comes as two pairs.
                if arguments[index + 1] == "-I" and index + 3 < len(arguments):
                    pair += ["-Xcc", arguments[index + 3]]
                    index += 2
                if pair[1] not in ("-fPIC", "-g", "-fno-omit-frame-pointer") and not _contains(result, pair):
                    result += pair
                index += 2
            else:
                index += 1
    return result


def _contains(flags, pair):
    return any(flags[i:i + len(pair)] == pair for i in range(len(flags) - len(pair) + 1))


def objects(build_dir):
    """The object files of the client modules and of every module they depend on (Swift and C)."""
    description = _description(build_dir)
    dependencies = description["targetDependencyMap"]
    modules = set(CLIENT_MODULES)
    for module in CLIENT_MODULES:
        modules.update(dependencies.get(module, []))
    result = []
    for module in sorted(modules):
        found = sorted(glob.glob(os.path.join(build_dir, f"{module}.build", "**", "*.o"), recursive=True))
        if not found:
            raise SystemExit(f"no object files for {module} in {build_dir} (build the package first: swift build)")
        result += found
    return result


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("flags", "objects"):
        raise SystemExit(__doc__)
    print("\n".join(flags(sys.argv[2]) if sys.argv[1] == "flags" else objects(sys.argv[2])))
