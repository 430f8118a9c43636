#!/usr/bin/env python3
"""The documentation site (README.md and docs/), for scripts/docs: its reference pages generated from the code, every
shell and YAML block run or validated, every relative link and anchor checked, then built by MkDocs in strict mode.

Usage: scripts/docs_site.py [--out DIR]   (from the repository's root, after `swift build`: it runs .build/debug/gatehouse)

Generated (from the debug binary and the sources, written into docs/reference/ when they changed — commit them):
  cli.md                    every command's `gatehouse help ...`
  policy-keys.md            the keys a policy may hold, by place: probed with a key the policy does not know at each
                            place, and read from the refusal's "known there" list (a running server's
                            /admin/v1/policy/validate answers them)
  gateway-configuration.md  the same for the gateway's configuration (`gatehouse gateway --config` refusing a probe)
  admin-api.md              the operations of Sources/GatehouseServer/OpenAPI/openapi.yaml (served at /openapi.json)
  metrics.md                its hand-written text, then the metric names the sources register; every
                            `gatehouse_*` name the page mentions must be one of them

Blocks: the HTML comment on the line before a fence says what is done with it (docs/index.md lists them); an
unmarked sh/bash/shell/console/yaml/yml block is an error. Printed at the end: how many were run, validated and
marked illustrative.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BINARY = ROOT / ".build" / "debug" / "gatehouse"
PAGES = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))
SHELL = {"sh", "bash", "shell", "console"}
YAML = {"yaml", "yml"}
PROBE = "zzProbeKey"
# Where links to the repository's files outside docs/ point in the built site (the package's URL, as the app
# developers' guide names it).
SOURCE_URL = os.environ.get("GATEHOUSE_SOURCE_URL", "https://github.com/gatehouse/gatehouse/blob/main/")

# Pages of other people's work that the site links to before they are written: while one is missing, the link
# checker says so without failing and MkDocs is given a page saying it is to come. Once written it is checked as
# any other page; remove it from here then.
PENDING_PAGES = {DOCS / "kaazing-robot-scripts.md": "KAAZING's own protocol scripts (k3po robot scripts) against the gateway (issue 53)"}

errors: list[str] = []


def fail(message: str) -> None:
    errors.append(message)
    print(f"scripts/docs: {message}", file=sys.stderr)


# ---------------------------------------------------------------------------------------------------------------
# A throwaway `gatehouse serve` (demo policy, free port) and the admin API's token.

class ThrowawayServer:
    """`gatehouse serve` on a free loopback port with the demo policy and the operators guide's administrator: the
    confidential client `ops` whose secret is `SECRET` (so that its blocks run as written)."""

    def __init__(self, work: Path):
        self.work = work
        demo = subprocess.run([str(BINARY), "demo-policy"], capture_output=True, text=True, timeout=30, check=True).stdout
        self.demo_policy = yaml.safe_load(demo)
        secret_hash = subprocess.run([str(BINARY), "hash-password", "--cost", "4"], input="SECRET\n", capture_output=True,
                                     text=True, timeout=30, check=True).stdout.strip().split()[-1]
        policy = dict(self.demo_policy)
        policy["confidentialClients"] = list(policy.get("confidentialClients", [])) + [
            {"id": "ops", "secretHash": secret_hash, "allowedScope": "gatehouse.admin gatehouse.admin.read"}]
        self.policy_text = yaml.safe_dump(policy, sort_keys=False)
        (work / "policy.yaml").write_text(self.policy_text)
        self.log = open(work / "serve.log", "w+")
        self.process = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--data", str(work / "serve-data"),
                                         "--policy", str(work / "policy.yaml"), "--sample-adapter", "true"],
                                        stdout=self.log, stderr=subprocess.STDOUT, cwd=work, start_new_session=True)
        deadline = time.monotonic() + 30
        self.base = None
        while time.monotonic() < deadline and self.base is None:
            if self.process.poll() is not None:
                break
            self.log.seek(0)
            found = re.search(r"(?:Gatehouse listens on|listening on) (?:http://)?(127\.0\.0\.1:\d+)", self.log.read())
            if found:
                self.base = "http://" + found.group(1)
            else:
                time.sleep(0.05)
        if self.base is None:
            self.log.seek(0)
            self.stop()
            raise RuntimeError("the throwaway gatehouse serve did not start:\n" + self.log.read()[-2000:])
        self.token = self.request("POST", "/mfp/api/az/v1/token",
                                  b"grant_type=client_credentials&scope=gatehouse.admin+gatehouse.admin.read",
                                  {"Content-Type": "application/x-www-form-urlencoded",
                                   "Authorization": "Basic b3BzOlNFQ1JFVA=="})["access_token"]  # ops:SECRET

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        request = urllib.request.Request(self.base + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return json.loads(error.read() or b"null")

    def validate_policy(self, text: str) -> dict:
        return self.request("POST", "/admin/v1/policy/validate", text.encode(),
                            {"Authorization": f"Bearer {self.token}", "Content-Type": "application/yaml"})

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def run_gateway(config_text: str, work: Path, timeout: float = 15) -> tuple[bool, str]:
    """`gatehouse gateway` started on `config_text` (a free port) in `work`: (listened, its output). Stopped at once."""
    handle, name = tempfile.mkstemp(suffix=".yaml", dir=work)
    with os.fdopen(handle, "w") as file:
        file.write(config_text)
    log_path = Path(name + ".log")
    with open(log_path, "w+") as log:
        process = subprocess.Popen([str(BINARY), "gateway", "--config", name, "--port", "0"], stdout=log,
                                   stderr=subprocess.STDOUT, cwd=work, start_new_session=True)
        deadline = time.monotonic() + timeout
        listened = False
        while time.monotonic() < deadline:
            log.seek(0)
            if "Gatehouse gateway listens on" in log.read():
                listened = True
                break
            if process.poll() is not None:
                break
            time.sleep(0.03)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.seek(0)
        return listened, log.read()


# ---------------------------------------------------------------------------------------------------------------
# Generated reference pages.

def cli_page() -> str:
    env = dict(os.environ, COLUMNS="100")

    def help_text(words: list[str]) -> str:
        result = subprocess.run([str(BINARY), "help", *words], capture_output=True, text=True, env=env, timeout=30)
        return (result.stdout + result.stderr).rstrip()

    def subcommands(text: str) -> list[str]:
        if "SUBCOMMANDS:" not in text:
            return []
        section = text.split("SUBCOMMANDS:", 1)[1].split("\n\n  See", 1)[0]
        return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z0-9-]*)", section, re.M)]

    out = ["# CLI", "",
           "Generated by `scripts/docs` from `gatehouse help <command>` (the debug build's). Every option is also read",
           "from the environment as `GATEHOUSE_<OPTION>` where the command says so ([Operators](../guides/operators.md#serving-in-production)).", ""]
    queue: list[list[str]] = [[]]
    while queue:
        words = queue.pop(0)
        text = help_text(words)
        out += [f"## `gatehouse{''.join(' ' + w for w in words)}`", "", "```text", text, "```", ""]
        queue += [words + [sub] for sub in subcommands(text) if sub != "help"]
    return "\n".join(out)


def probe_document(steps: list, leaf) -> object:
    value = leaf
    for kind, name in reversed(steps):
        value = {name: value} if kind == "key" else [value]
    return value


def shape_paths(document, steps=None, found=None) -> list:
    """Every mapping's place in `document`, as steps ("key", name) and ("item", None) (a list's first item)."""
    steps = steps or []
    found = found if found is not None else []
    if isinstance(document, dict):
        found.append(steps)
        for key, value in document.items():
            shape_paths(value, steps + [("key", str(key))], found)
    elif isinstance(document, list):
        for item in document[:1]:
            shape_paths(item, steps + [("item", None)], found)
    return found


def render_path(steps: list) -> str:
    text = ""
    for kind, name in steps:
        if kind == "item":
            text += "[]"
        else:
            text += ("." if text else "") + name
    return text or "(top level)"


def probe_keys(examples: list, refusal) -> list[tuple[str, list[str]]]:
    """For each place a mapping has in the examples, the keys known there: `refusal(document)` answers the keys known
    where a document's one unknown key (the probe) is, or None when nothing refused the probe — a mapping of names of
    the user's own (checks, properties, principals), whose values' places are then listed under `<name>`."""
    places: dict[str, list] = {}
    for example in examples:
        for steps in shape_paths(example):
            places.setdefault(render_path(steps), steps)
    results: dict[str, list[str]] = {}
    free: set[str] = set()

    def probe(item):
        label, steps = item
        answer = refusal(probe_document(steps, {PROBE: 1}))
        return label, steps, answer

    # Shallow places first: a free-form parent renames its children's labels.
    ordered = sorted(places.items(), key=lambda item: len(item[1]))
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(probe, ordered))
    for label, steps, answer in answers:
        if answer is None:
            free.add(label)
    for label, steps, answer in answers:
        if answer is None:
            continue
        # Names of the user's own shown as <name>.
        shown, rendered = [], []
        for kind, name in steps:
            rendered.append((kind, name))
            parent = render_path(rendered[:-1])
            if kind == "key" and rendered[:-1] and parent in free:
                shown.append(("key", "<name>"))
            else:
                shown.append((kind, name))
        results[render_path(shown)] = answer
    return sorted(results.items(), key=lambda item: (item[0] != "(top level)", item[0]))


def keys_page(title: str, lead: list[str], places: list[tuple[str, list[str]]]) -> str:
    out = [f"# {title}", ""] + lead + ["", "| place | keys |", "|---|---|"]
    for place, keys in places:
        out.append(f"| `{place}` | {', '.join(f'`{k}`' for k in keys)} |")
    return "\n".join(out)


def policy_refusal(server: ThrowawayServer):
    def refusal(document):
        answer = server.validate_policy(yaml.safe_dump(document))
        for error in (answer or {}).get("errors", []):
            found = re.search(r"known there: ([^)]*)\)", error.get("problem", ""))
            if found and str(error.get("key", "")).endswith(PROBE):
                return [k.strip() for k in found.group(1).split(",")]
        return None
    return refusal


def gateway_refusal(work: Path):
    def refusal(document):
        # A probe lacks the required keys around it: a document the key check lets through fails to decode at once.
        listened, output = run_gateway(yaml.safe_dump(document), work, timeout=10)
        found = re.search(r"'([^']*)' is not a key of [^(]*\(known there: ([^)]*)\)", output)
        if found and found.group(1).endswith(PROBE):
            return [k.strip() for k in found.group(2).split(",")]
        return None
    return refusal


def admin_api_page() -> str:
    spec = yaml.safe_load((ROOT / "Sources/GatehouseServer/OpenAPI/openapi.yaml").read_text())
    out = ["# Admin API and the served operations", "",
           "Generated by `scripts/docs` from `Sources/GatehouseServer/OpenAPI/openapi.yaml`, the OpenAPI 3.1 document",
           "`gatehouse serve` serves at `/openapi.json` (and schemathesis checks against the real server). How to get a",
           "token and use the admin API: [Operators](../guides/operators.md#the-admin-api).", ""]
    groups: dict[str, list[str]] = {}
    for path, operations in spec.get("paths", {}).items():
        group = "Admin API (`/admin/v1`)" if path.startswith("/admin/") else \
            "MobileFirst runtime API (`/mfp/api`)" if path.startswith("/mfp/") else "Other endpoints"
        for method, operation in operations.items():
            if method.startswith("x-") or method == "parameters" or not isinstance(operation, dict):
                continue
            statuses = ", ".join(str(s) for s in operation.get("responses", {}))
            summary = " ".join(str(operation.get("summary", "")).split()).replace("|", "\\|") \
                .replace("<", "&lt;").replace(">", "&gt;")
            groups.setdefault(group, []).append(f"| `{method.upper()}` | `{path}` | {summary} | {statuses} |")
    for group in ("Admin API (`/admin/v1`)", "MobileFirst runtime API (`/mfp/api`)", "Other endpoints"):
        if group in groups:
            out += [f"## {group}", "", "| method | path | what | answers |", "|---|---|---|---|"] + groups[group] + [""]
    return "\n".join(out)


def metric_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for source in sorted((ROOT / "Sources").rglob("*.swift")):
        for name in re.findall(r'"(gatehouse_[a-z0-9_]+_(?:total|seconds|open))"', source.read_text()):
            names.setdefault(name, str(source.relative_to(ROOT)))
    return names


def metrics_page(hand_written: str) -> str:
    names = metric_names()
    marker = "\n## Every metric the sources register\n"
    text = hand_written.split(marker, 1)[0].rstrip()
    for mentioned in sorted(set(re.findall(r"\bgatehouse_[a-z0-9_]+\b", text))):
        if mentioned not in names and not any(n.startswith(mentioned) for n in names):
            fail(f"docs/reference/metrics.md names {mentioned}, which no source registers")
    out = [text, "", marker.strip(), "",
           "Generated by `scripts/docs` from the sources (the names given to swift-metrics):", "",
           "| metric | registered in |", "|---|---|"]
    out += [f"| `{name}` | `{where}` |" for name, where in sorted(names.items())]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------------
# Blocks.

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\s*$")
MARKER = re.compile(r"^<!--\s*docs:\s*(.*?)\s*-->\s*$")


def blocks(page: Path):
    lines = page.read_text().split("\n")
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match:
            start = index
            index += 1
            body = []
            while index < len(lines) and lines[index] != "```":
                body.append(lines[index])
                index += 1
            marker = None
            back = start - 1
            while back >= 0 and lines[back].strip() == "":
                back -= 1
            if back >= 0:
                found = MARKER.match(lines[back].strip())
                if found:
                    marker = found.group(1)
            yield start + 1, match.group(1).lower(), "\n".join(body) + "\n", marker
        index += 1


def merge(base, fragment, key_of):
    """`fragment` (a block) over `base` (the demo policy, or a small gateway configuration), at the top level: a list
    item by item (an item of the same identity replaces the base's), the named checks and contexts name by name,
    anything else replaced."""
    if isinstance(base, dict) and isinstance(fragment, dict):
        merged = dict(base)
        for key, value in fragment.items():
            if isinstance(value, list) and isinstance(base.get(key), list):
                merged[key] = merge(base[key], value, key_of)
            elif key in ("securityChecks", "authenticationContexts") and isinstance(base.get(key), dict) \
                    and isinstance(value, dict):
                merged[key] = {**base[key], **value}
            else:
                merged[key] = value
        return merged
    if isinstance(base, list) and isinstance(fragment, list):
        merged = list(base)
        for item in fragment:
            identity = key_of(item)
            for position, existing in enumerate(merged):
                if identity is not None and key_of(existing) == identity:
                    merged[position] = item
                    break
            else:
                merged.append(item)
        return merged
    return fragment


def policy_identity(item):
    if not isinstance(item, dict):
        return None
    if "id" in item:
        return (item.get("id"), item.get("platform"))
    return item.get("username") or item.get("name")


def keytab(principal: str) -> bytes:
    """A keytab (MIT's file format 0x0502) holding one random AES-256 key of `principal` ("service/host@REALM"), so
    that a `kerberos5` module naming it gets its acceptor credential at start."""
    import struct
    name, realm = principal.rsplit("@", 1)

    def counted(text: bytes) -> bytes:
        return struct.pack(">H", len(text)) + text
    components = name.split("/")
    entry = (struct.pack(">H", len(components)) + counted(realm.encode()) + b"".join(counted(c.encode()) for c in components)
             + struct.pack(">IIBH", 1, int(time.time()), 1, 18) + counted(os.urandom(32)) + struct.pack(">I", 1))
    return b"\x05\x02" + struct.pack(">i", len(entry)) + entry


PLACEHOLDER_HASH = re.compile(r"\$2b\$12\$\.\.\.")


class BlockChecker:
    def __init__(self, server: ThrowawayServer, work: Path):
        self.server = server
        self.work = work
        self.demo_policy = server.demo_policy
        self.a_hash = self.demo_policy["users"][0]["passwordHash"]
        self.counts = {"run": 0, "validated": 0, "illustrative": 0, "other languages, not checked": 0}
        self.gateway_work = work / "gateway"
        self.gateway_work.mkdir()
        # Files the examples name, made for real: a users file, a certificate and key, a CA, a keytab place.
        (self.gateway_work / "users.yaml").write_text(
            yaml.safe_dump([{"username": "joe", "passwordHash": self.a_hash, "roles": ["AUTHORIZED"]}]))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", "key.pem", "-out", "chain.pem", "-days", "2", "-subj", "/CN=localhost"],
                       cwd=self.gateway_work, capture_output=True, check=True, timeout=30)
        shutil.copy(self.gateway_work / "chain.pem", self.gateway_work / "upstream-ca.pem")
        (self.gateway_work / "etc").mkdir()
        (self.gateway_work / "etc" / "http.keytab").write_bytes(keytab("HTTP/gateway.example.com@EXAMPLE.COM"))
        self.gateway_base = {
            "realms": [{"name": "demo", "scheme": "Basic", "loginModules": [
                {"type": "users", "flag": "required",
                 "users": [{"username": "joe", "passwordHash": self.a_hash, "roles": ["AUTHORIZED"]}]}]}],
            "services": [{"name": "base", "path": "/base", "upstream": "http://127.0.0.1:9/", "realm": "demo"}],
        }
        self.openapi = yaml.safe_load((ROOT / "Sources/GatehouseServer/OpenAPI/openapi.yaml").read_text())["paths"]

    def fragment(self, body: str, argument: str | None):
        document = yaml.safe_load(PLACEHOLDER_HASH.sub(self.a_hash.replace("\\", "\\\\"), body))
        if argument:  # a block that is the items (or entries) of one key
            document = {argument: document}
        return document

    def check(self, where: str, language: str, body: str, marker: str | None) -> None:
        kind, _, argument = (marker or "").partition(" ")
        argument = argument.strip() or None
        if marker is None:
            if language in SHELL or language in YAML:
                fail(f"{where}: a {language} block with no <!-- docs: ... --> marker (run, policy, gateway, "
                     "prometheus, file PATH, admin-api or illustrative)")
            else:
                self.counts["other languages, not checked"] += 1
            return
        try:
            getattr(self, "check_" + kind.replace("-", "_"))(where, body, argument)
        except AttributeError:
            fail(f"{where}: unknown marker 'docs: {marker}'")
        except Exception as error:  # noqa: BLE001 - reported with its block
            fail(f"{where}: {kind}: {error}")

    def check_illustrative(self, where, body, argument):
        self.counts["illustrative"] += 1

    def check_policy(self, where, body, argument):
        merged = merge(self.demo_policy, self.fragment(body, argument), policy_identity)
        answer = self.server.validate_policy(yaml.safe_dump(merged, sort_keys=False))
        if not answer or not answer.get("valid"):
            fail(f"{where}: the policy block is refused: {json.dumps((answer or {}).get('errors', answer))}")
        else:
            self.counts["validated"] += 1

    def check_gateway(self, where, body, argument):
        # Absolute files of the examples (/etc/gatehouse/...) are made in the work folder: an empty keytab is read
        # at start (MIT's format is checked only when a token comes).
        body = body.replace("/etc/gatehouse/", f"{self.gateway_work}/etc/")
        merged = merge(self.gateway_base, self.fragment(body, argument), policy_identity)
        merged.pop("port", None)
        listened, output = run_gateway(yaml.safe_dump(merged, sort_keys=False), self.gateway_work)
        if not listened:
            fail(f"{where}: gatehouse gateway did not start on the block:\n{output[-1500:]}")
        else:
            self.counts["validated"] += 1

    def check_prometheus(self, where, body, argument):
        secret = self.work / "prometheus-secret"
        secret.write_text("secret\n")
        config = self.work / "prometheus.yml"
        config.write_text(re.sub(r"client_secret_file: \S+", f"client_secret_file: {secret}", body))
        result = subprocess.run(["promtool", "check", "config", "--syntax-only", str(config)], capture_output=True,
                                text=True, timeout=60)
        if result.returncode != 0:
            fail(f"{where}: promtool check config: {result.stdout}{result.stderr}")
        else:
            self.counts["validated"] += 1

    def check_file(self, where, body, argument):
        if (ROOT / argument).read_text() != body:
            fail(f"{where}: the block is not {argument} as it is (update one or the other)")
        else:
            self.counts["validated"] += 1

    def check_admin_api(self, where, body, argument):
        """Every `curl ... $base/<path>` of the block names an operation of openapi.yaml (method and path)."""
        commands = re.sub(r"\\\n\s*", " ", body).split("\n")
        checked = 0
        for command in commands:
            if "curl" not in command or "$base/" not in command:
                continue
            path = re.search(r"\$base(/[^\s\"'?#]*)", command).group(1)
            method = (re.search(r"-X (\w+)", command) or re.search(r"()", "")).group(1) or \
                ("POST" if re.search(r"\s-d\s|--data", command) else "GET")
            if not any(re.fullmatch(re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)), path)
                       and method.lower() in operations for template, operations in self.openapi.items()):
                fail(f"{where}: {method} {path} is no operation of openapi.yaml")
            checked += 1
        if checked == 0:
            fail(f"{where}: admin-api block with no `curl ... $base/...`")
        self.counts["validated"] += 1

    def check_run(self, where, body, argument):
        # The examples' addresses (the default port, the operators guide's 9080) are the throwaway server's, and curl
        # fails on an error status; $base and $auth are set as the guide's first block sets them.
        prelude = (f'base={self.server.base}\nauth="Authorization: Bearer {self.server.token}"\n'
                   'curl() {\n  local arguments=() argument\n  for argument in "$@"; do\n'
                   '    argument=${argument//http:\\/\\/127.0.0.1:9080/$GATEHOUSE_DOCS_BASE}\n'
                   '    arguments+=("${argument//http:\\/\\/127.0.0.1:8080/$GATEHOUSE_DOCS_BASE}")\n  done\n'
                   '  command curl --silent --show-error --fail-with-body --max-time 20 "${arguments[@]}"\n}\n')
        run_dir = self.work / "run"
        run_dir.mkdir(exist_ok=True)
        (run_dir / "new-policy.yaml").write_text(self.server.policy_text)
        env = dict(os.environ, PATH=f"{BINARY.parent}:{os.environ['PATH']}", GATEHOUSE_DOCS_BASE=self.server.base)
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", prelude + body], cwd=run_dir, env=env,
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            fail(f"{where}: the block failed ({result.returncode}):\n{(result.stdout + result.stderr)[-1500:]}")
        else:
            self.counts["run"] += 1


# ---------------------------------------------------------------------------------------------------------------
# Links.

def slug(heading: str) -> str:
    text = re.sub(r"`|\*\*|\[|\]\([^)]*\)", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"\s+", "-", text)


def anchors(page: Path) -> set[str]:
    found, fence = set(), False
    for line in page.read_text().split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,6} ", line):
            found.add(slug(line.lstrip("#")))
    return found


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def check_links(pages: list[Path]) -> int:
    checked = 0
    for page in pages:
        fence = False
        for number, line in enumerate(page.read_text().split("\n"), 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if re.match(r"^[a-z]+:", target):
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                resolved = (page.parent / path).resolve() if path else page
                where = f"{page.relative_to(ROOT)}:{number}"
                if not resolved.exists() and resolved in PENDING_PAGES:
                    print(f"scripts/docs: {where}: links to {resolved.relative_to(ROOT)}, which is not written yet "
                          f"({PENDING_PAGES[resolved]}): not checked", file=sys.stderr)
                elif not resolved.exists():
                    fail(f"{where}: link to {target}: no such file")
                elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                    fail(f"{where}: link to {target}: no such heading in {resolved.relative_to(ROOT)}")
    return checked


def stage_for_mkdocs(stage: Path) -> None:
    """The pages as MkDocs reads them: links to the repository's files outside docs/ made absolute (checked above)."""
    for page in stage.rglob("*.md"):
        text = page.read_text()

        def outward(match):
            target = match.group(2)
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                return match.group(0)
            path, _, anchor = target.partition("#")
            source = (DOCS / page.relative_to(stage).parent / path).resolve()
            if DOCS in source.parents or source == DOCS:
                return match.group(0)
            url = SOURCE_URL + str(source.relative_to(ROOT)) + (f"#{anchor}" if anchor else "")
            return f"{match.group(1)}({url})"
        page.write_text(re.sub(r"(?<!!)(\[[^\]]*\])\(([^)\s]+)\)", outward, text))


# ---------------------------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / ".build" / "docs" / "site"))
    arguments = parser.parse_args()
    if not BINARY.exists():
        print(f"scripts/docs: {BINARY} is missing: run swift build first", file=sys.stderr)
        return 1
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="gatehouse-docs-"))
    server = None
    try:
        server = ThrowawayServer(work)
        checker = BlockChecker(server, work)

        # Generated pages, written where they changed.
        generated = {
            "reference/cli.md": cli_page(),
            "reference/admin-api.md": admin_api_page(),
            "reference/metrics.md": metrics_page((DOCS / "reference/metrics.md").read_text()),
        }
        policy_examples = [checker.demo_policy] + [
            merge(checker.demo_policy, checker.fragment(body, (marker or "").partition(" ")[2].strip() or None), policy_identity)
            for page in PAGES for _, _, body, marker in blocks(page) if (marker or "").startswith("policy")]
        generated["reference/policy-keys.md"] = keys_page("Policy keys", [
            "Generated by `scripts/docs`: at each place a policy's examples (the demo policy and this site's policy blocks)",
            "have a mapping, a key the policy does not know was given to a running `gatehouse serve`'s",
            "`/admin/v1/policy/validate`, and its refusal's list of the keys known there is shown. `<name>` stands for a",
            "name of your own (a check's, a property's). What the keys mean: [Writing a policy](../guides/policies.md).",
        ], probe_keys(policy_examples, policy_refusal(server)))
        gateway_examples = [checker.gateway_base] + [
            merge(checker.gateway_base, checker.fragment(body, (marker or "").partition(" ")[2].strip() or None), policy_identity)
            for page in PAGES for _, _, body, marker in blocks(page) if (marker or "").startswith("gateway")]
        generated["reference/gateway-configuration.md"] = keys_page("Gateway configuration", [
            "Generated by `scripts/docs`: at each place the gateway's examples (this site's configuration blocks) have a",
            "mapping, a key the configuration does not know was given to `gatehouse gateway --config`, and its refusal's",
            "list of the keys known there is shown. `<name>` stands for a name of your own (a principal's). What the keys",
            "mean: [The gateway](../guides/gateway.md); the command's options: [CLI](cli.md).",
        ], probe_keys(gateway_examples, gateway_refusal(checker.gateway_work)))
        for name, text in generated.items():
            target = DOCS / name
            text = text.rstrip("\n") + "\n"
            if not target.exists() or target.read_text() != text:
                target.write_text(text)
                print(f"scripts/docs: {target.relative_to(ROOT)} written anew from the code (commit it)")

        pages = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))
        for page in pages:
            for line, language, body, marker in blocks(page):
                checker.check(f"{page.relative_to(ROOT)}:{line}", language, body, marker)
        links = check_links(pages)

        # The site.
        stage = work / "stage"
        shutil.copytree(DOCS, stage / "docs")
        for page, what in PENDING_PAGES.items():
            staged = stage / "docs" / page.relative_to(DOCS)
            if not staged.exists():
                staged.write_text(f"# {what}\n\nThis page is being written.\n")
        stage_for_mkdocs(stage / "docs")
        shutil.copy(ROOT / "mkdocs.yml", stage / "mkdocs.yml")
        out = Path(arguments.out)
        result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                                 str(out.resolve()), "--config-file", str(stage / "mkdocs.yml")],
                                capture_output=True, text=True, timeout=120)
        said = "\n".join(line for line in (result.stdout + result.stderr).splitlines() if not line.startswith("INFO"))
        if result.returncode != 0:
            fail("mkdocs build --strict failed:\n" + said)
        counts = ", ".join(f"{value} {key}" for key, value in checker.counts.items())
        print(f"scripts/docs: site {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: "
              f"{len(pages)} pages, {links} relative links checked; blocks: {counts} "
              f"({time.monotonic() - started:.1f} s)")
    finally:
        if server:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)
    if errors:
        print(f"scripts/docs: the site has {len(errors)} problem(s) (above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
