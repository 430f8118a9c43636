#!/usr/bin/env python3
"""Type-checks each sample app's Swift files (import already changed) together with the stand-in UIKit and
GatehouseMobileFirst, in the Swift 5 and Swift 6 language modes, and sorts the compiler's errors: those that the same
code gets from any Swift compiler without the Objective-C runtime, or from Apple's own today, are listed; any other
error fails (exit 1). Run by scripts/sample-apps."""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys

import mainbuild

# Errors that are not the façade's: the message, and why the code gets it anywhere but on Apple's runtime (or on
# Apple's too).
EXPECTED = [
    (re.compile(r"'#selector' can only be used with the Objective-C runtime"), "#selector needs the Objective-C runtime"),
    (re.compile(r"'@IBOutlet' property cannot have non-'@objc' class type"), "@IBOutlet needs the Objective-C runtime"),
    (re.compile(r"Objective-C interoperability is disabled"), "@objc needs the Objective-C runtime"),
    (re.compile(r"'UIApplicationMain' is deprecated"), "@UIApplicationMain: an error in Swift 6 (SE-0383), on Apple's compiler too"),
    (re.compile(r"'UIApplicationLaunchOptionsKey' has been renamed to 'UIApplication.LaunchOptionsKey'"),
     "UIApplicationLaunchOptionsKey: renamed in Swift 4.2, an error with today's UIKit too"),
]
ERROR = re.compile(r"^(?P<file>[^:\s]+\.swift):(?P<line>\d+):\d+: error: (?P<message>.*)$")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True, help="the repository's debug build directory (.build/debug)")
    parser.add_argument("--uikit", required=True, help="the directory holding the stand-in UIKit's module")
    parser.add_argument("--apps", required=True, help="one folder of ported Swift files per app")
    args = parser.parse_args()

    # GatehouseMobileFirst and what it depends on, as the repository's own build compiled them.
    build_flags = ["-I", args.uikit, *mainbuild.flags(args.build)]
    failed = False
    for app in sorted(os.listdir(args.apps)):
        files = sorted(glob.glob(os.path.join(args.apps, app, "*.swift")))
        for mode in ("5", "6"):
            command = ["swiftc", "-typecheck", "-continue-building-after-errors", "-parse-as-library", "-swift-version", mode, "-module-name", app,
                       "-Xfrontend", "-import-module", "-Xfrontend", "UIKit", *build_flags, *files]
            result = subprocess.run(command, capture_output=True, text=True, timeout=600)
            counts = collections.Counter()
            unexpected = []
            for line in (result.stdout + result.stderr).splitlines():
                match = ERROR.match(line)
                if not match:
                    continue
                reason = next((why for pattern, why in EXPECTED if pattern.search(match["message"])), None)
                where = f"{os.path.basename(match['file'])}:{match['line']}"
                if reason:
                    counts[(os.path.basename(match["file"]), reason)] += 1
                else:
                    unexpected.append(f"{where}: {match['message']}")
            print(f"{app}, Swift {mode} mode: {len(files)} files type-checked")
            for (file, reason), count in sorted(counts.items()):
                print(f"    {file}: {count} × {reason}")
            clean = sorted(set(map(os.path.basename, files)) - {file for file, _ in counts})
            if clean:
                print(f"    no error: {', '.join(clean)}")
            if unexpected:
                failed = True
                print(f"    UNEXPECTED errors ({len(unexpected)}):")
                for line in unexpected:
                    print(f"      {line}")
            elif result.returncode != 0 and not counts:
                failed = True
                print("    the compiler failed without an error line:\n" + result.stderr[-3000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
