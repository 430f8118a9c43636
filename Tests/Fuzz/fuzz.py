#!/usr/bin/env python3
"""Hostile-input fuzz test of the real `gatehouse serve` and `gatehouse gateway` (its demo).

Starts both binaries on free loopback ports, sends each a bounded number of generated hostile requests over raw
sockets (malformed request lines, paths and percent-encodings, odd and huge headers, broken framing, random and
broken JSON, forms, JWS and Basic credentials, pipelines, WebSocket upgrades) and asserts:

- the process never dies;
- no answer is a 5xx;
- afterwards the health endpoint and a good request are still served (serve: /health, a client_credentials token
  and the protected balance with it; gateway: GET /echo/... as joe/welcome, and ann/secret refused).

Every socket operation has a timeout. A request that gets no answer is half-closed (the server then sees the end
of the request) and, if still nothing comes, counted as a timeout and reported. The generator is a seeded RNG:
the seed is printed and `--seed` repeats a run. Standard library only.

    python3 Tests/Fuzz/fuzz.py [--gatehouse .build/debug/gatehouse] [--seed N] [--count 3000] [--budget 45]
"""

import argparse
import base64
import collections
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
POLICY = os.path.join(REPO, "Tests", "Fuzz", "policy.yaml")

# Credentials that work; fuzzed credentials never use these names (a locked account would break the last checks).
SERVICE_CLIENT = ("fuzz-service", "fuzz-secret")
GATEWAY_USER = ("joe", "welcome")
GATEWAY_GUEST = ("ann", "secret")
REAL_NAMES = {"fuzz-service", "joe", "ann", "john", "jane"}
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64(data):
    return base64.b64encode(data).decode()


def basic(user, password):
    return "Basic " + b64(f"{user}:{password}".encode())


class Case:
    """One generated request (or several pipelined): the bytes, and how to read the answer."""

    __slots__ = ("kind", "data", "complete", "expect", "head")

    def __init__(self, kind, data, complete=True, expect=1, head=False):
        self.kind = kind
        self.data = data
        self.complete = complete  # False: deliberately incomplete, so half-close at once
        self.expect = expect  # answers to wait for
        self.head = head  # a HEAD request (answers without a body)


# MARK: - Generation


class Fuzzer:
    """Hostile requests for one target, from a seeded RNG."""

    PCT_BAD = ["%", "%%", "%z", "%zz", "%0", "%0g", "%g0", "%00", "%ff", "%FF", "%c0%af", "%e0%80%af", "%2e", "%2E%2e",
               "%2f", "%2F", "%5c", "%25", "%u002e", "%%32%65", "%0d%0a", "%09", "%7f", "%80", "%c3%28", "%ed%a0%80",
               "%f4%90%80%80", "%fe%ff", "%3f", "%23", "%20", "%2500", "%%", "%-1", "%+1"]
    DOTS = ["..", ".", "...", "%2e%2e", ".%2e", "%2e.", "..;", ".;", "..%00", "..%2f", "..\\", "..%5c", "%2e%2e%2f"]
    TRASH = ["", " ", "\t", "\\", "//", "~", ";a=b", ";", "#frag", "?", "??", "&", "=", "*", "@", ":", "%", "\x00",
             "\x7f", "\x1b[0m", "é", "😀", "\u202e", "\ufeff", "con", "NUL", "a" * 300]
    RAW_BYTES = [b"\x80", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe9", b"\xf0\x9f\x98\x80", b"\x00", b"\x01", b"\x7f",
                 b"\r", b"\n", b" ", b"\t", b"\x0b", b"\x0c"]
    METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT", "PRI", "QUERY", "get",
               "Get", "G E T", "", "GETT", "POSTX", "M-SEARCH", "PROPFIND", "X" * 40, "X" * 5000, "\x00GET", "GET\t",
               "ÄÖÜ", "1", "-", "GET GET"]
    VERSIONS = ["HTTP/1.1", "HTTP/1.0", "HTTP/0.9", "HTTP/2.0", "HTTP/2", "HTTP/1.1.1", "HTTP/11", "http/1.1", "HTTP/",
                "", "HTTP/1.1 extra", "HTTP/9.9", "HTTP/1.x", "HTTP /1.1", "HTTP/1.1\x00", "HTTPS/1.1", "HTTP/-1.1"]
    EOLS = ["\r\n", "\n", "\r", "\r\r\n", "\n\r"]
    CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/json;;;",
                     "application/json; charset=utf-16", "application/x-www-form-urlencoded",
                     "application/x-www-form-urlencoded; charset=ISO-8859-1", "text/plain", "", ";", "*/*",
                     "multipart/form-data; boundary=x", "application/json; charset=\xff", "application/json" + ";a=b" * 500,
                     "application/jsonx", " application/json ", "application/x-www-form-urlencoded\x00"]
    UNICODE = ["é", "ß", "€", "😀", "\u0000", "\u202e", "\ufeff", "\uffff", "日本", "\u0301", "\\", "\"", "'", "<", "{"]

    def __init__(self, rng, target, bearer=None):
        self.rng = rng
        self.target = target
        self.bearer = bearer
        if target == "serve":
            self.endpoints = [
                ("GET", "/health", None), ("GET", "/ready", None), ("GET", "/openapi.json", None),
                ("POST", "/mfp/api/registration/v1/self", "json"),
                ("PUT", "/mfp/api/registration/v1/self/{id}", "json"),
                ("GET", "/mfp/api/registration/v1/self/{id}", "assertion-query"),
                ("POST", "/mfp/api/preauth/v1/preauthorize", "json"),
                ("GET", "/mfp/api/az/v1/authorization", "authorization-query"),
                ("GET", "/mfp/api/az/v1/authorization/redirect/{id}", "code-query"),
                ("POST", "/mfp/api/az/v1/token", "form"), ("POST", "/mfp/api/az/v1/introspection", "form"),
                ("POST", "/mfp/api/az/v1/revoke", "form"), ("POST", "/mfp/api/preauth/v1/logout", "form"),
                ("POST", "/mfp/api/preauth/v1/heartbeat", "form"), ("POST", "/mfp/api/loguploader", "any"),
                ("GET", "/mfp/api/adapters/ResourceAdapter/balance", "bearer"),
                ("GET", "/mfp/api/adapters/ResourceAdapter/unprotected", None),
                ("GET", "/.well-known/jwks.json", None), ("GET", "/.well-known/oauth-authorization-server", None),
                ("GET", "/mfp/api/az/v1/jwks", None), ("GET", "/mfp/api/nothing", None), ("GET", "/", None),
                ("HEAD", "/health", None), ("HEAD", "/mfp/api/adapters/ResourceAdapter/balance", "bearer"),
                # The OpenID Provider (issue 58): its page, rounds, token, UserInfo, logout and discovery.
                ("GET", "/oidc/authorize", "authorization-query"), ("POST", "/oidc/authorize", "form"),
                ("POST", "/oidc/sign-in", "json"), ("POST", "/oidc/token", "form"), ("GET", "/oidc/userinfo", "bearer"),
                ("POST", "/oidc/userinfo", "form"), ("GET", "/oidc/logout", None), ("POST", "/oidc/logout", "form"),
                ("GET", "/.well-known/openid-configuration", None), ("GET", "/oidc/assets/sign-in.js", None),
            ]
        else:
            self.endpoints = [
                ("GET", "/echo", "basic"), ("GET", "/echo/{id}", "basic"), ("POST", "/echo/{id}", "basic-any"),
                ("PUT", "/echo/a/b/{id}", "basic-any"), ("DELETE", "/echo/{id}", "basic"),
                ("PATCH", "/echo/{id}", "basic-any"), ("GET", "/", None), ("GET", "/other/{id}", None),
                ("GET", "/echoes", "basic"), ("GET", "/ECHO/{id}", "basic"),
            ]
        self.kinds = [
            ("request-line", 8, self.request_line), ("path", 16, self.path_case), ("headers", 12, self.headers_case),
            ("framing", 10, self.framing_case), ("json", 12, self.json_case), ("form", 10, self.form_case),
            ("jws", 10, self.jws_case), ("basic", 10, self.basic_case), ("pipeline", 5, self.pipeline_case),
            ("upgrade", 4, self.upgrade_case), ("garbage", 3, self.garbage_case),
        ]
        self.weights = [weight for _, weight, _ in self.kinds]

    # Small pieces

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, items):
        return self.rng.choice(items)

    def text(self, limit=24):
        alphabet = "abcXYZ019-_.~!$&'()*+,;=:@/?#[]%\"<>\\^`{|} " + "".join(self.UNICODE)
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(0, limit)))

    def big(self):
        return self.pick([1000, 8 * 1024, 16 * 1024, 70 * 1024, 200 * 1024])

    def endpoint(self):
        method, template, body = self.pick(self.endpoints)
        return method, template.replace("{id}", self.pick(["c0ffee", "8d5e1f3a-0000-4000-8000-000000000000", "x"])), body

    def mutate_path(self, path):
        segments = path.split("/")
        for _ in range(self.rng.randint(1, 4)):
            index = self.rng.randrange(len(segments))
            action = self.rng.randrange(7)
            if action == 0:
                segments.insert(index, self.pick(self.DOTS))
            elif action == 1:
                segments[index] = segments[index] + self.pick(self.PCT_BAD)
            elif action == 2:
                segments.insert(index, self.pick(self.TRASH))
            elif action == 3:
                segments[index] = "".join(f"%{ord(c):02x}" if c.isalnum() and self.chance(0.5) else c for c in segments[index])
            elif action == 4:
                segments[index] = segments[index].upper()
            elif action == 5:
                segments.insert(index, "")
            else:
                segments[index] = self.pick(self.PCT_BAD) + segments[index]
        result = "/".join(segments).encode("utf-8", "surrogatepass")
        if self.chance(0.2):
            at = self.rng.randint(0, len(result))
            result = result[:at] + self.pick(self.RAW_BYTES) + result[at:]
        return result

    def query(self):
        pairs = []
        for _ in range(self.rng.randint(0, 6)):
            name = self.pick(["a", "client_id", "redirect_uri", "response_type", "scope", "code", "client_assertion",
                              "client_assertion_type", "error", "errorMsg", "", "%zz", "a%", "%00", "=", "token", "j_password"])
            value = self.pick(["", "%", "%zz", "%00", "%ff%fe", "code", "x" * 3000, self.text(), "+", "==", "%2b",
                               "mfp://mfpredirecturi", "http://evil/", self.jws(), ASSERTION_TYPE])
            pairs.append(f"{name}={value}" if self.chance(0.9) else name)
        separator = self.pick(["&", "&&", ";", "&=&"])
        return separator.join(pairs).encode("utf-8", "surrogatepass")

    def target_bytes(self, template_path):
        path = template_path.encode()
        roll = self.rng.random()
        if roll < 0.5:
            path = self.mutate_path(template_path)
        if self.chance(0.35):
            path += b"?" + self.query()
        if self.chance(0.05):
            path += b"#" + self.text().encode("utf-8", "surrogatepass")
        if self.chance(0.06):
            path = b"http://127.0.0.1" + path
        if self.chance(0.02):
            path = self.pick([b"*", b"", b"//", b"http://", b"127.0.0.1:80", b"/" * 5000, b"/a" * 30000,
                              b"/" + b"%" * 9000, b"/" + b"x" * 70000, b"\\", b"/%", b"?", b"#", b"/?%"])
        return path

    def auth_header(self, body):
        """A good or plausible Authorization for the endpoint, so that the fuzzed part goes deep."""
        if body in ("basic", "basic-any") and self.chance(0.7):
            return [("Authorization", basic(*GATEWAY_USER))]
        if body == "bearer" and self.bearer and self.chance(0.6):
            return [("Authorization", "Bearer " + self.bearer)]
        return []

    def request(self, method, target, headers, body=b"", version="HTTP/1.1", eol="\r\n", length=True):
        lines = [f"{method} ".encode("utf-8", "surrogatepass") + target + f" {version}".encode("utf-8", "surrogatepass")]
        has_host = any(name.lower() == "host" for name, _ in headers)
        if not has_host:
            lines.append(b"Host: 127.0.0.1")
        for name, value in headers:
            name_bytes = name if isinstance(name, bytes) else name.encode("utf-8", "surrogatepass")
            value_bytes = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
            lines.append(name_bytes + b": " + value_bytes)
        if length and body and not any(name.lower() in ("content-length", "transfer-encoding") for name, _ in headers
                                        if isinstance(name, str)):
            lines.append(b"Content-Length: " + str(len(body)).encode())
        end = eol.encode()
        return end.join(lines) + end + end + body

    def simple(self, kind, method, target, headers, body=b"", complete=True):
        return Case(kind, self.request(method, target, headers, body), complete=complete, head=(method == "HEAD"))

    # JWS, JSON, forms, credentials

    def jwk(self):
        numbers = ["", "AQAB", "AA", "_", "!!", b64url(b"\x00" * 4), b64url(b"\xff" * 256), b64url(b"\x01"),
                   b64url(self.rng.randbytes(self.rng.randint(1, 600))),
                   "A" * 5000, None, 65537, -1, [], {}]
        jwk = {"kty": self.pick(["RSA", "EC", "oct", "", None, 1]), "n": self.pick(numbers), "e": self.pick(numbers)}
        if self.chance(0.3):
            jwk["kid"] = self.text()
        if self.chance(0.2):
            jwk = self.pick([None, "jwk", [], {}, {"kty": "RSA"}])
        return jwk

    def jws_header(self):
        header = {"alg": self.pick(["RS256", "none", "HS256", "ES256", "RS512", "", None, "rs256", 1, "PS256"])}
        if self.chance(0.7):
            header["jwk"] = self.jwk()
        if self.chance(0.3):
            header["kid"] = self.pick(["", "../../etc/passwd", "x" * 2000, self.text(), 0, None])
        if self.chance(0.1):
            header["crit"] = ["b64"]
            header["b64"] = False
        return header

    def claims(self):
        now = int(time.time())
        values = [None, "", 0, -1, now, now * 1000, 2 ** 63, 2 ** 64, 1e308, "x", [], {}, True, self.text()]
        claims = {}
        for name in ("sub", "iat", "exp", "aud", "jti", "iss", "nbf", "scope", "client_id"):
            if self.chance(0.6):
                claims[name] = self.pick(values)
        if self.chance(0.3):
            claims = {"device": self.pick([{"id": self.text()}, None, "d", {}]),
                      "application": self.pick([{"id": "com.sample.pincodeswift", "clientPlatform": "ios"},
                                                {"id": "com.sample.web", "clientPlatform": "web", "version": 1},
                                                {"id": None}, [], "app"]),
                      "attributes": self.pick([None, {}, [], {"a": self.text()}])}
        return claims

    def jws(self):
        roll = self.rng.randrange(14)
        if roll == 0:
            return self.pick(["a.b", "a.b.c.d", "..", "...", ".", "", "a", "a..", "..c", "a.b."])
        if roll == 1:
            return "!!!.@@@.###"
        if roll == 2:
            return ".".join(self.text(40) for _ in range(3))
        if roll == 3:
            return "x" * self.pick([1000, 10000, 60000]) + ".y.z"
        if roll == 4:
            return "eyJ" + "A" * self.rng.randint(0, 50) + ".eyJ.sig"
        if roll == 5:
            return b64url(b"not json") + "." + b64url(b"\xff\xfe") + "." + b64url(self.rng.randbytes(16))
        if roll == 6:
            return b64url(json.dumps([1, 2]).encode()) + "." + b64url(b"null") + ".AAAA"
        if roll == 7:  # standard base64 with padding and + /
            return b64(json.dumps(self.jws_header()).encode()) + "." + b64(json.dumps(self.claims()).encode()) + "." + b64(self.rng.randbytes(8))
        if roll == 8:
            return "eyJhbGciOiJub25lIn0." + b64url(json.dumps(self.claims()).encode()) + "."
        header = b64url(json.dumps(self.jws_header()).encode())
        payload = b64url(json.dumps(self.claims()).encode())
        signature = self.pick([b64url(bytes(self.rng.getrandbits(8) for _ in range(256))), "", "AA", "=", "%%", "A" * 3000])
        return f"{header}.{payload}.{signature}"

    def json_value(self, depth=0):
        roll = self.rng.randrange(10 if depth < 4 else 6)
        if roll == 0:
            return None
        if roll == 1:
            return self.pick([True, False])
        if roll == 2:
            return self.pick([0, -0, 1, -1, 2 ** 53 + 1, 2 ** 64, -(2 ** 63) - 1, 10 ** 40, 1.5, 1e308, -1e-308, 3.14e-7])
        if roll in (3, 4, 5):
            return self.pick([self.text(), "", "x" * 5000, self.jws(), "\ud800", "\udc00\ud800", "\u0000",
                              "com.sample.pincodeswift", "RegisteredClient accessRestricted", "1234"])
        if roll in (6, 7):
            return [self.json_value(depth + 1) for _ in range(self.rng.randint(0, 4))]
        return {self.pick(["client_id", "scope", "challengeResponse", "pin", "answer", "username", "password",
                           "signedRegistrationData", "header", "payload", "signature", self.text(8), ""]):
                self.json_value(depth + 1) for _ in range(self.rng.randint(0, 5))}

    def json_body(self, path):
        roll = self.rng.randrange(12)
        if roll == 0:
            return self.pick([b"", b"{", b"}", b"[", b"{]", b"{\"a\":}", b"{,}", b"{\"a\":1,}", b"[1,]", b"nul", b"tru",
                              b"NaN", b"Infinity", b"-", b"01", b"1e99999", b"\"\\u\"", b"\"\\ud800\"", b"\"\\x41\"",
                              b"{'a': 1}", b"/* c */ {}", b"\xef\xbb\xbf{}", b"{\"a\":1}{\"b\":2}", b"\x00", b"\"",
                              b"{\"client_id\":\"a\" \"scope\":1}", b"{\"client_id\":\"\xff\xfe\"}"])
        if roll == 1:
            depth = self.pick([100, 1000, 10000, 30000])
            return self.pick([b"[" * depth + b"]" * depth, b"[" * depth, b"{\"a\":" * depth + b"1" + b"}" * depth,
                              b"{\"challengeResponse\":" * depth])
        if roll == 2:
            return json.dumps(self.json_value()).encode("utf-8", "surrogatepass")
        if roll == 3:
            return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, 200)))
        if roll == 4:
            return json.dumps({"client_id": self.text()}).encode("utf-16")
        if roll == 5:
            return b"{\"client_id\":\"" + b"a" * 70000 + b"\"}"
        if "registration" in path or roll in (6, 7):
            jws = self.jws().split(".")
            while len(jws) < 3:
                jws.append("")
            data = {"signedRegistrationData": self.pick([
                {"header": jws[0], "payload": jws[1], "signature": jws[2]},
                {"header": self.json_value(), "payload": jws[1], "signature": jws[2]},
                {"header": jws[0]}, self.jws(), None, [], {}])}
            return json.dumps(data).encode("utf-8", "surrogatepass")
        data = {"client_id": self.pick([self.text(), "", None, 1, [], {}, "x" * 10000,
                                        "8d5e1f3a-0000-4000-8000-000000000000"]),
                "scope": self.pick([self.text(), None, "", 1, "accessRestricted", "RegisteredClient", "a " * 3000]),
                "challengeResponse": self.pick([None, {}, [], "x", {"PinCodeAttempts": self.pick([{"pin": "1234"}, None, 1, "x", []])},
                                                {self.text(): self.json_value()}])}
        if self.chance(0.3):
            data.pop(self.pick(list(data)))
        text = json.dumps(data).encode("utf-8", "surrogatepass")
        if self.chance(0.15):
            text = text[: self.rng.randint(0, len(text))]
        return text

    def form_body(self):
        roll = self.rng.randrange(8)
        if roll == 0:
            return self.pick([b"", b"&", b"=", b"&&&&", b"==", b"%", b"%zz=%zz", b"a=%", b"%00=%00", b"+=+", b"a&b&c",
                              b"grant_type", b"=x", b"\xff\xfe=\x00", b"token=%ff%fe%fd", b"a=" + b"%" * 5000,
                              b"a=b" * 10000, b";".join([b"a=b"] * 100)])
        if roll == 1:
            return b"&".join(b"k%d=v" % i for i in range(self.pick([500, 5000, 20000])))[:70000]
        if roll == 2:
            return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, 300)))
        fields = []
        for name in self.rng.sample(["grant_type", "code", "redirect_uri", "client_id", "client_assertion",
                                     "client_assertion_type", "scope", "token", "token_type_hint", "security_check"],
                                    self.rng.randint(1, 6)):
            value = self.pick(["authorization_code", "client_credentials", "password", "", "%", "%zz", "%00",
                               ASSERTION_TYPE, "UserLogin", "PinCodeAttempts", "Nope", self.jws(), self.text(),
                               "mfp://mfpredirecturi", "x" * 20000, "accessRestricted authorization.introspect"])
            if self.chance(0.6):
                value = urllib.parse.quote(value, safe=self.pick(["", "%=&+", "/"]))
            fields.append(f"{name}={value}")
            if self.chance(0.1):
                fields.append(f"{name}={self.text()}")
        return "&".join(fields).encode("utf-8", "surrogatepass")

    def bad_basic(self):
        user = self.pick(["", "x", "fuzz", "admin", "root", "joe2", "a" * 3000, "é", "\x00", "user name", "%", "svc"])
        assert user.lower().strip() not in REAL_NAMES
        password = self.pick(["", "x", ":", "::::", "welcome2", "\x00", "é", "p" * 5000])
        encoded = self.pick([
            b64(f"{user}:{password}".encode("utf-8", "surrogatepass")), b64(user.encode("utf-8", "surrogatepass")),
            b64(b"\xff\xfe:\x80"), "!!!!", "a", "a===", "====", "YQ", "YWJj ZGVm", "x" * 70000, "", " ", "Zm9v\x00",
            b64(b":"), b64(b"\x00:\x00"), b64url(b"\xfb\xff:\xfe"), b64(f"{user}:{password}".encode("utf-16"))])
        return self.pick(["Basic ", "basic ", "BASIC ", "Basic  ", "Basic\t", "Basic", "Application Basic ", "Bearer ",
                          "Digest ", ""]) + encoded

    # Cases

    def request_line(self):
        method, path, _ = self.endpoint()
        roll = self.rng.randrange(6)
        if roll == 0:
            line = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, 300)))
            return Case("request-line", line + b"\r\n\r\n", complete=False)
        if roll == 1:
            return Case("request-line", self.pick([b"\r\n\r\n", b"\r\n", b"\n\n", b" \r\n\r\n", b"GET\r\n\r\n",
                                                   b"GET /\r\n\r\n", b"GET / HTTP/1.1", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                                                   b"GET / HTTP/1.1\r\n" + b"\r\n" * 3000,
                                                   b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + self.rng.randbytes(64)]),
                        complete=False)
        method = self.pick(self.METHODS) if self.chance(0.6) else method
        version = self.pick(self.VERSIONS) if self.chance(0.6) else "HTTP/1.1"
        eol = self.pick(self.EOLS) if self.chance(0.3) else "\r\n"
        target = self.target_bytes(path)
        if roll == 2:
            target = target.replace(b"/", self.pick([b" /", b"\t/", b"/ "]), 1)
        data = self.request(method, target, [], version=version, eol=eol)
        if roll == 3:
            data = data.replace(b" ", self.pick([b"  ", b"\t", b"", b"\x00", b"\x0b"]), self.rng.randint(1, 2))
        return Case("request-line", data, complete=(method.isalpha() and version.startswith("HTTP/1") and eol == "\r\n"),
                    head=(method == "HEAD"))

    def path_case(self):
        method, path, body = self.endpoint()
        headers = self.auth_header(body)
        payload = b""
        if method in ("POST", "PUT", "PATCH"):
            payload = self.pick([b"", b"{}", b"a=b", b"x" * 100])
            headers.append(("Content-Type", self.pick(self.CONTENT_TYPES[:6])))
        return self.simple("path", method, self.target_bytes(path) if self.chance(0.3) else self.mutate_path(path) +
                           (b"?" + self.query() if self.chance(0.3) else b""), headers, payload)

    def headers_case(self):
        method, path, body = self.endpoint()
        headers = self.auth_header(body)
        roll = self.rng.randrange(16)
        if roll == 0:
            headers.append(("X-Big", "v" * self.big()))
        elif roll == 1:
            headers += [(f"X-H{i}", "v") for i in range(self.pick([100, 1000, 5000]))]
        elif roll == 2:
            headers.append((self.pick(["X Bad", "X:Bad", "", " X", "X\x00", "Xé", "X\t", "(x)", "X" * 10000, "@"]), "v"))
        elif roll == 3:
            headers.append(("X-Value", self.pick([b"\x00", b"\x7f", b"\xff\xfe", b"a\rb", b"a\nb", b"\x1b[31m", b"\xc3\x28"])))
        elif roll == 4:
            headers.append(("X-Fold", "a\r\n b\r\n\tc"))
        elif roll == 5:
            headers.append((b"no colon here", b""))
            headers[-1] = (b"NoColonLine", b"")
            data = self.request(method, path.encode(), headers).replace(b"NoColonLine: ", b"NoColonLine", 1)
            return Case("headers", data, complete=True, head=(method == "HEAD"))
        elif roll == 6:
            headers.append(("Host", self.pick(["", "x" * 10000, "[::1", "a b", "127.0.0.1:99999999", "é", "\x00", "@", "h:p:q"])))
            if self.chance(0.3):
                headers.append(("Host", "second.example"))
        elif roll == 7:
            data = self.request(method, path.encode(), headers).replace(b"Host: 127.0.0.1\r\n", b"", 1)
            return Case("headers", data, head=(method == "HEAD"))
        elif roll == 8:
            headers.append(("Expect", self.pick(["100-continue", "200-ok", "", "x" * 1000])))
            headers.append(("Content-Length", str(self.pick([0, 5, 100]))))
            return Case("headers", self.request("POST", path.encode(), headers, b"hello", length=False), complete=False)
        elif roll == 9:
            headers.append(("Connection", self.pick(["close", "keep-alive", "Upgrade", "te, close", "x" * 5000, "", "Host",
                                                      "Authorization", "Content-Length"])))
        elif roll == 10:
            headers.append(("Origin", self.pick(["http://evil", "null", "", "http://[::1", "http://%zz", "http://a:b@c",
                                                  "x" * 5000, "http://127.0.0.1:1/..", "file://", "http://é", "http://\x00"])))
            if self.chance(0.5):
                method = "OPTIONS"
                headers.append(("Access-Control-Request-Method", self.pick(["POST", "", "X" * 1000, "é"])))
                headers.append(("Access-Control-Request-Headers", self.pick(["a,b", ",,,", "x" * 3000, "é", ""])))
        elif roll == 11:
            headers.append(("Cookie", self.pick(["a=b", "=", ";;;", "a=" + "%" * 500, "j_username=joe; j_password=x",
                                                  "x" * 10000, "\x00=\x00", "token=" + self.jws()])))
        elif roll == 12:
            headers.append((self.pick(["X-Forwarded-For", "Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto",
                                       "X-Real-IP", "X-Gateway-User"]),
                            self.pick(["1.2.3.4", "for=\"[::1]\";proto=https", "", "x" * 5000, "a,b,,c", "%zz", "joe"])))
        elif roll == 13:
            headers.append(("Content-Type", self.pick(self.CONTENT_TYPES)))
            return self.simple("headers", "POST", path.encode(), headers, self.pick([b"{}", b"a=b", b""]))
        elif roll == 14:
            headers.append(("Authorization", self.pick(["", "Bearer", "Bearer ", "x" * 70000, "\x00", "Bearer é",
                                                          "Negotiate " + "A" * 1000, "MFP-Challenge"])))
            if self.chance(0.4):
                headers.append(("Authorization", basic(*GATEWAY_USER) if self.target == "gateway" else "Bearer x"))
        else:
            headers.append(("Accept", self.pick(["*/*", "", "x" * 3000, "application/json;q=abc"])))
            headers.append(("Range", self.pick(["bytes=0-0", "bytes=-1", "x"])))
        return self.simple("headers", method, path.encode(), headers)

    def framing_case(self):
        method, path, body = self.endpoint()
        method = method if method in ("POST", "PUT", "PATCH") else self.pick(["POST", "GET", "PUT"])
        headers = self.auth_header(body) + [("Content-Type", self.pick(["application/json", "application/x-www-form-urlencoded"]))]
        payload = self.pick([b"{}", b"a=b", b"x" * 100, b""])
        roll = self.rng.randrange(10)
        if roll == 0:
            value = self.pick(["-1", "abc", "1e3", " 10", "10, 10", "10,11", "0x10", "+5", "", "99999999999999999999",
                               "18446744073709551616", "9223372036854775807", "5 5", "\x00"])
            headers.append(("Content-Length", value))
            return Case("framing", self.request(method, path.encode(), headers, payload, length=False), complete=False)
        if roll == 1:
            headers += [("Content-Length", str(len(payload))), ("Content-Length", str(len(payload) + 3))]
            return Case("framing", self.request(method, path.encode(), headers, payload, length=False), complete=False)
        if roll == 2:  # longer than sent: deliberately incomplete
            headers.append(("Content-Length", str(len(payload) + self.pick([1, 100, 70000, 10 ** 9]))))
            return Case("framing", self.request(method, path.encode(), headers, payload, length=False), complete=False)
        if roll == 3:  # shorter than sent: the rest is a second, garbage request
            headers.append(("Content-Length", str(max(0, len(payload) - 2))))
            return Case("framing", self.request(method, path.encode(), headers, payload + b"\r\n\r\n", length=False),
                        complete=False, expect=2)
        chunked = self.pick(["chunked", "Chunked", "chunked, chunked", "gzip, chunked", "chunked, gzip", "xchunked",
                             "identity", "gzip", " chunked", "chunked\x00", ""])
        headers.append(("Transfer-Encoding", chunked))
        if roll == 4:
            headers.append(("Content-Length", str(len(payload))))
        chunks = self.pick([
            b"2\r\n{}\r\n0\r\n\r\n", b"zz\r\n{}\r\n0\r\n\r\n", b"-2\r\n{}\r\n0\r\n\r\n", b"ffffffffffffffffff\r\nab\r\n",
            b"2;ext=\x00\r\n{}\r\n0\r\n\r\n", b"2\r\n{}0\r\n\r\n", b"2\r\n{}\r\n", b"0\r\nX-Trailer: \x00\r\n\r\n",
            b"0\r\n" + b"T: v\r\n" * 2000 + b"\r\n", b"2\n{}\n0\n\n", b"1\r\n" * 5000, b"100000000\r\n" + b"x" * 5000,
            b"2 \r\n{}\r\n0\r\n\r\n", b"0x2\r\n{}\r\n0\r\n\r\n", b"", b"\r\n\r\n", b"5\r\nabc\r\n0\r\n\r\n",
            b"".join(b"1\r\n" + bytes([self.rng.getrandbits(8)]) + b"\r\n" for _ in range(300)) + b"0\r\n\r\n"])
        return Case("framing", self.request(method, path.encode(), headers, chunks, length=False), complete=False)

    def json_case(self):
        if self.target == "serve":
            method, path, _ = self.pick([e for e in self.endpoints if e[2] in ("json", "any")] + [self.endpoint()])
            path = path.replace("{id}", self.pick(["c0ffee", "x"]))
        else:
            method, path, _ = self.pick([("POST", "/echo/json", "basic-any"), ("PUT", "/echo/{id}", "basic-any")])
        headers = self.auth_header("basic-any" if self.target == "gateway" else None)
        content_type = self.pick(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
                                  "application/json; charset=utf-16", "text/plain", "application/json;"])
        headers.append(("Content-Type", content_type))
        return self.simple("json", method if method != "GET" else "POST", path.encode(), headers, self.json_body(path))

    def form_case(self):
        if self.target == "serve":
            method, path, _ = self.pick([e for e in self.endpoints if e[2] == "form"])
        else:
            method, path = "POST", "/echo/form"
        headers = self.auth_header("basic-any" if self.target == "gateway" else None)
        if self.target == "serve" and self.chance(0.3):
            headers.append(("Authorization", self.pick([basic(*SERVICE_CLIENT), self.bad_basic(),
                                                        "Bearer " + (self.bearer or "x")])))
        headers.append(("Content-Type", self.pick(["application/x-www-form-urlencoded",
                                                   "application/x-www-form-urlencoded; charset=ISO-8859-1",
                                                   "application/x-www-form-urlencoded;charset=\"utf-8\"",
                                                   "APPLICATION/X-WWW-FORM-URLENCODED", "application/json"])))
        return self.simple("form", method, path.encode(), headers, self.form_body())

    def jws_case(self):
        jws = self.jws()
        if self.target == "gateway":
            headers = [("Authorization", self.pick(["Bearer ", "bearer ", "Application Token "]) + jws)]
            return self.simple("jws", "GET", self.pick([b"/echo/jws", b"/echo"]), headers)
        roll = self.rng.randrange(5)
        if roll == 0:
            headers = [("Authorization", self.pick(["Bearer ", "bearer ", "Bearer  ", "BEARER "]) + jws)]
            return self.simple("jws", "GET", self.pick([b"/mfp/api/adapters/ResourceAdapter/balance",
                                                        b"/mfp/api/adapters/ResourceAdapter/unprotected"]), headers)
        if roll == 1:
            headers = [("Authorization", "Bearer " + jws), ("Content-Type", "application/x-www-form-urlencoded")]
            return self.simple("jws", "POST", b"/mfp/api/az/v1/introspection", headers,
                               ("token=" + urllib.parse.quote(self.jws())).encode())
        if roll == 2:
            path = self.pick(["/mfp/api/az/v1/token", "/mfp/api/az/v1/revoke", "/mfp/api/preauth/v1/logout",
                              "/mfp/api/preauth/v1/heartbeat"])
            fields = {"client_assertion": jws, "client_assertion_type": self.pick([ASSERTION_TYPE, "", "x"]),
                      "grant_type": "authorization_code", "code": self.pick(["", "abc", self.jws()]),
                      "token": self.jws(), "security_check": self.pick(["PinCodeAttempts", "UserLogin", "Nope"]),
                      "redirect_uri": "mfp://mfpredirecturi"}
            return self.simple("jws", "POST", path.encode(), [("Content-Type", "application/x-www-form-urlencoded")],
                               urllib.parse.urlencode(fields).encode())
        if roll == 3:
            query = urllib.parse.urlencode({"client_assertion": jws, "client_assertion_type": ASSERTION_TYPE})
            return self.simple("jws", "GET", f"/mfp/api/registration/v1/self/{self.pick(['c0ffee', 'x'])}?{query}".encode(), [])
        parts = (jws.split(".") + ["", "", ""])[:3]
        body = json.dumps({"signedRegistrationData": {"header": parts[0], "payload": parts[1], "signature": parts[2]}})
        return self.simple("jws", self.pick(["POST", "PUT"]),
                           b"/mfp/api/registration/v1/self" + self.pick([b"", b"/c0ffee"]),
                           [("Content-Type", "application/json")], body.encode())

    def basic_case(self):
        if self.target == "gateway":
            method, path, _ = self.pick([e for e in self.endpoints if e[2] in ("basic", "basic-any")])
            path = path.replace("{id}", "basic")
        else:
            method, path = self.pick([("POST", "/mfp/api/az/v1/token"), ("POST", "/mfp/api/az/v1/introspection"),
                                      ("POST", "/mfp/api/az/v1/revoke")])
        headers = [("Authorization", self.bad_basic())]
        if self.chance(0.1):
            headers.append(("Authorization", self.bad_basic()))
        body = b""
        if method == "POST":
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = b"grant_type=client_credentials&scope=accessRestricted&token=" + self.jws().encode()
        return self.simple("basic", method, path.encode(), headers, body)

    def good_request(self):
        if self.target == "serve":
            return self.request("GET", b"/health", [])
        return self.request("GET", b"/echo/pipeline", [("Authorization", basic(*GATEWAY_USER))])

    def pipeline_case(self):
        count = self.rng.randint(2, 5)
        parts = []
        for _ in range(count):
            if self.chance(0.5):
                parts.append(self.good_request())
            else:
                generator = self.pick([self.path_case, self.headers_case, self.json_case, self.form_case, self.jws_case])
                case = generator()
                while case.head or not case.complete:
                    case = generator()
                parts.append(case.data)
        return Case("pipeline", b"".join(parts), complete=False, expect=count)

    def upgrade_case(self):
        path = b"/echo/ws" if self.target == "gateway" else self.pick([b"/health", b"/mfp/api/loguploader"])
        headers = [("Connection", self.pick(["Upgrade", "upgrade, keep-alive", "keep-alive", ""])),
                   ("Upgrade", self.pick(["websocket", "WebSocket", "h2c", "", "websocket, h2c", "x" * 3000]))]
        if self.chance(0.8):
            headers.append(("Sec-WebSocket-Key", self.pick([b64(self.rng.randbytes(16)), "", "short", "x" * 5000, "%%%", "\x00"])))
        if self.chance(0.8):
            headers.append(("Sec-WebSocket-Version", self.pick(["13", "8", "", "x", "99999999999"])))
        if self.chance(0.3):
            headers.append(("Sec-WebSocket-Protocol", self.pick(["chat", "", ",,,", "x" * 2000])))
        if self.target == "gateway" and self.chance(0.6):
            headers.append(("Authorization", self.pick([basic(*GATEWAY_USER), basic(*GATEWAY_GUEST), self.bad_basic()])))
        frames = self.pick([b"", self.rng.randbytes(64), b"\x81\x05hello", b"\x81\xfe\xff\xff" + self.rng.randbytes(20),
                            b"\x88\x02\x03\xe8", b"\x89\x00", b"\x8f\x80\x00\x00\x00\x00",
                            b"\x81\xff" + b"\x7f" + self.rng.randbytes(7) + self.rng.randbytes(10),
                            b"\x81\x85" + self.rng.randbytes(4) + b"GHST:",
                            b"\x01\x83abc\x80\x83def" + self.rng.randbytes(8)])
        return Case("upgrade", self.request("GET", path, headers) + frames, complete=False)

    def garbage_case(self):
        data = bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(1, self.pick([10, 500, 5000]))))
        if self.chance(0.5):
            data = self.good_request()[: self.rng.randint(1, 40)] + data
        return Case("garbage", data, complete=False)

    def next(self):
        _, _, generator = self.rng.choices(self.kinds, weights=self.weights)[0]
        return generator()


# MARK: - Exchange


STATUS_LINE = re.compile(rb"HTTP/(\d)\.(\d) (\d{3})[^\r\n]*\r?\n")


def parse_answers(buffer, head, limit):
    """The statuses of the (at most `limit`) complete answers at the start of `buffer`, and whether the parse is
    stuck (garbled)."""
    statuses = []
    position = 0
    while position < len(buffer) and len(statuses) < limit:
        match = STATUS_LINE.match(buffer, position)
        if not match:
            rest = buffer[position:]
            if b"HTTP/".startswith(rest[:5]) and b"\n" not in rest:
                return statuses, False  # an answer still arriving
            return statuses, True
        status = int(match.group(3))
        end = buffer.find(b"\r\n\r\n", match.end() - 2)
        if end < 0:
            return statuses, False
        headers = buffer[match.end():end].lower()
        body_start = end + 4
        if status == 101:
            statuses.append(status)
            return statuses, False  # another protocol follows
        if 100 <= status < 200:
            position = body_start
            continue
        if head or status in (204, 304):
            length = 0
        elif b"transfer-encoding: chunked" in headers:
            cursor = body_start
            while True:
                line_end = buffer.find(b"\r\n", cursor)
                if line_end < 0:
                    return statuses, False
                try:
                    size = int(buffer[cursor:line_end].split(b";")[0], 16)
                except ValueError:
                    return statuses, True
                cursor = line_end + 2 + size + 2
                if cursor > len(buffer):
                    return statuses, False
                if size == 0:
                    break
            length = cursor - body_start
        else:
            found = re.search(rb"(?:^|\r\n)content-length:\s*(\d+)", headers)
            if not found:
                statuses.append(status)
                return statuses, False  # the body runs to the end of the connection
            length = int(found.group(1))
        if body_start + length > len(buffer):
            return statuses, False
        statuses.append(status)
        position = body_start + length
    return statuses, False


class Outcome:
    __slots__ = ("statuses", "end", "garbled", "seconds", "raw")

    def __init__(self):
        self.raw = b""
        self.statuses = []
        self.end = "answered"  # answered, closed, reset, timeout, refused
        self.garbled = False
        self.seconds = 0.0


def exchange(port, case, timeout, grace):
    """Sends the case on a new connection and reads its answers; every socket operation is bounded."""
    outcome = Outcome()
    started = time.monotonic()
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        outcome.end = "refused"
        return outcome
    buffer = b""
    half_closed = False
    try:
        sock.settimeout(timeout)
        try:
            sock.sendall(case.data)
        except socket.timeout:
            pass  # the server stopped reading (a huge request): read what it says
        except (BrokenPipeError, ConnectionResetError):
            pass
        if not case.complete:
            try:
                sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            half_closed = True
        deadline = time.monotonic() + timeout + grace
        while True:
            statuses, garbled = parse_answers(buffer, case.head, case.expect)
            if garbled or len(statuses) >= case.expect or (statuses and statuses[-1] == 101):
                outcome.statuses, outcome.garbled = statuses, garbled
                break
            now = time.monotonic()
            if now >= deadline:
                outcome.statuses, outcome.end = statuses, "timeout"
                break
            wait = deadline - now if half_closed else min(deadline - now, max(0.05, started + grace - now))
            sock.settimeout(wait)
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                if not half_closed:
                    # No answer yet to a request meant to be complete: end it, so the server sees its end.
                    try:
                        sock.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    half_closed = True
                    continue
                outcome.statuses, outcome.end = statuses, "timeout"
                break
            except (ConnectionResetError, OSError):
                outcome.statuses, outcome.end = statuses, "reset"
                break
            if not chunk:
                statuses, garbled = parse_answers(buffer, case.head, case.expect)
                # An answer whose body runs to the end of the connection is complete now.
                outcome.statuses, outcome.garbled = statuses, garbled
                outcome.end = "answered" if statuses else "closed"
                break
            buffer += chunk
    finally:
        sock.close()
    outcome.raw = buffer[:400]
    outcome.seconds = time.monotonic() - started
    return outcome


def describe(data, limit=300):
    text = repr(data[:limit])
    return text + (f"… ({len(data)} bytes)" if len(data) > limit else "")


# MARK: - Processes


class Server:
    def __init__(self, name, command, banner, workdir, started):
        self.name = name
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        cwd=REPO)
        started.append(self)  # stopped at the end even if it never prints its banner
        self.port = None
        deadline = time.monotonic() + 60
        pattern = re.compile(banner)
        while time.monotonic() < deadline:
            with open(self.log_path, "rb") as log:
                found = pattern.search(log.read())
            if found:
                self.port = int(found.group(1))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not start (exit {self.process.poll()}):\n{self.tail()}")

    def alive(self):
        return self.process.poll() is None

    def tail(self, lines=30):
        """The end of the log; for a crash, from the fatal error on (Swift's backtrace: the crashing thread)."""
        with open(self.log_path, "rb") as log:
            all_lines = log.read().splitlines()
        fatal = [index for index, line in enumerate(all_lines) if b"Fatal error" in line or b"Program crashed" in line]
        if fatal:
            picked = all_lines[max(0, fatal[0] - 1): fatal[0] + 4]
            crashed = [index for index, line in enumerate(all_lines) if line.startswith(b"Thread ") and b" crashed:" in line]
            if crashed:
                picked += [b"..."] + [line for line in all_lines[crashed[0]: crashed[0] + 60] if line.strip()][:45]
            return b"\n".join(picked).decode("utf-8", "replace")
        return b"\n".join(all_lines[-lines:]).decode("utf-8", "replace")

    def error_lines(self):
        with open(self.log_path, "rb") as log:
            return [line.decode("utf-8", "replace") for line in log.read().splitlines()
                    if b" error " in line or b" critical " in line or b"Fatal error" in line]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


def http(port, method, path, headers=(), body=b"", timeout=10):
    """One ordinary request: (status, body)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    match = STATUS_LINE.match(answer)
    head, _, content = answer.partition(b"\r\n\r\n")
    return (int(match.group(3)) if match else 0), content


def client_token(port):
    body = urllib.parse.urlencode({"grant_type": "client_credentials", "scope": "accessRestricted authorization.introspect"}).encode()
    status, content = http(port, "POST", "/mfp/api/az/v1/token",
                           [("Authorization", basic(*SERVICE_CLIENT)), ("Content-Type", "application/x-www-form-urlencoded")], body)
    if status != 200:
        return None, f"token: {status} {content[:200]!r}"
    return json.loads(content)["access_token"], None


def good_requests(server):
    """The checks that the server still serves: a list of problems (empty when all is well)."""
    problems = []
    try:
        if server.name == "serve":
            for path in ("/health", "/ready"):
                status, content = http(server.port, "GET", path)
                if status != 200:
                    problems.append(f"GET {path}: {status} {content[:200]!r}")
            token, problem = client_token(server.port)
            if problem:
                problems.append(problem)
            else:
                status, content = http(server.port, "GET", "/mfp/api/adapters/ResourceAdapter/balance",
                                       [("Authorization", "Bearer " + token)])
                if status != 200 or b"19938.80" not in content:
                    problems.append(f"GET balance with a token: {status} {content[:200]!r}")
        else:
            status, content = http(server.port, "GET", "/echo/still-there?x=1", [("Authorization", basic(*GATEWAY_USER))])
            if status != 200 or b"user=joe" not in content:
                problems.append(f"GET /echo/still-there as joe: {status} {content[:200]!r}")
            status, content = http(server.port, "GET", "/echo/still-there", [("Authorization", basic(*GATEWAY_GUEST))])
            if status != 403:
                problems.append(f"GET /echo/still-there as ann: {status} (expected 403) {content[:200]!r}")
            status, content = http(server.port, "GET", "/echo/still-there")
            if status != 401:
                problems.append(f"GET /echo/still-there without credentials: {status} (expected 401)")
    except OSError as error:
        problems.append(f"{type(error).__name__}: {error}")
    return problems


# MARK: - Run


def fuzz(server, fuzzer, count, budget, timeout, grace, verbose):
    statuses = collections.Counter()
    ends = collections.Counter()
    kinds = collections.Counter()
    failures = []  # (what, case)
    timeouts = []
    garbled = []
    recent = collections.deque(maxlen=5)
    slowest = []  # (seconds, case) of answered requests
    started = time.monotonic()
    sent = 0
    died = False
    while sent < count and time.monotonic() - started < budget:
        case = fuzzer.next()
        recent.append(case)
        outcome = exchange(server.port, case, timeout, grace)
        sent += 1
        kinds[case.kind] += 1
        ends[outcome.end] += 1
        for status in outcome.statuses:
            statuses[status] += 1
            if status >= 500:
                failures.append((f"answered {status}", case))
        if outcome.end == "timeout":
            timeouts.append(case)
        elif outcome.statuses:
            slowest = sorted(slowest + [(outcome.seconds, case)], key=lambda item: -item[0])[:3]
        if outcome.garbled:
            garbled.append((case, outcome.raw))
        if verbose:
            print(f"  {sent:5d} {case.kind:12s} {outcome.end:8s} {outcome.statuses} {describe(case.data, 100)}")
        if outcome.end == "refused" or not server.alive():
            time.sleep(0.2)
            if not server.alive():
                died = True
                failures.append((f"process died (exit {server.process.poll()}) at or just before this request", case))
                for previous in list(recent)[:-1]:
                    failures.append(("sent just before the death", previous))
                break
    return {"sent": sent, "seconds": time.monotonic() - started, "statuses": statuses, "ends": ends, "kinds": kinds,
            "failures": failures, "timeouts": timeouts, "garbled": garbled, "died": died, "slowest": slowest}


def stop_on_signal(number, _frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up must not be cut short
    raise SystemExit(f"stopped by signal {number}")


def main():
    signal.signal(signal.SIGTERM, stop_on_signal)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gatehouse", default=os.path.join(REPO, ".build", "debug", "gatehouse"))
    parser.add_argument("--seed", type=int, default=None, help="the RNG seed (default: a fixed one)")
    parser.add_argument("--random-seed", action="store_true", help="a new seed each run")
    parser.add_argument("--count", type=int, default=3000, help="requests per target (default 3000)")
    parser.add_argument("--budget", type=float, default=45.0, help="seconds per target at most (default 45)")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds for one socket operation (default 5)")
    parser.add_argument("--grace", type=float, default=2.0,
                        help="seconds to wait for an answer before half-closing a complete request (default 2)")
    parser.add_argument("--max-timeouts", type=int, default=5, help="timeouts tolerated per target (default 5)")
    parser.add_argument("--targets", default="serve,gateway")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    seed = args.seed if args.seed is not None else (random.SystemRandom().randrange(2 ** 32) if args.random_seed else 20261123)
    print(f"fuzz seed {seed} (repeat with --seed {seed}); up to {args.count} requests or {args.budget:.0f} s per target")
    if not os.access(args.gatehouse, os.X_OK):
        print(f"FAILED: {args.gatehouse} is not built", file=sys.stderr)
        return 2

    workdir = tempfile.mkdtemp(prefix="gatehouse-fuzz-")
    servers = []
    ok = True
    try:
        targets = [t.strip() for t in args.targets.split(",") if t.strip()]
        for target in targets:
            if target == "serve":
                Server("serve", [args.gatehouse, "serve", "--port", "0", "--data", os.path.join(workdir, "data"),
                                 "--policy", POLICY, "--sample-adapter", "true", "--log-level", "warning"],
                       rb"listens on http://127\.0\.0\.1:(\d+)", workdir, servers)
            elif target == "gateway":
                Server("gateway", [args.gatehouse, "gateway", "--port", "0", "--log-level", "warning"],
                       rb"gateway listens on http://127\.0\.0\.1:(\d+)", workdir, servers)
            else:
                raise SystemExit(f"unknown target {target}")
        for index, server in enumerate(servers):
            print(f"\n== {server.name} (pid {server.process.pid}, port {server.port})")
            before = good_requests(server)
            if before:
                print("FAILED: the good requests fail before fuzzing (set-up problem):\n  " + "\n  ".join(before))
                ok = False
                continue
            bearer = client_token(server.port)[0] if server.name == "serve" else None
            fuzzer = Fuzzer(random.Random(f"{seed}:{server.name}"), server.name, bearer=bearer)
            result = fuzz(server, fuzzer, args.count, args.budget, args.timeout, args.grace, args.verbose)
            after = [] if result["died"] else good_requests(server)
            alive = server.alive()
            by_status = " ".join(f"{status}:{n}" for status, n in sorted(result["statuses"].items()))
            print(f"{result['sent']} requests in {result['seconds']:.1f} s "
                  f"({result['sent'] / max(result['seconds'], 0.001):.0f}/s); kinds: "
                  + " ".join(f"{kind}:{n}" for kind, n in sorted(result["kinds"].items())))
            print(f"answers by status: {by_status}")
            print("connections: " + " ".join(f"{end}:{n}" for end, n in sorted(result["ends"].items()))
                  + f"; timeouts: {len(result['timeouts'])}; unparsable answers: {len(result['garbled'])}")
            if result["slowest"]:
                seconds, case = result["slowest"][0]
                print(f"slowest answer: {seconds:.2f} s [{case.kind}]: {describe(case.data, 160)}")
            for what, case in result["failures"][:20]:
                print(f"  FAILURE {what} [{case.kind}]: {describe(case.data)}")
            if len(result["failures"]) > 20:
                print(f"  … and {len(result['failures']) - 20} more")
            for case in result["timeouts"][:10]:
                print(f"  timeout [{case.kind}]: {describe(case.data)}")
            for case, raw in result["garbled"][:5]:
                print(f"  unparsable answer {describe(raw, 200)} to [{case.kind}]: {describe(case.data)}")
            errors = server.error_lines()
            if errors:
                print(f"{server.name} logged {len(errors)} error lines, e.g.:")
                for line in collections.Counter(re.sub(r"^\S+ |hb\.request\.id=\S+ ", "", l) for l in errors).most_common(8):
                    print(f"  {line[1]}× {line[0][:300]}")
            target_ok = True
            if result["failures"]:
                target_ok = False
            if not alive:
                print(f"FAILED: {server.name} is not running any more; the end of its log:\n{server.tail()}")
                target_ok = False
            if after:
                print("FAILED: after the fuzz, " + "; ".join(after))
                target_ok = False
            if len(result["timeouts"]) > args.max_timeouts:
                print(f"FAILED: {len(result['timeouts'])} timeouts (at most {args.max_timeouts} tolerated)")
                target_ok = False
            if target_ok:
                print(f"{server.name}: OK — alive, no 5xx, health and good requests served after {result['sent']} hostile requests")
            ok = ok and target_ok
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"\nfuzz {'passed' if ok else 'FAILED'} (seed {seed})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
