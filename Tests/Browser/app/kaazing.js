// The steps of the KAAZING browser test (Tests/Browser/kaazing.py), each reported in the DOM as
// <li data-step data-result data-required>. Every connection goes through the client's own WebSocketFactory, with
// its BasicChallengeHandler and a loginHandler written as KAAZING's "Managing Log In Attempts" documents it (a
// counter; callback(null) once the tries are used up).
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
        ws.send(message);
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

  run().then(function () {
    status.textContent = "done";
    document.body.dataset.done = "true";
  }, function (error) {
    status.textContent = "failed: " + error;
    document.body.dataset.fatal = String(error && error.stack || error);
    document.body.dataset.done = "true";
  });
})();
