/*
 * Second factors through the unmodified MobileFirst 8.0 web SDK: handlers for UserLogin, TOTP and Passkey as an app
 * writes them (WL.Client.createSecurityCheckChallengeHandler), driven by WLAuthorizationManager.obtainAccessToken and
 * logout only. Each step writes <li data-step data-result data-required> into #results; document.body.dataset.done
 * is set at the end (Tests/Browser/run.py reads them).
 *
 *   totp-enrol          obtainAccessToken('transfers'): the login, then TOTP's enrolment (its QR code shown on the
 *                       page), answered with the code of its secret (HMAC-SHA-1 with WebCrypto); the success carries
 *                       10 recovery codes.
 *   totp-recovery-code  after a logout from TOTP, a recovery code instead of a code.
 *   passkey-register    obtainAccessToken('payments'): Passkey's registration options to navigator.credentials.create.
 *   passkey-sign-in     after a logout from Passkey: its authentication options to navigator.credentials.get.
 */
(function () {
    'use strict';

    var STEP_TIMEOUT_MS = 20000;
    var resultsList = document.getElementById('results');
    var statusLine = document.getElementById('status');
    var handlers = {};

    function json(value) { try { return JSON.stringify(value); } catch (e) { return String(value); } }

    function describe(value) {
        if (value instanceof Error) { return value.name + ': ' + value.message; }
        return typeof value === 'string' ? value : json(value);
    }

    function report(step, result, detail) {
        var item = document.createElement('li');
        item.dataset.step = step;
        item.dataset.result = result;
        item.dataset.required = 'true';
        item.textContent = detail;
        resultsList.appendChild(item);
        console.log('[browser-test] ' + result.toUpperCase() + ' ' + step + ': ' + detail);
    }

    function expect(condition, message) { if (!condition) { throw new Error(message); } }

    function settle(sdkPromise) {
        return new Promise(function (resolve, reject) { sdkPromise.then(resolve, reject); });
    }

    function withTimeout(promise, ms, what) {
        return Promise.race([promise, new Promise(function (_, reject) {
            setTimeout(function () { reject(new Error('timeout: ' + what + ' did not settle within ' + ms + ' ms')); }, ms);
        })]);
    }

    // ---------------------------------------------------------------- encodings

    function base64urlToBytes(text) {
        var base64 = text.replace(/-/g, '+').replace(/_/g, '/');
        while (base64.length % 4) { base64 += '='; }
        return Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
    }

    function bytesToBase64url(buffer) {
        var bytes = new Uint8Array(buffer), text = '';
        for (var i = 0; i < bytes.length; i++) { text += String.fromCharCode(bytes[i]); }
        return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    }

    function base32ToBytes(text) {
        var alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', bits = 0, value = 0, out = [];
        text.replace(/=+$/, '').toUpperCase().split('').forEach(function (c) {
            value = (value << 5) | alphabet.indexOf(c);
            bits += 5;
            if (bits >= 8) { out.push((value >>> (bits - 8)) & 255); bits -= 8; }
        });
        return new Uint8Array(out);
    }

    /** RFC 6238: the 6-digit HMAC-SHA-1 code of `secret` (base32) at the current 30-s step plus `stepOffset`. */
    async function totp(secret, stepOffset) {
        var key = await crypto.subtle.importKey('raw', base32ToBytes(secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
        var step = Math.floor(Date.now() / 30000) + (stepOffset || 0);
        var counter = new Uint8Array(8);
        for (var i = 7, n = step; i >= 0; i--, n = Math.floor(n / 256)) { counter[i] = n & 255; }
        var mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, counter));
        var offset = mac[19] & 15;
        var binary = ((mac[offset] & 127) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
        return String(binary % 1000000).padStart(6, '0');
    }

    // ---------------------------------------------------------------- handlers

    function makeHandler(securityCheck) {
        // This SDK build may name it createWLChallengeHandler, and call processSuccess (as test.js notes).
        var create = WL.Client.createSecurityCheckChallengeHandler || WL.Client.createWLChallengeHandler;
        var handler = create.call(WL.Client, securityCheck);
        var cancel = function () { if (typeof handler.cancel === 'function') { handler.cancel(); } else { handler.submitFailure(); } };
        var rec = { events: [], answer: null };
        handler.handleChallenge = function (challenge) {
            rec.events.push({ type: 'challenge', data: challenge });
            // Answered once the handler has returned, as a user would (an asynchronous answer: WebCrypto, WebAuthn).
            Promise.resolve().then(function () { return rec.answer ? rec.answer(challenge) : undefined; })
                .then(function (answer) {
                    if (answer === undefined) { cancel(); } else { handler.submitChallengeAnswer(answer); }
                }, function (error) {
                    rec.events.push({ type: 'error', data: describe(error) });
                    cancel();
                });
        };
        handler.handleSuccess = handler.processSuccess = function (data) { rec.events.push({ type: 'success', data: data }); };
        handler.handleFailure = function (data) { rec.events.push({ type: 'failure', data: data }); };
        handlers[securityCheck] = rec;
        return rec;
    }

    function eventsOf(check, type) {
        return handlers[check].events.filter(function (event) { return event.type === type; });
    }

    function trace() {
        return Object.keys(handlers).map(function (check) {
            return handlers[check].events.map(function (event) {
                return check + '.' + event.type + ' ' + json(event.data).slice(0, 300);
            }).join('; ');
        }).filter(Boolean).join('; ');
    }

    // ---------------------------------------------------------------- steps

    var enrolledSecret = null, recoveryCodes = [];

    var steps = [
        {
            name: 'totp-enrol',
            run: async function () {
                handlers.UserLogin.answer = function () { return { username: 'john', password: 'demo' }; };
                handlers.TOTP.answer = async function (challenge) {
                    var enrolment = challenge.enrolment || {};
                    expect(enrolment.secret && /^<svg /.test(enrolment.qrCodeSVG || ''), 'no enrolment with a QR code: ' + json(challenge));
                    document.getElementById('qr').innerHTML = enrolment.qrCodeSVG;   // what the user scans
                    enrolledSecret = enrolment.secret;
                    return { code: await totp(enrolment.secret, 0) };
                };
                var token = await settle(WLAuthorizationManager.obtainAccessToken('transfers'));
                expect(token && token.value, 'no token: ' + json(token));
                var success = eventsOf('TOTP', 'success')[0];
                recoveryCodes = (success && success.data && success.data.recoveryCodes) || [];
                expect(recoveryCodes.length === 10, 'expected 10 recovery codes in the success: ' + json(success));
                expect(document.querySelector('#qr svg path'), 'the QR code was not drawn');
                return 'UserLogin then TOTP enrolment (QR code drawn, ' + document.querySelector('#qr svg').getAttribute('viewBox') +
                    '); code of the secret accepted; 10 recovery codes; token scope "' + token.scope + '"';
            }
        },
        {
            name: 'totp-recovery-code',
            run: async function () {
                await settle(WLAuthorizationManager.logout('TOTP'));
                handlers.TOTP.answer = function (challenge) {
                    expect(!challenge.enrolment && challenge.recoveryCodesLeft === 10, 'not an enrolled user\'s challenge: ' + json(challenge));
                    return { recoveryCode: recoveryCodes[0] };
                };
                var token = await settle(WLAuthorizationManager.obtainAccessToken('transfers'));
                expect(token && token.value, 'no token: ' + json(token));
                expect(eventsOf('UserLogin', 'challenge').length === 0, 'the login was asked again');
                return 'challenged again (10 recovery codes left), a recovery code accepted, token scope "' + token.scope + '"';
            }
        },
        {
            name: 'passkey-register',
            run: async function () {
                handlers.Passkey.answer = async function (challenge) {
                    var options = challenge.registration;
                    expect(options, 'not a registration: ' + json(challenge));
                    var publicKey = Object.assign({}, options, {
                        challenge: base64urlToBytes(options.challenge),
                        user: Object.assign({}, options.user, { id: base64urlToBytes(options.user.id) })
                    });
                    var credential = await navigator.credentials.create({ publicKey: publicKey });
                    return { credential: { id: credential.id, rawId: bytesToBase64url(credential.rawId), type: credential.type, response: {
                        clientDataJSON: bytesToBase64url(credential.response.clientDataJSON),
                        attestationObject: bytesToBase64url(credential.response.attestationObject) } } };
                };
                var token = await settle(WLAuthorizationManager.obtainAccessToken('payments'));
                expect(token && token.value, 'no token: ' + json(token));
                return 'registration options → navigator.credentials.create (virtual authenticator) → accepted; token scope "' + token.scope + '"';
            }
        },
        {
            name: 'passkey-sign-in',
            run: async function () {
                await settle(WLAuthorizationManager.logout('Passkey'));
                handlers.Passkey.answer = async function (challenge) {
                    var options = challenge.authentication;
                    expect(options, 'not an authentication: ' + json(challenge));
                    var publicKey = Object.assign({}, options, {
                        challenge: base64urlToBytes(options.challenge),
                        allowCredentials: options.allowCredentials.map(function (c) { return { type: c.type, id: base64urlToBytes(c.id) }; })
                    });
                    var assertion = await navigator.credentials.get({ publicKey: publicKey });
                    return { credential: { id: assertion.id, type: assertion.type, response: {
                        clientDataJSON: bytesToBase64url(assertion.response.clientDataJSON),
                        authenticatorData: bytesToBase64url(assertion.response.authenticatorData),
                        signature: bytesToBase64url(assertion.response.signature) } } };
                };
                var token = await settle(WLAuthorizationManager.obtainAccessToken('payments'));
                expect(token && token.value, 'no token: ' + json(token));
                return 'authentication options (the registered credential allowed) → navigator.credentials.get → accepted; token scope "' + token.scope + '"';
            }
        }
    ];

    async function main() {
        ['UserLogin', 'TOTP', 'Passkey'].forEach(makeHandler);
        await withTimeout(settle(WL.Client.init({ mfpContextRoot: '/mfp', applicationId: 'com.sample.web' })), 20000, 'WL.Client.init');
        for (var i = 0; i < steps.length; i++) {
            statusLine.textContent = 'running ' + steps[i].name;
            Object.keys(handlers).forEach(function (check) { handlers[check].events = []; handlers[check].answer = null; });
            try {
                report(steps[i].name, 'pass', await withTimeout(steps[i].run(), STEP_TIMEOUT_MS, steps[i].name));
            } catch (error) {
                report(steps[i].name, 'fail', describe(error) + ' [handlers: ' + (trace() || 'none called') + ']');
            }
        }
    }

    main().then(function () { statusLine.textContent = 'done'; document.body.dataset.done = 'true'; },
                function (error) { document.body.dataset.fatal = describe(error); document.body.dataset.done = 'true'; });
}());
