// The steps of the KAAZING browser test (Tests/Browser/kaazing.py; with ?suite=split, runSplit's instead), each
// reported in the DOM as <li data-step data-result data-required>. Every connection goes through the client's own
// WebSocketFactory, with its BasicChallengeHandler and a loginHandler written as KAAZING's "Managing Log In
// Attempts" documents it (a counter; callback(null) once the tries are used up).
// The client 5.0.0-4 (and its sources, kaazing/javascript.client's WebSocketEmulatedProxy.js) reads an undeclared
// `connectionTimeot` (sic) when an emulated WebSocket's create is answered 201, so every emulated open throws a
// ReferenceError whatever the gateway. A page that needs the emulated transport declares it: the downstream's connect
// timeout in milliseconds. The client itself is unmodified.
window.connectionTimeot = 10000;

(function () {
  "use strict";
  var params = new URLSearchParams(location.search);
  var gateway = params.get("gateway");
  var results = document.getElementById("results");
  var status = document.getElementById("status");
  var STEP_TIMEOUT = 20000;

  function report(step, result, detail, required) {
    var item = document.createElement("li");
    item.dataset.step = step;
    item.dataset.result = result;
    item.dataset.required = required === false ? "false" : "true";
    item.textContent = detail;
    results.appendChild(item);
  }

  // Opens `path` with the client; answers Basic challenges with `credentials` up to `tries` times (then gives up as
  // KAAZING's samples do); sends one message when open and closes after its echo. Resolves with what happened.
  function attempt(path, options) {
    return new Promise(function (resolve) {
      var outcome = { opened: false, echoed: null, asked: 0, challenges: [], closed: false, protocol: null };
      var factory = new Kaazing.Gateway.WebSocketFactory();
      if (options.credentials) {
        var basic = new Kaazing.Gateway.BasicChallengeHandler();
        basic.loginHandler = function (callback) {
          outcome.asked += 1;
          if (outcome.asked > options.tries) { callback(null); return; }
          callback(new Kaazing.Gateway.PasswordAuthentication(options.credentials[0], options.credentials[1]));
        };
        var handle = basic.handle;
        basic.handle = function (request, callback) {
          outcome.challenges.push(request.authenticationScheme + (request.authenticationParameters ? " " + request.authenticationParameters : ""));
          handle.call(basic, request, callback);
        };
        factory.setChallengeHandler(basic);
      }
      var done = false;
      function finish() {
        if (done) { return; }
        done = true;
        clearTimeout(timer);
        resolve(outcome);
      }
      var timer = setTimeout(function () { outcome.timedOut = true; finish(); }, STEP_TIMEOUT);
      var message = "hello from KAAZING " + path;
      var ws;
      try {
        ws = factory.createWebSocket((options.via || gateway) + path, options.protocols || []);
      } catch (error) {
        outcome.exception = String(error);
        finish();
        return;
      }
      ws.onopen = function () {
        outcome.opened = true;
        outcome.protocol = ws.protocol;
        // `holdMs`: the WebSocket stays silent that long first (the idle-timeout step: only the gateway's PONGs and
        // the client's answers to its PINGs cross it meanwhile).
        if (options.holdMs) {
          setTimeout(function () { if (!outcome.closed) { outcome.heldOpen = true; ws.send(message); } }, options.holdMs);
        } else {
          ws.send(message);
        }
      };
      ws.onmessage = function (event) {
        outcome.echoed = event.data;
        outcome.echoedRight = event.data === message;
        ws.close();
      };
      ws.onerror = function () { outcome.error = true; };
      ws.onclose = function (event) {
        outcome.closed = true;
        outcome.code = event.code;
        outcome.reason = event.reason;
        finish();
      };
    });
  }

  // The messages of the splitting relay's sessions (?suite=split, kaazing.py's splitting-relay mode): a short text,
  // a text over 64 KiB, every byte value as a binary message (the client's ArrayBuffer send) and a text of every
  // code point 0-255 (C0 controls, NUL, CR, LF, DEL and Latin-1 included).
  function splitMessages(path) {
    var large = [];
    for (var index = 0; large.length < 96 * 1024; index += 1) { large.push(String.fromCharCode(33 + index % 94)); }
    var bytes = new Uint8Array(512);
    for (var value = 0; value < 256; value += 1) { bytes[value] = value; bytes[511 - value] = value; }
    var codePoints = [];
    for (var point = 0; point < 256; point += 1) { codePoints.push(String.fromCharCode(point)); }
    return [
      { name: "short text", data: "hello from KAAZING " + path + " through the splitting relay" },
      { name: "96 KiB text", data: large.join("") },
      { name: "512 bytes binary, every byte value", data: bytes.buffer },
      { name: "text of every code point 0-255", data: codePoints.join("") }
    ];
  }

  function sameMessage(sent, received) {
    if (typeof sent === "string") { return received === sent; }
    if (!(received instanceof ArrayBuffer) || received.byteLength !== sent.byteLength) { return false; }
    var left = new Uint8Array(sent);
    var right = new Uint8Array(received);
    for (var index = 0; index < left.length; index += 1) {
      if (left[index] !== right[index]) { return false; }
    }
    return true;
  }

  function describeReceived(received) {
    if (typeof received === "string") { return "text of " + received.length + " characters"; }
    if (received instanceof ArrayBuffer) { return "binary of " + received.byteLength + " bytes"; }
    return "a " + Object.prototype.toString.call(received);
  }

  // Opens `path` through the emulated transport with joe's password (asked at most 3 times), sends each message once
  // the previous one's echo came (binaryType arraybuffer), then closes. Resolves with what happened.
  function splitSession(url, messages) {
    return new Promise(function (resolve) {
      var outcome = { opened: false, asked: 0, challenges: [], echoes: [], closed: false };
      var factory = new Kaazing.Gateway.WebSocketFactory();
      var basic = new Kaazing.Gateway.BasicChallengeHandler();
      basic.loginHandler = function (callback) {
        outcome.asked += 1;
        if (outcome.asked > 3) { callback(null); return; }
        callback(new Kaazing.Gateway.PasswordAuthentication("joe", "welcome"));
      };
      var handle = basic.handle;
      basic.handle = function (request, callback) {
        outcome.challenges.push(request.authenticationScheme + (request.authenticationParameters ? " " + request.authenticationParameters : ""));
        handle.call(basic, request, callback);
      };
      factory.setChallengeHandler(basic);
      var done = false;
      function finish() {
        if (done) { return; }
        done = true;
        clearTimeout(timer);
        resolve(outcome);
      }
      var timer = setTimeout(function () { outcome.timedOut = true; finish(); }, STEP_TIMEOUT);
      var ws;
      try {
        ws = factory.createWebSocket(url, []);
        ws.binaryType = "arraybuffer";
      } catch (error) {
        outcome.exception = String(error);
        finish();
        return;
      }
      var next = 0;
      function sendNext() {
        try {
          if (next === messages.length) { ws.close(); return; }
          ws.send(messages[next].data);
        } catch (error) {
          outcome.exception = String(error && error.stack || error);
          ws.close();
        }
      }
      ws.onopen = function () {
        outcome.opened = true;
        sendNext();
      };
      ws.onmessage = function (event) {
        var sent = messages[next];
        if (!sent) { outcome.unexpected = describeReceived(event.data); return; }
        outcome.echoes.push({ message: sent.name, received: describeReceived(event.data), right: sameMessage(sent.data, event.data) });
        next += 1;
        sendNext();
      };
      ws.onerror = function () { outcome.error = true; };
      ws.onclose = function (event) {
        outcome.closed = true;
        outcome.code = event.code;
        finish();
      };
    });
  }

  async function runSplit() {
    if (!gateway) { throw new Error("no ?gateway=ws://host:port"); }
    var emulated = gateway.replace(/^ws:/, "javascript:wse:");
    var realms = [["split-basic-challenged-opened-echoed", "/basic/echo", 'Basic realm="Basic Realm"'],
                  ["split-application-basic-challenged-opened-echoed", "/appbasic/echo", 'Basic realm="Application Realm"']];
    for (var index = 0; index < realms.length; index += 1) {
      var step = realms[index][0];
      var messages = splitMessages(realms[index][1]);
      var outcome = await splitSession(emulated + realms[index][1], messages);
      expect(step, outcome, [
        ["opened", outcome.opened], ["asked once", outcome.asked === 1],
        ["challenged with " + realms[index][2], outcome.challenges.length === 1 && outcome.challenges[0].trim() === realms[index][2]],
        ["every message echoed as sent", outcome.echoes.length === messages.length && outcome.echoes.every(function (echo) { return echo.right; })],
        ["closed", outcome.closed && !outcome.timedOut]]);
    }
  }

  function describe(outcome) {
    return JSON.stringify(outcome);
  }

  function expect(step, outcome, conditions) {
    var failed = conditions.filter(function (condition) { return !condition[1]; }).map(function (condition) { return condition[0]; });
    if (failed.length === 0) {
      report(step, "pass", describe(outcome));
    } else {
      report(step, "fail", "not " + failed.join(", not ") + ": " + describe(outcome));
    }
  }

  async function run() {
    if (!gateway) { throw new Error("no ?gateway=ws://host:port"); }
    var open = await attempt("/open/echo", { protocols: ["chat"] });
    expect("open-service-echoes", open, [
      ["opened", open.opened], ["echoed", open.echoedRight === true],
      // The client keeps the CR of the inner 101's line (it splits the answer at LF), as against KAAZING's own gateway.
      ["with the protocol the upstream selected", typeof open.protocol === "string" && open.protocol.trim() === "chat"]]);

    var basic = await attempt("/basic/echo", { credentials: ["joe", "welcome"], tries: 3 });
    expect("basic-password-reaches-loginHandler-and-opens", basic, [
      ["opened", basic.opened], ["echoed", basic.echoedRight === true], ["asked once", basic.asked === 1],
      ["challenged with Basic", basic.challenges.length === 1 && basic.challenges[0].trim() === 'Basic realm="Basic Realm"']]);

    var wrong = await attempt("/basic/echo", { credentials: ["joe", "nope"], tries: 2 });
    expect("basic-wrong-password-refused-after-retry-limit", wrong, [
      ["not opened", !wrong.opened], ["asked until the limit", wrong.asked === 3], ["closed", wrong.closed && !wrong.timedOut]]);

    var application = await attempt("/appbasic/echo", { credentials: ["joe", "welcome"], tries: 3 });
    expect("application-basic-password-reaches-loginHandler-and-opens", application, [
      ["opened", application.opened], ["echoed", application.echoedRight === true], ["asked once", application.asked === 1],
      ["challenged with Application Basic", application.challenges.length === 1 && application.challenges[0].trim() === 'Basic realm="Application Realm"']]);

    var applicationWrong = await attempt("/appbasic/echo", { credentials: ["joe", "nope"], tries: 2 });
    expect("application-basic-wrong-password-refused-after-retry-limit", applicationWrong, [
      ["not opened", !applicationWrong.opened], ["asked until the limit", applicationWrong.asked === 3],
      ["closed", applicationWrong.closed && !applicationWrong.timedOut]]);

    var noRole = await attempt("/appbasic/echo", { credentials: ["ann", "secret"], tries: 3 });
    expect("user-without-the-role-fails", noRole, [
      ["not opened", !noRole.opened], ["asked once", noRole.asked === 1], ["closed", noRole.closed && !noRole.timedOut]]);

    // A service with a 1 s inactivity timeout: the client asks x-kaazing-idle-timeout and x-kaazing-ping-pong (it
    // always does), gets timeout=1000, and closes a connection that is silent that long; the gateway closes one whose
    // client does not answer its PINGs. Held silent 2.5 s, the WebSocket must still echo: the gateway's PONGs kept the
    // client's timer from firing, and the client's answers to the gateway's extended PINGs kept the gateway's.
    var idle = await attempt("/idle/echo", { holdMs: 2500 });
    expect("idle-timeout-negotiated-and-kept-alive", idle, [
      ["opened", idle.opened], ["still open after 2.5 s of silence", idle.heldOpen === true],
      ["echoed", idle.echoedRight === true], ["closed", idle.closed && !idle.timedOut]]);

    // The same through KAAZING's emulated transport (WebSocket over HTTP: its bridge frame, create, upstream and
    // downstream requests), forced by the javascript:wse scheme as an app whose WebSockets cannot get through would be.
    var emulated = gateway.replace(/^ws:/, "javascript:wse:");
    var emulatedOpen = await attempt("/open/echo", { protocols: ["chat"], via: emulated });
    expect("emulated-open-service-echoes", emulatedOpen, [
      ["opened", emulatedOpen.opened], ["echoed", emulatedOpen.echoedRight === true],
      ["with the protocol the upstream selected", emulatedOpen.protocol === "chat"], ["closed", emulatedOpen.closed && !emulatedOpen.timedOut]]);

    var emulatedBasic = await attempt("/basic/echo", { credentials: ["joe", "welcome"], tries: 3, via: emulated });
    expect("emulated-basic-password-reaches-loginHandler-and-opens", emulatedBasic, [
      ["opened", emulatedBasic.opened], ["echoed", emulatedBasic.echoedRight === true], ["asked once", emulatedBasic.asked === 1],
      ["challenged with Basic", emulatedBasic.challenges.length === 1 && emulatedBasic.challenges[0].trim() === 'Basic realm="Basic Realm"']]);

    var emulatedWrong = await attempt("/appbasic/echo", { credentials: ["joe", "nope"], tries: 2, via: emulated });
    expect("emulated-application-basic-wrong-password-refused-after-retry-limit", emulatedWrong, [
      ["not opened", !emulatedWrong.opened], ["asked until the limit", emulatedWrong.asked === 3],
      ["closed", emulatedWrong.closed && !emulatedWrong.timedOut]]);

    var emulatedNoRole = await attempt("/appbasic/echo", { credentials: ["ann", "secret"], tries: 3, via: emulated });
    expect("emulated-user-without-the-role-fails", emulatedNoRole, [
      ["not opened", !emulatedNoRole.opened], ["asked once", emulatedNoRole.asked === 1],
      ["closed", emulatedNoRole.closed && !emulatedNoRole.timedOut]]);
  }

  (params.get("suite") === "split" ? runSplit() : run()).then(function () {
    status.textContent = "done";
    document.body.dataset.done = "true";
  }, function (error) {
    status.textContent = "failed: " + error;
    document.body.dataset.fatal = String(error && error.stack || error);
    document.body.dataset.done = "true";
  });
})();
