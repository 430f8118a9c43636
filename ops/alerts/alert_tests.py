#!/usr/bin/env python3
"""Unit tests of ops/alerts/gatehouse.rules.yml on series shaped like a running Gatehouse's /metrics.

Given the /metrics texts of a running `gatehouse serve` and `gatehouse gateway` (scripts/test-alerts scrapes them),
this script
  1. refuses a rule that names a gatehouse_* metric the scrapes do not show, or matches it on a label it lacks (a
     counter made only by an event the scripts cannot cause, EVENT_ONLY, must at least be named in Sources/),
  2. writes a `promtool test rules` file whose input series are the scraped label sets (with `job`, `instance`),
     changed only in label values the case names (a label the scraped series lacks is refused), and for every alert
     a case where it fires and one where it does not,
  3. runs `promtool test rules` on it, against a copy of the rules without their annotations (promtool compares
     rendered annotations too; their templates are checked by `promtool check rules` on the real file).

Usage: alert_tests.py RULES SERVER_METRICS GATEWAY_METRICS SOURCES_DIR WORK_DIR
"""
import pathlib
import re
import subprocess
import sys

import yaml

# Counters a server makes at their first event, which the test cannot cause on a healthy loopback server, with the
# scraped metric whose label set they share (MeasuredStore labels both with `operation`).
EVENT_ONLY = {"gatehouse_store_errors_total": "gatehouse_store_operation_duration_seconds_count"}
# Made by Prometheus (up) and the blackbox exporter (probe_*), not by Gatehouse.
EXTERNAL = {"up", "probe_success", "probe_ssl_earliest_cert_expiry"}
SERVER = {"job": "gatehouse", "instance": "gatehouse-1:8080"}
GATEWAY = {"job": "gatehouse-gateway", "instance": "gatehouse-1:8090"}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+\S+$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """Metric name -> list of label dicts, from Prometheus' text format."""
    series = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match and not line.startswith("#"):
            series.setdefault(match[1], []).append(dict(LABEL.findall(match[2] or "")))
    return series


def fail(message):
    print(f"alert_tests: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check_names(rules, scraped, sources):
    """Every metric a rule names exists (and has the labels it is matched on)."""
    checked = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            expr = rule["expr"]
            for name, matchers in re.findall(r'\b([a-z_][a-z0-9_:]*)\s*(\{[^}]*\})?', expr):
                if not (name.startswith("gatehouse_") or name in EXTERNAL):
                    continue
                checked.add(name)
                if name in EXTERNAL:
                    continue
                labels = set(re.findall(r'([a-z_]+)\s*[=!]~?', matchers or ""))
                if name in EVENT_ONLY:
                    if not any(f'"{name}"' in path.read_text(errors="ignore") for path in sources.rglob("*.swift")):
                        fail(f"{rule['alert']}: {name} is named nowhere in Sources/")
                    shape = scraped.get(EVENT_ONLY[name])
                else:
                    shape = scraped.get(name)
                if not shape:
                    fail(f"{rule['alert']}: {name} is not in the running server's or gateway's /metrics")
                known = set().union(*(set(s) for s in shape))
                if labels - known:
                    fail(f"{rule['alert']}: {name} has no label {sorted(labels - known)} in /metrics (has {sorted(known)})")
    return checked


def series(scraped, name, target, overrides):
    """A scraped label set of `name` (or of the metric it shares labels with) with `overrides`, as a series selector."""
    if name in EXTERNAL:
        labels = dict(target)
    else:
        shape = scraped.get(name) or scraped.get(EVENT_ONLY.get(name, ""))
        if not shape:
            fail(f"no scraped series of {name}")
        # The scraped label set that already agrees with the most overrides, so that its other labels fit them.
        labels = dict(max(shape, key=lambda s: sum(s.get(k) == v for k, v in overrides.items())))
        unknown = set(overrides) - set(labels)
        if unknown:
            fail(f"{name}: the test sets labels {sorted(unknown)} the scraped series do not have ({sorted(labels)})")
        labels.update(target)
    labels.update(overrides)
    return labels


def selector(name, labels):
    return name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


# alert -> (by-labels of the alert, None: all of the first series'; [(cases)]): each case is
# (fires?, eval time, [(metric, target, label overrides, values)]).
def cases():
    s, g = SERVER, GATEWAY
    ready = {"route": "/ready", "method": "GET"}
    token = {"route": "/mfp/api/az/v1/token", "method": "POST"}
    return {
        "GatehouseDown": (None, [
            (True, "5m", [("up", s, {}, "0x10")]),
            (False, "5m", [("up", s, {}, "1x10")])]),
        "GatehouseNotReady": (None, [
            (True, "5m", [("probe_success", {"job": "gatehouse-ready", "instance": "https://auth.example.com/ready"}, {}, "0x10")]),
            (False, "5m", [("probe_success", {"job": "gatehouse-ready", "instance": "https://auth.example.com/ready"}, {}, "1x10")])]),
        "GatehouseReadyAnswers503": (["job", "instance"], [
            (True, "10m", [("gatehouse_http_requests_total", s, {**ready, "status": "503"}, "0+2x20")]),
            (False, "10m", [("gatehouse_http_requests_total", s, {**ready, "status": "200"}, "0+2x20")])]),
        "GatehouseStoreUnavailable": (["job", "instance"], [
            (True, "10m", [("gatehouse_store_errors_total", s, {"operation": "registration"}, "0+10x20")]),
            (False, "10m", [("gatehouse_store_errors_total", s, {"operation": "registration"}, "0+1x20")])]),
        "GatehouseLockoutsSpiking": (["job", "instance", "check"], [
            (True, "15m", [("gatehouse_check_blocks_total", s, {}, "0+5x20")]),
            (False, "15m", [("gatehouse_check_blocks_total", s, {}, "0+1x20")])]),
        "GatehouseThrottlesSpiking": (["job", "instance", "route"], [
            (True, "15m", [("gatehouse_http_requests_total", s, {"route": "/mfp/api/preauth/v1/preauthorize", "method": "POST", "status": "429"}, "0+10x20")]),
            (False, "15m", [("gatehouse_http_requests_total", s, {"route": "/mfp/api/preauth/v1/preauthorize", "method": "POST", "status": "200"}, "0+10x20")])]),
        "GatehouseGatewayThrottlesSpiking": (["job", "instance", "realm"], [
            (True, "15m", [("gatehouse_gateway_authentications_total", g, {"result": "throttled"}, "0+10x20")]),
            (False, "15m", [("gatehouse_gateway_authentications_total", g, {"result": "challenge"}, "0+10x20")])]),
        "GatehouseAuditEventsDropped": (None, [
            (True, "5m", [("gatehouse_audit_events_dropped_total", s, {}, "0 0 0 1 1 1 1")]),
            (False, "5m", [("gatehouse_audit_events_dropped_total", s, {}, "0x10")])]),
        "GatehouseTokenServerErrors": (["job", "instance", "route"], [
            (True, "15m", [("gatehouse_http_requests_total", s, {**token, "status": "500"}, "0+3x20")]),
            (False, "15m", [("gatehouse_http_requests_total", s, {**token, "status": "400"}, "0+3x20")])]),
        "GatehouseTokenErrorRatioHigh": (["job", "instance"], [
            (True, "25m", [("gatehouse_http_requests_total", s, {**token, "status": "400"}, "0+60x30"),
                           ("gatehouse_http_requests_total", s, {**token, "status": "200"}, "0+6x30")]),
            (False, "25m", [("gatehouse_http_requests_total", s, {**token, "status": "400"}, "0+6x30"),
                            ("gatehouse_http_requests_total", s, {**token, "status": "200"}, "0+60x30")])]),
        # time() is 1200 at 20m: five days left warns, one day left is critical too.
        "GatehouseCertificateExpiresSoon": (None, [
            (True, "20m", [("probe_ssl_earliest_cert_expiry", {"job": "gatehouse-tls", "instance": "auth.example.com:443"}, {}, f"{1200 + 5 * 86400}x30")]),
            (False, "20m", [("probe_ssl_earliest_cert_expiry", {"job": "gatehouse-tls", "instance": "auth.example.com:443"}, {}, f"{1200 + 60 * 86400}x30")])]),
        "GatehouseCertificateExpiresVerySoon": (None, [
            (True, "20m", [("probe_ssl_earliest_cert_expiry", {"job": "gatehouse-tls", "instance": "auth.example.com:443"}, {}, f"{1200 + 86400}x30")]),
            (False, "20m", [("probe_ssl_earliest_cert_expiry", {"job": "gatehouse-tls", "instance": "auth.example.com:443"}, {}, f"{1200 + 5 * 86400}x30")])]),
        "GatehousePolicyReloadFailing": (["job", "instance"], [
            (True, "15m", [("gatehouse_store_errors_total", s, {"operation": "latestPolicyVersion"}, "0+1x20")]),
            (False, "15m", [("gatehouse_store_errors_total", s, {"operation": "registration"}, "0+1x20")])]),
        "GatehousePolicyApplyRefused": (["job", "instance"], [
            (True, "5m", [("gatehouse_http_requests_total", s, {"route": "/admin/v1/policy", "method": "PUT", "status": "422"}, "0 0 1 1 1 1 1")]),
            (False, "5m", [("gatehouse_http_requests_total", s, {"route": "/admin/v1/policy", "method": "PUT", "status": "200"}, "0 0 1 1 1 1 1")])]),
        "GatehouseGatewayUpstreamErrors": (["job", "instance", "service"], [
            (True, "10m", [("gatehouse_gateway_upstream_errors_total", g, {}, "0+10x20")]),
            (False, "10m", [("gatehouse_gateway_upstream_errors_total", g, {}, "0x20")])]),
        "GatehouseGatewayBadGatewayRatio": (["job", "instance", "service"], [
            (True, "15m", [("gatehouse_gateway_requests_total", g, {"service": "open", "status": "502"}, "0+30x20"),
                           ("gatehouse_gateway_requests_total", g, {"service": "open", "status": "200"}, "0+30x20")]),
            (False, "15m", [("gatehouse_gateway_requests_total", g, {"service": "open", "status": "502"}, "0+1x20"),
                            ("gatehouse_gateway_requests_total", g, {"service": "open", "status": "200"}, "0+60x20")])]),
        "GatehouseGatewayAuthenticationUnavailable": (["job", "instance", "realm"], [
            (True, "10m", [("gatehouse_gateway_authentications_total", g, {"result": "unavailable"}, "0+10x20")]),
            (False, "10m", [("gatehouse_gateway_authentications_total", g, {"result": "unavailable"}, "0x20")])]),
    }


def main():
    rules_path, server_metrics, gateway_metrics, sources, work = sys.argv[1:6]
    rules = yaml.safe_load(pathlib.Path(rules_path).read_text())
    scraped = parse(pathlib.Path(server_metrics).read_text())
    for name, label_sets in parse(pathlib.Path(gateway_metrics).read_text()).items():
        scraped.setdefault(name, []).extend(label_sets)
    named = check_names(rules, scraped, pathlib.Path(sources))
    severity = {r["alert"]: r["labels"]["severity"] for g in rules["groups"] for r in g["rules"]}

    table = cases()
    if set(table) != set(severity):
        fail(f"alerts without a test: {sorted(set(severity) - set(table))}; tests without an alert: {sorted(set(table) - set(severity))}")
    tests = []
    for alert, (by, alert_cases) in table.items():
        for fires, eval_time, inputs in alert_cases:
            input_series = []
            first = None
            for name, target, overrides, values in inputs:
                labels = series(scraped, name, target, overrides)
                first = first or labels
                input_series.append({"series": selector(name, labels), "values": values})
            expected = []
            if fires:
                labels = dict(first) if by is None else {k: first[k] for k in by}
                labels["severity"] = severity[alert]
                expected.append({"exp_labels": labels})
            tests.append({"interval": "1m", "input_series": input_series,
                          "alert_rule_test": [{"eval_time": eval_time, "alertname": alert, "exp_alerts": expected}]})

    work = pathlib.Path(work)
    bare = {"groups": [{**g, "rules": [{k: v for k, v in r.items() if k != "annotations"} for r in g["rules"]]} for g in rules["groups"]]}
    (work / "rules-without-annotations.yml").write_text(yaml.safe_dump(bare, sort_keys=False))
    (work / "gatehouse.rules.test.yml").write_text(yaml.safe_dump(
        {"rule_files": ["rules-without-annotations.yml"], "evaluation_interval": "1m", "tests": tests}, sort_keys=False))
    print(f"alert_tests: {len(named)} metrics named by the rules: {', '.join(sorted(named))} (in /metrics; {', '.join(EVENT_ONLY)} named in Sources/, made at a first store error; {', '.join(sorted(EXTERNAL & named))} from Prometheus and the blackbox exporter)")
    print(f"alert_tests: {len(tests)} cases ({len(table)} alerts, each firing and not) -> promtool test rules")
    result = subprocess.run(["promtool", "test", "rules", "gatehouse.rules.test.yml"], cwd=work, timeout=120)
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
