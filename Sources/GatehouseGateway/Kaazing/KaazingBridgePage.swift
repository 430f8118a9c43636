import Crypto
import Foundation
import GatehouseProtocol
import HTTPTypes
import NIOCore

/// The page KAAZING's JavaScript client loads in a hidden frame at `/?.kr=xs` of the gateway's origin before its
/// emulated transport sends anything: the client's `XMLHttpBridge` posts each HTTP request to it (`"s"` messages:
/// method, URL, fields, body) and reads the answer from its messages (`"r"` the status and fields, `"p"` the body as
/// it comes, `"e"` an error), so that the requests are the gateway origin's own. Gatehouse's page speaks that
/// protocol (documented in the client's `XMLHttpBridge`), with its own rules:
///
/// - only a page of an origin a WebSocket service names in its `allowedOrigins` may use it (none when no service names
///   one): `Content-Security-Policy: frame-ancestors` says so to the browser, and the page ignores messages from any
///   other origin or from a window other than its parent;
/// - it sends the emulated transport's requests only (create, upstream, downstream), to its own origin, `GET` or `POST`, naming the parent's origin (`X-Origin`, which the
///   gateway checks against the service's ``ProtectedService/allowedOrigins``) and asking for answers in an envelope
///   (`X-Next-Protocol: httpxe/1.1`): a challenge reaches the client's challenge handler, never a password dialog;
/// - its script is the page's only one, pinned by its hash in the policy; the page loads nothing else.
enum KaazingBridgePage {
    /// The page's answer for the origins the WebSocket services name (`allowedOrigins`): only those may frame it and
    /// use it — none when no service names any (a page of any origin framed it and read any path of the gateway's
    /// origin before: issue 54, finding 5).
    static func answer(allowedOrigins: Set<String>) -> GatewayAnswer {
        // Normalised origins (``ProtectedService/origin(_:)``): letters, digits and `:/.-[]` only, nothing to escape.
        let allowed = "[" + allowedOrigins.sorted().map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"
        let code = script.replacingOccurrences(of: "ALLOWED_ORIGINS", with: allowed)
            .replacingOccurrences(of: "EMULATION_SEGMENTS", with: emulationSegments)
        let hash = Data(SHA256.hash(data: Data(code.utf8))).base64EncodedString()
        let ancestors = allowedOrigins.isEmpty ? "'none'" : allowedOrigins.sorted().joined(separator: " ")
        let page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Gatehouse</title></head><body><script>" + code
            + "</script></body></html>"
        return GatewayAnswer(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: "default-src 'none'; script-src 'sha256-\(hash)'; connect-src 'self'; frame-ancestors \(ancestors)",
                .init("X-Content-Type-Options")!: "nosniff",
                .cacheControl: "no-store",
            ],
            body: ByteBuffer(string: page))
    }

    /// Whether a request is for the page: `GET /?.kr=xs`.
    static func isRequested(_ target: RequestTarget, method: ClientRequestHead.Method) -> Bool {
        method == .get && target.segments.isEmpty && target.query == KaazingEmulation.bridgeQuery
    }

    /// The segments after `;e` the page sends requests for, as a JSON array: every encoding's create, upstream and
    /// downstream (``KaazingEmulation/createSegments``, ``KaazingEmulation/upstreamSegments``,
    /// ``KaazingEmulation/downstreamSegments``) — a create `ctm` is handed back `utm` and `dtm` URLs, which the page
    /// must pass too.
    private static let emulationSegments = "["
        + KaazingEmulation.createSegments.union(KaazingEmulation.upstreamSegments).union(KaazingEmulation.downstreamSegments)
            .sorted().map { "\"" + $0 + "\"" }.joined(separator: ",") + "]"

    /// The page's script; `ALLOWED_ORIGINS` is replaced by a JSON array of origins, `EMULATION_SEGMENTS` by
    /// ``emulationSegments``. It sends only the emulated transport's own requests (a create, an upstream or a
    /// downstream: `…/;e/<segment>…`), never another path of its origin.
    private static let script = #"""
(function () {
  "use strict";
  var allowed = ALLOWED_ORIGINS;
  var own = location.protocol + "//" + location.host;
  var exposed = ["Content-Type", "WWW-Authenticate", "X-WebSocket-Protocol", "X-WebSocket-Extensions", "X-WebSocket-Version", "X-Idle-Timeout"];
  var requests = {};
  function hex(value, width) { var text = value.toString(16); while (text.length < width) { text = "0" + text; } return text; }
  function post(origin, message) { parent.postMessage(message, origin); }
  function head(id, origin, status, statusText, fields) {
    var names = Object.keys(fields);
    var message = ["r", id, hex(names.length, 2)];
    names.forEach(function (name) { message.push(hex(name.length, 4), name, hex(fields[name].length, 4), fields[name]); });
    statusText = String(statusText).substring(0, 255);
    message.push(hex(status, 4), hex(statusText.length, 2), statusText);
    post(origin, message.join(""));
  }
  function body(id, origin, state, chunk) { post(origin, ["p", id, state, hex(chunk.length, 8), chunk].join("")); }
  function emulation(path) {
    var segments = path.split("/"), marker = segments.indexOf(";e");
    return marker > 0 && marker + 1 < segments.length && EMULATION_SEGMENTS.indexOf(segments[marker + 1]) >= 0;
  }
  function canonical(name) {
    for (var i = 0; i < exposed.length; i++) { if (exposed[i].toLowerCase() === name.toLowerCase()) { return exposed[i]; } }
    return null;
  }
  function unwrap(text) {
    var end = text.indexOf("\r\n\r\n");
    if (end < 0) { return null; }
    var lines = text.substring(0, end).split("\r\n");
    var start = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(lines[0]);
    if (!start) { return null; }
    var fields = {};
    for (var i = 1; i < lines.length; i++) {
      var colon = lines[i].indexOf(":");
      var name = colon > 0 ? canonical(lines[i].substring(0, colon)) : null;
      if (name) { fields[name] = lines[i].substring(colon + 1).trim(); }
    }
    return { status: parseInt(start[1], 10), statusText: start[2], fields: fields, body: text.substring(end + 4) };
  }
  function send(origin, message) {
    var position = 1;
    function take(count) { var part = message.substring(position, position + count); position += count; return part; }
    function size(width) { var value = parseInt(take(width), 16); if (isNaN(value) || value < 0) { throw new Error("malformed"); } return value; }
    var id, method, target, fields = [], payload;
    try {
      id = take(8);
      method = take(size(1));
      target = new URL(take(size(4)), own);
      var count = size(4);
      for (var i = 0; i < count; i++) { var name = take(size(4)); fields.push([name, take(size(4))]); }
      payload = take(size(8));
    } catch (e) { if (id) { post(origin, "e" + id); } return; }
    if (target.origin !== own || (method !== "GET" && method !== "POST") || !emulation(target.pathname)) { post(origin, "e" + id); return; }
    var xhr = new XMLHttpRequest();
    requests[id] = xhr;
    xhr.open(method, target.href, true);
    fields.forEach(function (field) { try { xhr.setRequestHeader(field[0], field[1]); } catch (e) {} });
    xhr.setRequestHeader("X-Origin", origin);
    xhr.setRequestHeader("X-Next-Protocol", "httpxe/1.1");
    var seen = 0, enveloped = false, headed = false;
    xhr.onreadystatechange = function () {
      if (xhr.readyState >= 2 && !headed && xhr.status !== 0) {
        headed = true;
        enveloped = (xhr.getResponseHeader("Content-Type") || "").indexOf("application/x-message-http") === 0;
        if (!enveloped) {
          var fields = {};
          exposed.forEach(function (name) { var value = xhr.getResponseHeader(name); if (value !== null) { fields[name] = value; } });
          head(id, origin, xhr.status, xhr.statusText, fields);
        }
      }
      if (xhr.readyState === 3 && headed && !enveloped && xhr.responseText.length > seen) {
        body(id, origin, 3, xhr.responseText.substring(seen));
        seen = xhr.responseText.length;
      }
      if (xhr.readyState === 4) {
        if (requests[id] !== xhr) { return; }
        delete requests[id];
        if (!headed) { post(origin, "e" + id); return; }
        if (enveloped) {
          var inner = unwrap(xhr.responseText);
          if (!inner) { post(origin, "e" + id); return; }
          head(id, origin, inner.status, inner.statusText, inner.fields);
          body(id, origin, 4, inner.body);
          return;
        }
        body(id, origin, 4, xhr.responseText.substring(seen));
      }
    };
    xhr.send(method === "POST" ? payload : null);
  }
  window.addEventListener("message", function (event) {
    if (event.source !== parent || typeof event.data !== "string") { return; }
    if (allowed.indexOf(event.origin) < 0) { return; }
    var message = event.data, type = message.charAt(0);
    if (type === "s") { send(event.origin, message); }
    else if (type === "a") {
      var xhr = requests[message.substring(1, 9)];
      if (xhr) { delete requests[message.substring(1, 9)]; xhr.abort(); }
    }
    else if (type === "I") { post(event.origin, "I"); }
  }, false);
  parent.postMessage("I", "*");
})();
"""#
}
