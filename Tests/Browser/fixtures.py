"""The real clients the browser tests run, unmodified and never copied into the repository: taken from
../shared/clients/ when present, else downloaded once from their public pinned release into a cache folder
(~/.cache/gatehouse-test-clients, or $GATEHOUSE_CLIENTS_CACHE); either way every file is checked against its pinned
SHA-256 before a test uses it.

    python3 Tests/Browser/fixtures.py          # prints where each client is, fetching what is missing
"""

import hashlib
import io
import os
import sys
import tarfile
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SHARED = REPO.parent / "shared" / "clients"
CACHE = Path(os.environ.get("GATEHOUSE_CLIENTS_CACHE", Path.home() / ".cache" / "gatehouse-test-clients"))

CLIENTS = {
    # KAAZING JavaScript client 5.0.0-4 (Apache-2.0): the built bundle as published in wetransform/bower-kaazing-javascript.
    "kaazing-javascript-client": {
        "url": "https://raw.githubusercontent.com/wetransform/bower-kaazing-javascript/"
               "15098ce750ae2d1991b9ea1d615484900cfd9ebd/gateway/js/WebSocket-debug.js",
        "archive": None,
        "files": {"WebSocket-debug.js": "2d1ab9229337b8eeab6a932d3de4c3581e487fa9b718a8243fa362469243feb5"},
    },
    # IBM MobileFirst 8.0 web SDK (Apache-2.0), npm package ibm-mfp-web-sdk 8.0.2016051608.
    "ibm-mfp-web-sdk": {
        "url": "https://registry.npmjs.org/ibm-mfp-web-sdk/-/ibm-mfp-web-sdk-8.0.2016051608.tgz",
        "archive": "package/",
        "files": {
            "ibmmfpf.js": "5d6fbc3be3806384cc1215332e4f3becc990fe01d02e3a60ffdb1fef6194c5e1",
            "lib/analytics/ibmmfpfanalytics.js": "7e8ee16caa5760abbd709580ccbe73b4d2f6f499d9168896c5464572d7239e09",
        },
    },
}


class FixtureError(Exception):
    pass


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verified(folder, files):
    """The names of `files` missing or different in `folder` (empty: all there and as pinned)."""
    return [name for name, digest in files.items() if not (folder / name).is_file() or _sha256(folder / name) != digest]


def _download(name, spec, folder):
    try:
        with urllib.request.urlopen(spec["url"], timeout=60) as response:
            data = response.read()
    except Exception as error:  # noqa: BLE001 - reported in words
        raise FixtureError(f"{name}: not in {SHARED} and the pinned download failed ({spec['url']}: {error})") from error
    folder.mkdir(parents=True, exist_ok=True)
    if spec["archive"] is None:
        (folder / next(iter(spec["files"]))).write_bytes(data)
        return
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.startswith(spec["archive"]):
                target = folder / member.name[len(spec["archive"]):]
                if folder.resolve() not in target.resolve().parents:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.extractfile(member).read())


def client(name):
    """The folder holding client `name`, its files as pinned."""
    spec = CLIENTS[name]
    shared = SHARED / name
    if shared.is_dir():
        wrong = _verified(shared, spec["files"])
        if not wrong:
            return shared
        raise FixtureError(f"{name}: {shared} differs from the pinned version ({', '.join(wrong)}): "
                           "the tests run the unmodified client only")
    cached = CACHE / name
    if _verified(cached, spec["files"]):
        _download(name, spec, cached)
        wrong = _verified(cached, spec["files"])
        if wrong:
            raise FixtureError(f"{name}: the download from {spec['url']} does not match the pinned SHA-256 "
                               f"({', '.join(wrong)})")
    return cached


if __name__ == "__main__":
    status = 0
    for key in CLIENTS:
        try:
            print(f"{key}: {client(key)}")
        except FixtureError as error:
            print(f"FAIL {error}")
            status = 2
    sys.exit(status)


def terminate(process, grace=5):
    """Stops a child process: SIGTERM, then SIGKILL after `grace` seconds; nothing if it has ended."""
    import subprocess
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(grace)
