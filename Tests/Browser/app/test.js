/*
 * The app under test: drives the unmodified MobileFirst 8.0 web SDK (WL.Client, WLAuthorizationManager,
 * WL.ResourceRequest and the SDK's own challenge handlers) against Gatehouse, through public API only.
 *
 * Every step writes <li data-step="name" data-result="pass|fail|info" data-required="true|false">detail</li>
 * into #results; at the end (or on a fatal error, with data-fatal) the page sets document.body.dataset.done.
 * Tests/Browser/run.py reads them.
 *
 * The SDK's deferreds do not chain (then returns nothing), so each one is wrapped in a Promise made here.
 *
 * Query parameters (all optional):
 *   server=http://host:port   Gatehouse's origin when the page is served from another origin (cross-origin mode):
 *                             the SDK is initialised with mfpContextRoot '<server>/mfp', an absolute URL, so every
 *                             SDK call is a CORS request. Without it the context root is '/mfp' (same origin).
 *   mode=forbidden            The page's origin is NOT allowed by the policy: run only one obtainAccessToken and
 *                             report step 'foreign-origin-refused' as passed when no token is obtained ('blocked').
 *                             This SDK build never settles obtainAccessToken when registration fails, so a timeout
 *                             counts as blocked; a token, or any security-check challenge (which needs a
 *                             registered client), is a failure.
 *   mode=notify|disabled|enabled|builtin
 *                             Application management (Tests/Browser/app_management.py sets com.sample.web's status
 *                             through the admin API between the pages): the page's own wl_remoteDisableRealm handler
 *                             (as MobileFirst's "Customizing Remote Disable" has apps do) sees the NOTIFY challenge
 *                             once, the disabled failure with its download link, then nothing once enabled again;
 *                             builtin runs with the SDK's built-in handler only (reported, not required).
 *   message=…, link=…         The notify or disabled message, and the download link, the page must be shown.
 *   mode=device-login|device-lost|device-active
 *                             Device management (the same script marks a device LOST through the admin API): john
 *                             logs in on a second device (profile); the lost device's balance request fails with the
 *                             gatehouse_deviceAccess failure {status: LOST} and no PIN asked; the other device reads it.
 */
(function () {
    'use strict';

    var STEP_TIMEOUT_MS = 20000;
    var INIT_TIMEOUT_MS = 20000;
    var ANSWER_DELAY_MS = 30;          // answer like a user would: after handleChallenge has returned
    var BALANCE_URL = '/adapters/ResourceAdapter/balance';   // resolved by the SDK to /mfp/api/adapters/...
    var EXPECTED_BALANCE = '19938.80';
    var FORBIDDEN_TIMEOUT_MS = 8000;   // how long the foreign-origin page waits for a token that must not come

    var query = new URLSearchParams(window.location.search);
    var serverOrigin = (query.get('server') || '').replace(/\/+$/, '');
    var pageMode = query.get('mode') || 'full';
    var CONTEXT_ROOT = serverOrigin ? serverOrigin + '/mfp' : '/mfp';

    var resultsList = document.getElementById('results');
    var statusLine = document.getElementById('status');
    var pageErrors = [];

    window.addEventListener('error', function (event) {
        pageErrors.push('error: ' + (event.message || String(event.error)));
    });
    window.addEventListener('unhandledrejection', function (event) {
        pageErrors.push('unhandled rejection: ' + describe(event.reason));
    });

    // ---------------------------------------------------------------- helpers

    function describe(value) {
        if (value === null || value === undefined) {
            return String(value);
        }
        if (typeof value === 'string') {
            return value;
        }
        if (value instanceof Error) {
            return value.name + ': ' + value.message;
        }
        var picked = {};
        var any = false;
        ['status', 'errorCode', 'errorMsg', 'responseText', 'responseJSON'].forEach(function (key) {
            if (value[key] !== undefined && value[key] !== null && value[key] !== '') {
                picked[key] = value[key];
                any = true;
            }
        });
        if (picked.responseJSON && picked.responseText) {
            delete picked.responseJSON;       // the same thing twice
        }
        try {
            var text = JSON.stringify(any ? picked : value);
            return text.length > 700 ? text.slice(0, 700) + '…' : text;
        } catch (e) {
            return String(value);
        }
    }

    function json(value) {
        try {
            return JSON.stringify(value);
        } catch (e) {
            return String(value);
        }
    }

    /** A Promise for one of the SDK's deferreds/promises (whose then returns nothing). */
    function settle(sdkPromise) {
        return new Promise(function (resolve, reject) {
            sdkPromise.then(function (value) { resolve(value); }, function (error) { reject(error); });
        });
    }

    function withTimeout(promise, ms, what) {
        return new Promise(function (resolve, reject) {
            var timer = setTimeout(function () {
                reject(new Error('timeout: ' + what + ' did not settle within ' + ms + ' ms'));
            }, ms);
            promise.then(function (value) { clearTimeout(timer); resolve(value); },
                         function (error) { clearTimeout(timer); reject(error); });
        });
    }

    function sleep(ms) {
        return new Promise(function (resolve) { setTimeout(resolve, ms); });
    }

    function report(step, result, detail, required) {
        var item = document.createElement('li');
        item.dataset.step = step;
        item.dataset.result = result;
        item.dataset.required = required === false ? 'false' : 'true';
        item.textContent = detail;
        resultsList.appendChild(item);
        console.log('[browser-test] ' + result.toUpperCase() + ' ' + step + ': ' + detail);
    }

    /** Thrown by a step for a failed expectation (not an SDK failure). */
    function Expectation(message) {
        this.message = message;
    }

    function expect(condition, message) {
        if (!condition) {
            throw new Expectation(message);
        }
    }

    // ---------------------------------------------------------------- challenge handlers

    // One handler per security check, created once, as a MobileFirst app does. What a handler answers is set
    // per step (rec.answer); a challenge arriving when no answer is planned is cancelled.
    var apiFlavour = typeof WL.Client.createSecurityCheckChallengeHandler === 'function'
        ? 'createSecurityCheckChallengeHandler' : 'createWLChallengeHandler';
    var handlers = {};

    function makeHandler(securityCheck) {
        var handler = WL.Client[apiFlavour](securityCheck);
        var rec = { name: securityCheck, handler: handler, events: [], answer: null };

        handler.handleChallenge = function (challenge) {
            traced(rec, { type: 'challenge', data: challenge });
            console.log('[browser-test] ' + securityCheck + '.handleChallenge ' + json(challenge));
            var answer;
            try {
                answer = rec.answer ? rec.answer(challenge, rec) : undefined;
            } catch (e) {
                console.log('[browser-test] ' + securityCheck + ': cannot answer: ' + describe(e));
                answer = undefined;
            }
            setTimeout(function () {
                if (answer === undefined) {
                    console.log('[browser-test] ' + securityCheck + ': cancelling the unexpected challenge');
                    traced(rec, { type: 'cancel' });
                    if (typeof handler.cancel === 'function') {
                        handler.cancel();
                    } else {
                        handler.submitFailure();          // this SDK version's cancel
                    }
                } else {
                    traced(rec, { type: 'answer', data: answer });
                    handler.submitChallengeAnswer(answer);
                }
            }, ANSWER_DELAY_MS);
        };

        function onSuccess(identity) {
            traced(rec, { type: 'success', data: identity });
            console.log('[browser-test] ' + securityCheck + '.handleSuccess ' + json(identity));
        }
        if (apiFlavour === 'createSecurityCheckChallengeHandler') {
            handler.handleSuccess = onSuccess;
        } else {
            // The SDK 8.0.2016051608 calls processSuccess on a WL (security check) challenge handler.
            handler.handleSuccess = onSuccess;
            handler.processSuccess = onSuccess;
        }

        handler.handleFailure = function (failure) {
            traced(rec, { type: 'failure', data: failure });
            console.log('[browser-test] ' + securityCheck + '.handleFailure ' + json(failure));
        };

        handlers[securityCheck] = rec;
        return rec;
    }

    // Everything the handlers saw during the current step, for the failure report.
    var stepTrace = [];

    function traced(rec, event) {
        rec.events.push(event);
        stepTrace.push(rec.name + '.' + event.type + (event.data === undefined ? '' : ' ' + json(event.data)));
    }

    function eventsOf(rec, type) {
        return rec.events.filter(function (event) { return event.type === type; });
    }

    function quiesce() {
        stepTrace = [];
        Object.keys(handlers).forEach(function (name) {
            handlers[name].answer = null;
            handlers[name].events = [];
        });
    }

    // ---------------------------------------------------------------- SDK calls

    function obtainAccessToken(scope) {
        return settle(WLAuthorizationManager.obtainAccessToken(scope));
    }

    function logout(securityCheck) {
        return settle(WLAuthorizationManager.logout(securityCheck));
    }

    function getBalance() {
        var request = new WL.ResourceRequest(BALANCE_URL, WL.ResourceRequest.GET);
        return settle(request.send());
    }

    function tokenSummary(token) {
        if (!token) {
            return 'no token';
        }
        var value = String(token.value || '');
        return 'token ' + value.slice(0, 12) + '… (' + value.length + ' chars), scope "' + token.scope + '"';
    }

    function parseCaptcha(text) {
        var match = /^\s*(-?\d+)\s*\+\s*(-?\d+)\s*$/.exec(String(text));
        if (!match) {
            throw new Error('captcha is not "X + Y": ' + json(text));
        }
        return parseInt(match[1], 10) + parseInt(match[2], 10);
    }

    // ---------------------------------------------------------------- steps

    var lastCaptchaToken = null;

    var steps = [
        {
            name: 'captcha-wrong-then-right',
            run: async function () {
                var rec = handlers.SimpleCaptcha;
                rec.answer = function (challenge) {
                    var sum = parseCaptcha(challenge.captcha);
                    var first = eventsOf(rec, 'challenge').length === 1;
                    return { answer: String(first ? sum + 1 : sum) };
                };
                var token = await obtainAccessToken('SimpleCaptcha');
                var challenges = eventsOf(rec, 'challenge');
                var seen = challenges.map(function (event) { return json(event.data); }).join(', ');
                expect(challenges.length === 2, 'expected 2 challenges (wrong answer, then right), saw ' +
                    challenges.length + ': ' + seen);
                expect(challenges[1].data && challenges[1].data.message === 'Wrong answer, try again',
                    'second challenge should say "Wrong answer, try again": ' + json(challenges[1].data));
                expect(token && token.value, 'obtainAccessToken succeeded without a token: ' + json(token));
                lastCaptchaToken = token;
                return 'challenges ' + seen + '; ' + tokenSummary(token) + '; handleSuccess calls: ' +
                    eventsOf(rec, 'success').length;
            }
        },
        {
            name: 'token-again-no-challenge',
            run: async function () {
                var rec = handlers.SimpleCaptcha;
                var token = await obtainAccessToken('SimpleCaptcha');
                var challenges = eventsOf(rec, 'challenge');
                expect(challenges.length === 0, 'expected no challenge, saw ' + challenges.length + ': ' +
                    challenges.map(function (event) { return json(event.data); }).join(', '));
                expect(token && token.value, 'obtainAccessToken succeeded without a token: ' + json(token));
                var same = lastCaptchaToken && lastCaptchaToken.value === token.value;
                return tokenSummary(token) + (same ? ' (the cached one)' : ' (a new one)');
            }
        },
        {
            name: 'pin-resource-request',
            run: async function () {
                var rec = handlers.PinCodeAttempts;
                rec.answer = function () { return { pin: '1234' }; };
                var response = await getBalance();
                var challenges = eventsOf(rec, 'challenge');
                expect(challenges.length >= 1, 'the PinCodeAttempts handler was not challenged');
                expect(response.status === 200, 'status ' + response.status + ', expected 200: ' + describe(response));
                expect(String(response.responseText).trim() === EXPECTED_BALANCE,
                    'body ' + json(response.responseText) + ', expected ' + EXPECTED_BALANCE);
                return 'challenges ' + challenges.map(function (event) { return json(event.data); }).join(', ') +
                    '; answered 1234; status 200, body ' + response.responseText;
            }
        },
        {
            name: 'userlogin',
            run: async function () {
                var rec = handlers.UserLogin;
                rec.answer = function () { return { username: 'john', password: 'demo' }; };
                var token = await obtainAccessToken('UserLogin');
                var challenges = eventsOf(rec, 'challenge');
                var successes = eventsOf(rec, 'success');
                expect(challenges.length === 1, 'expected 1 UserLogin challenge, saw ' + challenges.length + ': ' +
                    challenges.map(function (event) { return json(event.data); }).join(', '));
                expect(token && token.value, 'obtainAccessToken succeeded without a token: ' + json(token));
                expect(successes.length >= 1, 'handleSuccess was not called (the SDK calls it for the check in the ' +
                    'preauthorize answer\'s "successes")');
                return 'challenge ' + json(challenges[0].data) + '; answered john/demo; handleSuccess ' +
                    json(successes[0].data) + '; ' + tokenSummary(token);
            }
        },
        {
            name: 'logout-then-challenged',
            run: async function () {
                var rec = handlers.PinCodeAttempts;
                rec.answer = function () { return { pin: '1234' }; };
                await logout('PinCodeAttempts');
                var response = await getBalance();
                var challenges = eventsOf(rec, 'challenge');
                expect(challenges.length >= 1, 'not challenged again after logout (status ' + response.status + ')');
                expect(response.status === 200, 'status ' + response.status + ', expected 200: ' + describe(response));
                expect(String(response.responseText).trim() === EXPECTED_BALANCE,
                    'body ' + json(response.responseText) + ', expected ' + EXPECTED_BALANCE);
                return 'logout succeeded; challenged again ' +
                    challenges.map(function (event) { return json(event.data); }).join(', ') +
                    '; answered 1234; status 200, body ' + response.responseText;
            }
        },
        {
            name: 'pin-blocked-handleFailure',
            run: async function () {
                var rec = handlers.PinCodeAttempts;
                rec.answer = function () { return { pin: '0000' }; };
                var notes = [];
                try {
                    await logout('PinCodeAttempts');
                    notes.push('logout succeeded');
                } catch (error) {
                    notes.push('logout FAILED: ' + describe(error));
                }
                var outcome;
                try {
                    var response = await getBalance();
                    outcome = { ok: true, value: response };
                } catch (error) {
                    outcome = { ok: false, value: error };
                }
                var challenges = eventsOf(rec, 'challenge');
                var failures = eventsOf(rec, 'failure');
                notes.push('challenges ' + challenges.map(function (event) { return json(event.data); }).join(', '));
                notes.push('answered 0000 ' + eventsOf(rec, 'answer').length + ' times');
                notes.push('handleFailure ' + (failures.length ? json(failures[0].data) : 'not called'));
                notes.push('request ' + (outcome.ok ? 'SUCCEEDED ' : 'failed ') + describe(outcome.value));
                var detail = notes.join('; ');
                expect(!outcome.ok, 'the balance request should fail once the PIN check is blocked: ' + detail);
                expect(failures.length === 1 && json(failures[0].data).indexOf('Account blocked') >= 0,
                    'handleFailure should be called once with "Account blocked": ' + detail);
                expect(challenges.length === 3, 'expected 3 PIN challenges before the block: ' + detail);
                return detail;
            }
        }
    ];

    // ---------------------------------------------------------------- application management

    var REMOTE = 'wl_remoteDisableRealm';
    var expectedMessage = query.get('message') || '';
    var expectedLink = query.get('link') || '';

    function tokenOrFailure(scope, ms) {
        return withTimeout(obtainAccessToken(scope), ms, 'obtainAccessToken(' + scope + ')').then(
            function (token) { return { ok: true, value: token }; },
            function (error) { return { ok: false, value: error }; });
    }

    var remoteSteps = {
        notify: [
            {
                name: 'notify-once-then-token',
                run: async function () {
                    var rec = handlers[REMOTE];
                    rec.answer = function (challenge) { return { messageId: challenge.messageId }; };
                    handlers.PinCodeAttempts.answer = function () { return { pin: '1234' }; };
                    var token = await obtainAccessToken('accessRestricted');
                    var challenges = eventsOf(rec, 'challenge');
                    expect(challenges.length === 1, 'expected one NOTIFY challenge, saw ' + challenges.length);
                    var notice = challenges[0].data || {};
                    expect(notice.messageType === 'NOTIFY' && notice.message === expectedMessage && notice.messageId,
                        'the challenge should be {message: ' + json(expectedMessage) + ', messageId, messageType: NOTIFY}: ' + json(notice));
                    expect(eventsOf(handlers.PinCodeAttempts, 'challenge').length === 1, 'the PIN was not asked after the notice');
                    expect(token && token.value, 'no token: ' + json(token));
                    window.notifiedToken = token;
                    return 'handleChallenge ' + json(notice) + ', answered {messageId}; then the PIN; ' + tokenSummary(token);
                }
            },
            {
                name: 'notify-not-on-next-token',
                run: async function () {
                    // Another scope, so that the SDK asks the server again (rather than its cached token).
                    handlers.SimpleCaptcha.answer = function (challenge) { return { answer: String(parseCaptcha(challenge.captcha)) }; };
                    var token = await obtainAccessToken('SimpleCaptcha');
                    var seen = eventsOf(handlers[REMOTE], 'challenge').length;
                    expect(seen === 0, 'the notice came again (' + seen + ' challenges) for the same message id');
                    expect(eventsOf(handlers.SimpleCaptcha, 'challenge').length === 1, 'the captcha was not asked');
                    expect(token && token.value && token.value !== window.notifiedToken.value, 'no new token: ' + json(token));
                    return 'the captcha, no notice: ' + tokenSummary(token);
                }
            }
        ],
        disabled: [
            {
                name: 'disabled-handleFailure-with-link',
                run: async function () {
                    var rec = handlers[REMOTE];
                    var outcome = await tokenOrFailure('UserLogin', 10000);
                    var failures = eventsOf(rec, 'failure');
                    expect(!outcome.ok, 'a disabled application obtained a token: ' + tokenSummary(outcome.value));
                    expect(failures.length === 1, 'handleFailure should be called once, was ' + failures.length + ' times');
                    var failure = failures[0].data || {};
                    expect(failure.message === expectedMessage && failure.downloadLink === expectedLink,
                        'the failure should be {message: ' + json(expectedMessage) + ', downloadLink: ' + json(expectedLink) + '}: ' + json(failure));
                    expect(eventsOf(handlers.UserLogin, 'challenge').length === 0, 'UserLogin was asked of a disabled application');
                    return 'handleFailure ' + json(failure) + '; obtainAccessToken failed: ' + describe(outcome.value);
                }
            }
        ],
        enabled: [
            {
                name: 'enabled-again-token',
                run: async function () {
                    // The scope the disabled page was refused: the server is asked again.
                    handlers.UserLogin.answer = function () { return { username: 'john', password: 'demo' }; };
                    var token = await obtainAccessToken('UserLogin');
                    expect(eventsOf(handlers[REMOTE], 'challenge').length + eventsOf(handlers[REMOTE], 'failure').length === 0,
                        'the application is active again, yet its handler was called');
                    expect(eventsOf(handlers.UserLogin, 'challenge').length === 1, 'UserLogin was not asked');
                    expect(token && token.value, 'no token: ' + json(token));
                    return 'UserLogin asked and answered; ' + tokenSummary(token);
                }
            }
        ],
        builtin: [
            {
                name: 'builtin-handler',
                required: false,
                run: async function () {
                    var outcome = await tokenOrFailure('accessRestricted', 6000);
                    return 'with the SDK\'s own wl_remoteDisableRealm handler: ' + (outcome.ok ? tokenSummary(outcome.value)
                        : describe(outcome.value)) + (pageErrors.length ? '; page errors: ' + pageErrors.join(' | ') : '');
                }
            }
        ]
    };

    // ---------------------------------------------------------------- device management

    // Gatehouse's failure for a blocked device (DeviceAccessWire): a handler registered under its name gets it.
    var DEVICE = 'gatehouse_deviceAccess';

    function settledBalance(ms) {
        return withTimeout(getBalance(), ms, 'the balance request').then(
            function (response) { return { ok: true, value: response }; },
            function (error) { return { ok: false, value: error }; });
    }

    remoteSteps['device-login'] = [
        {
            name: 'second-device-login',
            run: async function () {
                handlers.UserLogin.answer = function () { return { username: 'john', password: 'demo' }; };
                var token = await obtainAccessToken('UserLogin');
                expect(token && token.value, 'no token: ' + json(token));
                return 'john logged in on a second device (another browser profile); ' + tokenSummary(token);
            }
        }
    ];
    remoteSteps['device-lost'] = [
        {
            name: 'lost-device-refused',
            run: async function () {
                handlers.PinCodeAttempts.answer = function () { return { pin: '1234' }; };
                // The page's cached token was revoked with the device: the resource answers 401, the SDK asks for a
                // new token, and pre-authorization refuses it.
                var outcome = await settledBalance(10000);
                var failures = eventsOf(handlers[DEVICE], 'failure');
                expect(!outcome.ok, 'a lost device read the balance: ' + json(outcome.value && outcome.value.responseText));
                expect(failures.length === 1 && (failures[0].data || {}).status === 'LOST',
                    'handleFailure of ' + DEVICE + ' should be called once with status LOST: ' + json(failures));
                expect(eventsOf(handlers.PinCodeAttempts, 'challenge').length === 0, 'the PIN was asked on a lost device');
                return 'handleFailure ' + json(failures[0].data) + '; the balance request failed: ' + describe(outcome.value);
            }
        }
    ];
    remoteSteps['device-active'] = [
        {
            name: 'other-device-of-the-user-served',
            run: async function () {
                handlers.PinCodeAttempts.answer = function () { return { pin: '1234' }; };
                var outcome = await settledBalance(10000);
                expect(outcome.ok, 'the other device of the same user was refused: ' + describe(outcome.value));
                expect(eventsOf(handlers[DEVICE], 'failure').length === 0, DEVICE + ' failed on an active device');
                var text = String(outcome.value.responseText || '');
                expect(text.indexOf(EXPECTED_BALANCE) >= 0, 'unexpected balance answer: ' + text);
                return 'the balance read: ' + text.slice(0, 80);
            }
        }
    ];

    async function runStep(step) {
        quiesce();
        var detail;
        try {
            detail = await withTimeout(step.run(), STEP_TIMEOUT_MS, step.name);
            report(step.name, step.required === false ? 'info' : 'pass', detail, step.required);
        } catch (error) {
            var text = error instanceof Expectation ? error.message : 'SDK call failed: ' + describe(error);
            text += ' [handlers during the step: ' + (stepTrace.length ? stepTrace.join('; ') : 'none called') + ']';
            report(step.name, step.required === false ? 'info' : 'fail', text, step.required);
        }
        quiesce();
    }

    async function analyticsStep() {
        // Informational: ask the analytics library to upload what it captured (POST /mfp/api/loguploader).
        try {
            if (window.ibmmfpfanalytics && typeof ibmmfpfanalytics.send === 'function') {
                ibmmfpfanalytics.send();
                await sleep(1000);
                report('analytics-send', 'info', 'ibmmfpfanalytics.send() called; see the request log for ' +
                    '/mfp/api/loguploader posts', false);
            } else {
                report('analytics-send', 'info', 'ibmmfpfanalytics.send is not available', false);
            }
        } catch (error) {
            report('analytics-send', 'info', 'ibmmfpfanalytics.send() threw: ' + describe(error), false);
        }
    }

    function finish(fatal) {
        if (pageErrors.length) {
            report('page-errors', 'info', pageErrors.join(' | '), false);
        }
        if (fatal) {
            document.body.dataset.fatal = fatal;
            statusLine.textContent = 'fatal: ' + fatal;
        } else {
            statusLine.textContent = 'done';
        }
        document.body.dataset.done = 'true';
    }

    /**
     * mode=forbidden: this page's origin is not in the application's allowedOrigins, so its registration must fail
     * (the browser refuses the preflight or the answer, or the server answers 403 ORIGIN_NOT_ALLOWED). Passes when no
     * token is obtained within FORBIDDEN_TIMEOUT_MS and no check challenged (a challenge needs a registered client).
     * Tests/Browser/run.py also checks that the server registered no client meanwhile.
     */
    async function forbiddenStep() {
        quiesce();
        var name = 'foreign-origin-refused';
        var outcome;
        try {
            var token = await withTimeout(obtainAccessToken('SimpleCaptcha'), FORBIDDEN_TIMEOUT_MS,
                'obtainAccessToken');
            outcome = { kind: 'token', detail: tokenSummary(token) };
        } catch (error) {
            var timedOut = error instanceof Error && /^timeout:/.test(error.message);
            outcome = { kind: 'blocked', detail: timedOut
                ? 'obtainAccessToken did not settle within ' + FORBIDDEN_TIMEOUT_MS + ' ms (this SDK build never ' +
                  'settles it when registration fails)'
                : 'obtainAccessToken failed: ' + describe(error) };
        }
        var challenged = Object.keys(handlers).filter(function (check) {
            return eventsOf(handlers[check], 'challenge').length > 0;
        });
        var trace = stepTrace.length ? ' [handlers: ' + stepTrace.join('; ') + ']' : '';
        if (outcome.kind === 'token') {
            report(name, 'fail', 'a page of a foreign origin obtained a token: ' + outcome.detail + trace);
        } else if (challenged.length) {
            report(name, 'fail', 'the client was registered (challenged by ' + challenged.join(', ') + '); ' +
                outcome.detail + trace);
        } else {
            report(name, 'pass', 'blocked: ' + outcome.detail);
        }
        quiesce();
    }

    async function main() {
        statusLine.textContent = 'initialising (challenge handlers via WL.Client.' + apiFlavour + ')';
        report('sdk', 'info', 'challenge handlers via WL.Client.' + apiFlavour + '; mfpContextRoot ' + CONTEXT_ROOT +
            (pageMode === 'full' ? '' : '; mode ' + pageMode), false);
        ['SimpleCaptcha', 'PinCodeAttempts', 'UserLogin'].forEach(makeHandler);
        if (remoteSteps[pageMode] && pageMode !== 'builtin') {
            makeHandler(REMOTE);       // the app's own, in place of the SDK's built-in one
        }
        if (pageMode.indexOf('device-') === 0) {
            makeHandler(DEVICE);
        }
        var initPromise = WL.Client.init({ mfpContextRoot: CONTEXT_ROOT, applicationId: 'com.sample.web' });
        if (!initPromise || typeof initPromise.then !== 'function') {
            throw new Error('WL.Client.init returned no promise');
        }
        await withTimeout(settle(initPromise), INIT_TIMEOUT_MS, 'WL.Client.init');
        if (pageMode === 'forbidden') {
            statusLine.textContent = 'running foreign-origin-refused';
            await forbiddenStep();
            return;
        }
        if (remoteSteps[pageMode]) {
            for (var r = 0; r < remoteSteps[pageMode].length; r++) {
                statusLine.textContent = 'running ' + remoteSteps[pageMode][r].name;
                await runStep(remoteSteps[pageMode][r]);
            }
            return;
        }
        if (pageMode !== 'full') {
            throw new Error('unknown mode ' + json(pageMode));
        }
        statusLine.textContent = 'running';
        for (var i = 0; i < steps.length; i++) {
            statusLine.textContent = 'running ' + steps[i].name;
            await runStep(steps[i]);
        }
        await analyticsStep();
    }

    main().then(function () { finish(null); }, function (error) { finish(describe(error)); });
}());
