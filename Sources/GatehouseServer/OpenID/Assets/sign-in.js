// Gatehouse's hosted sign-in page (OpenID Connect): runs the security checks the server asks for, one round at a time.
// The page contract (docs/openid-connect.md):
//   POST /oidc/sign-in {"request", "csrf", "answers": {check: answer}} answers
//   {"challenges": {check: {"kind", "challenge"}}} | {"failures": {check: {"kind", "failure"}}} | {"redirect", "recoveryCodes"}.
// Built-in renderers by kind: UserLogin (and any user-authentication check), TOTP, Passkey; any other check is
// rendered from its challenge's "message" and "fields" ([{"name", "label", "type"}]) and answered with those fields.
// No inline script, no eval, no innerHTML of server text: the page's CSP allows only this file.
"use strict";

(function () {
  const form = document.getElementById("gatehouse-sign-in");
  if (!form) { return; }
  const strings = JSON.parse(form.dataset.strings || "{}");
  const errorBox = document.getElementById("gatehouse-error");
  const fieldsBox = document.getElementById("gatehouse-fields");
  const submit = document.getElementById("gatehouse-submit");
  let current = {};   // check name -> {kind, challenge}

  function text(key, values) {
    let value = strings[key] || key;
    for (const name in (values || {})) { value = value.split("{" + name + "}").join(String(values[name])); }
    return value;
  }

  function element(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const name in (attributes || {})) {
      if (name === "text") { node.textContent = attributes[name]; } else { node.setAttribute(name, attributes[name]); }
    }
    for (const child of (children || [])) { node.appendChild(child); }
    return node;
  }

  function field(id, label, attributes) {
    const input = element("input", Object.assign({ id: id }, attributes));
    return [element("label", { for: id, text: label }), input];
  }

  function showError(message) {
    errorBox.textContent = message || "";
    if (message) { errorBox.focus(); }
  }

  function attemptsMessage(challenge) {
    const parts = [];
    if (challenge && challenge.errorMsg) { parts.push(challenge.errorMsg); }
    if (challenge && challenge.errorMsg && typeof challenge.remainingAttempts === "number") {
      parts.push(text("remainingAttempts", { n: challenge.remainingAttempts }));
    }
    return parts.join(" ");
  }

  const base64url = {
    decode(value) {
      const padded = value.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((value.length + 3) % 4);
      return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    },
    encode(buffer) {
      let binary = "";
      for (const byte of new Uint8Array(buffer)) { binary += String.fromCharCode(byte); }
      return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    },
  };

  const renderers = {
    UserLogin(name, challenge) {
      const hint = form.dataset.loginHint || "";
      return {
        nodes: [
          ...field("gatehouse-username", text("username"), { name: "username", type: "text", autocomplete: "username", required: "", value: hint, autocapitalize: "none", spellcheck: "false" }),
          ...field("gatehouse-password", text("password"), { name: "password", type: "password", autocomplete: "current-password", required: "" }),
          element("label", { class: "gatehouse-inline" }, [element("input", { type: "checkbox", name: "rememberMe" }), document.createTextNode(text("rememberMe"))]),
        ],
        answer(fieldset) {
          return {
            username: fieldset.querySelector("[name=username]").value,
            password: fieldset.querySelector("[name=password]").value,
            rememberMe: fieldset.querySelector("[name=rememberMe]").checked,
          };
        },
        focus: hint ? "gatehouse-password" : "gatehouse-username",
      };
    },
    TOTP(name, challenge) {
      const nodes = [];
      const enrolment = challenge && challenge.enrolment;
      if (enrolment) {
        nodes.push(element("p", { class: "gatehouse-hint", text: text("totpEnrol") }));
        if (enrolment.qrCodeSVG) {
          nodes.push(element("img", { class: "gatehouse-qr", alt: text("totpQR"), src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(enrolment.qrCodeSVG) }));
        }
        nodes.push(element("p", {}, [document.createTextNode(text("totpKey") + ": "), element("code", { id: "gatehouse-totp-secret", class: "gatehouse-secret", text: enrolment.secret })]));
      }
      nodes.push(...field("gatehouse-totp-code", text("totpCode"), { name: "code", type: "text", inputmode: "numeric", autocomplete: "one-time-code", pattern: "[0-9]*", maxlength: "8" }));
      if (!enrolment) {
        nodes.push(...field("gatehouse-recovery-code", text("recoveryCode"), { name: "recoveryCode", type: "text", autocomplete: "off", autocapitalize: "characters" }));
      }
      return {
        nodes,
        answer(fieldset) {
          const code = fieldset.querySelector("[name=code]").value.trim();
          const recovery = fieldset.querySelector("[name=recoveryCode]");
          if (!code && recovery && recovery.value.trim()) { return { recoveryCode: recovery.value.trim() }; }
          return { code };
        },
        focus: "gatehouse-totp-code",
      };
    },
    Passkey(name, challenge) {
      const registration = challenge && challenge.registration;
      const button = element("button", { type: "button", id: "gatehouse-passkey", text: text(registration ? "passkeyCreate" : "passkeyUse") });
      button.addEventListener("click", () => passkey(name, challenge));
      return { nodes: [button], answer: null, focus: "gatehouse-passkey" };
    },
    custom(name, challenge) {
      const nodes = [];
      if (challenge && typeof challenge.message === "string") { nodes.push(element("p", { text: challenge.message })); }
      const fields = (challenge && Array.isArray(challenge.fields)) ? challenge.fields : [];
      fields.forEach((spec, index) => {
        const type = ["text", "password", "number", "email"].includes(spec.type) ? spec.type : "text";
        nodes.push(...field("gatehouse-field-" + index, String(spec.label || spec.name), { name: String(spec.name), type }));
      });
      return {
        nodes,
        answer(fieldset) {
          const answer = {};
          for (const spec of fields) {
            const input = fieldset.querySelector("[name=\"" + CSS.escape(String(spec.name)) + "\"]");
            answer[spec.name] = spec.type === "number" ? Number(input.value) : input.value;
          }
          return answer;
        },
        focus: fields.length ? "gatehouse-field-0" : null,
      };
    },
  };

  async function passkey(name, challenge) {
    if (!window.PublicKeyCredential || !navigator.credentials) { showError(text("passkeyUnavailable")); return; }
    try {
      let credential;
      if (challenge.registration) {
        const options = structuredClone(challenge.registration);
        options.challenge = base64url.decode(options.challenge);
        options.user.id = base64url.decode(options.user.id);
        (options.excludeCredentials || []).forEach((c) => { c.id = base64url.decode(c.id); });
        const created = await navigator.credentials.create({ publicKey: options });
        credential = { id: created.id, type: created.type, response: {
          clientDataJSON: base64url.encode(created.response.clientDataJSON),
          attestationObject: base64url.encode(created.response.attestationObject) } };
      } else {
        const options = structuredClone(challenge.authentication);
        options.challenge = base64url.decode(options.challenge);
        (options.allowCredentials || []).forEach((c) => { c.id = base64url.decode(c.id); });
        const got = await navigator.credentials.get({ publicKey: options });
        credential = { id: got.id, type: got.type, response: {
          clientDataJSON: base64url.encode(got.response.clientDataJSON),
          authenticatorData: base64url.encode(got.response.authenticatorData),
          signature: base64url.encode(got.response.signature),
          userHandle: got.response.userHandle ? base64url.encode(got.response.userHandle) : null } };
      }
      await round({ [name]: { credential } });
    } catch (error) {
      showError(String(error && error.message || error));
    }
  }

  const order = { UserLogin: 0, TOTP: 1, Passkey: 2 };

  function render(challenges) {
    current = challenges;
    fieldsBox.replaceChildren();
    let focus = null;
    let needsSubmit = false;
    const messages = [];
    const names = Object.keys(challenges).sort((a, b) => ((order[challenges[a].kind] ?? 9) - (order[challenges[b].kind] ?? 9)) || a.localeCompare(b));
    for (const name of names) {
      const entry = challenges[name];
      const renderer = renderers[entry.kind] || (entry.challenge && "remainingAttempts" in (entry.challenge || {}) && entry.kind.endsWith("Login") ? renderers.UserLogin : renderers.custom);
      const view = renderer(name, entry.challenge || {});
      const legendNode = element("legend", { text: legend(entry.kind, name) });
      if (renderer === renderers.UserLogin) { legendNode.className = "gatehouse-visually-hidden"; }
      const fieldset = element("fieldset", { "data-check": name }, [legendNode, ...view.nodes]);
      fieldset.gatehouseAnswer = view.answer;
      fieldsBox.appendChild(fieldset);
      if (view.answer) { needsSubmit = true; }
      if (!focus && view.focus) { focus = view.focus; }
      const message = attemptsMessage(entry.challenge);
      if (message) { messages.push(message); }
    }
    submit.hidden = !needsSubmit;
    submit.textContent = names.some((n) => challenges[n].kind === "UserLogin") ? text("submit") : text("next");
    showError(messages.join(" "));
    if (focus && !messages.length) { const node = document.getElementById(focus); if (node) { node.focus(); } }
  }

  function legend(kind, name) {
    if (kind === "TOTP") { return text("totpLegend"); }
    if (kind === "Passkey") { return text("passkeyLegend"); }
    if (kind === "UserLogin") { return text("title"); }
    return name;
  }

  function answers() {
    const collected = {};
    for (const fieldset of fieldsBox.querySelectorAll("fieldset[data-check]")) {
      if (fieldset.gatehouseAnswer) { collected[fieldset.dataset.check] = fieldset.gatehouseAnswer(fieldset); }
    }
    return collected;
  }

  function done(result) {
    const codes = result.recoveryCodes || [];
    if (!codes.length) { window.location.assign(result.redirect); return; }
    fieldsBox.replaceChildren(
      element("h2", { text: text("recoveryTitle") }),
      element("p", { class: "gatehouse-hint", text: text("recoveryHint") }),
      element("ol", { id: "gatehouse-recovery-codes" }, codes.map((code) => element("li", { text: code }))),
      element("a", { id: "gatehouse-continue", class: "gatehouse-button", href: result.redirect, text: text("next") }));
    submit.hidden = true;
    showError("");
    document.getElementById("gatehouse-continue").focus();
  }

  async function round(answerSet) {
    submit.disabled = true;
    form.setAttribute("aria-busy", "true");
    try {
      const response = await fetch("/oidc/sign-in", {
        method: "POST", credentials: "same-origin", cache: "no-store",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify({ request: form.dataset.request, csrf: form.dataset.csrf, answers: answerSet }),
      });
      const result = await response.json().catch(() => ({}));
      if (!response.ok) { showError(result.error_description || text("network")); return; }
      if (result.redirect) { done(result); return; }
      if (result.failures) {
        fieldsBox.replaceChildren();
        submit.hidden = true;
        const failure = Object.values(result.failures)[0] || {};
        const detail = failure.failure || {};
        showError(typeof detail === "string" ? detail : (detail.errorMsg || detail.failure || text("blocked")));
        return;
      }
      render(result.challenges || {});
    } catch (error) {
      showError(text("network"));
    } finally {
      submit.disabled = false;
      form.removeAttribute("aria-busy");
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    round(answers());
  });
  round({});
})();
