#!/usr/bin/env python3
"""Gatehouse's OpenID Provider as a standard Python OpenID Connect client library sees it: pyoidc (`oic` on PyPI).

    python3 Tests/OpenID/client_library.py [--gatehouse .build/debug/gatehouse] [--keep] [--verbose]
    (scripts/openid-check installs `oic` when it is missing and runs this under a watchdog)

`gatehouse serve --port 0` runs a policy with four OpenID clients (Tests/OpenID/provider.py): lib-confidential
(secret, RS256), lib-es256 (secret, ES256), lib-public (no secret: PKCE S256 required) and lib-refresh (secret,
RS256, for the refresh tokens). The library does what an application does: discovery and the provider's keys
(`Client.provider_config`: the issuer must be the one asked), the authorization request (state, nonce, PKCE), the
authorization response (`parse_response`), the token request (client_secret_basic, client_secret_post, or none with
a code_verifier), the id_token checked by the library (signature against the JWKS, iss, aud, azp, exp, iat; at_hash by
its `verify_id_token(check_hash=True)`; the nonce by `Client.verify_id_token` and by `do_access_token_request`), and
the userinfo request. The user's part — the hosted sign-in page — is answered as the page's own script does, in JSON
(provider.UserAgent).

Steps (each prints PASS or FAIL; exit status 1 if any failed):

  discovery              the discovery document accepted by the library, its endpoints and methods as the contract says
  confidential-basic     code flow, client_secret_basic; id_token claims; userinfo
  confidential-post      the same with client_secret_post
  wrong-client-secret    a wrong secret at the token endpoint: 401 invalid_client
  public-pkce            public client, PKCE S256, no client authentication
  public-without-pkce    public client without code_challenge: error=invalid_request on the redirect
  es256                  an ES256 client: the id_token signed ES256, verified against the JWKS's EC key
  refresh-rotation       refresh_token grant: a new refresh token; the old one refused (invalid_grant), and its reuse
                         revokes the new one too
  wrong-redirect-uri     an unregistered redirect_uri: 400 HTML on Gatehouse's page, no redirect
  reused-code            a code redeemed twice: invalid_grant
  pkce-mismatch          a code_verifier that is not the challenge's: invalid_grant
  nonce-replay           the library refuses an id_token issued for another nonce
  max-age                max_age=1 after 2 s: prompt=none answers error=login_required; without prompt=none the page
                         asks the password again and the new id_token's auth_time is newer
  step-up-mfa            acr_values=urn:gatehouse:acr:mfa: the TOTP enrolment round, recovery codes, acr mfa
  rp-logout              RP-initiated logout (EndSessionRequest with the id_token_hint): an unregistered
                         post_logout_redirect_uri is not redirected to; the registered one gets the state back; the
                         session is over (prompt=none -> login_required)
"""

import base64
import json
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provider  # noqa: E402
from provider import Refused, UserAgent, harness, query  # noqa: E402

log = harness.log
REDIRECT = "http://127.0.0.1:8765/callback"          # never contacted: the test reads the redirect's URL
OTHER_REDIRECT = "http://127.0.0.1:8765/not-registered"
LOGGED_OUT = "http://127.0.0.1:8765/logged-out"      # lib-confidential's post-logout redirect URI
SCOPE = "openid profile email"


def import_oic():
    from oic.oic import Client
    from oic.oic.message import (AccessTokenResponse, AuthorizationResponse, ProviderConfigurationResponse,
                                 RegistrationResponse, verify_id_token)
    from oic.utils.authn.client import CLIENT_AUTHN_METHOD
    from oic.utils.settings import OicClientSettings
    return dict(Client=Client, AccessTokenResponse=AccessTokenResponse, AuthorizationResponse=AuthorizationResponse,
                ProviderConfigurationResponse=ProviderConfigurationResponse, RegistrationResponse=RegistrationResponse,
                verify_id_token=verify_id_token, CLIENT_AUTHN_METHOD=CLIENT_AUTHN_METHOD,
                OicClientSettings=OicClientSettings)


def b64url_json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def jwt_header(token):
    return b64url_json(token.split(".")[0])


class Relying:
    """One OpenID client as an application configures pyoidc: the provider's configuration and keys discovered, the
    client's registration stored (static registration: the id, secret and redirect URI from the policy)."""

    def __init__(self, oic, issuer, spec, authn_method):
        self.oic, self.spec, self.authn_method = oic, spec, authn_method
        self.client = oic["Client"](client_id=spec.id, client_authn_method=oic["CLIENT_AUTHN_METHOD"],
                                    settings=oic["OicClientSettings"](timeout=provider.HTTP_TIMEOUT))
        self.pcr = self.client.provider_config(issuer)
        registration = {"client_id": spec.id, "redirect_uris": spec.redirect_uris,
                        "id_token_signed_response_alg": spec.alg,
                        "token_endpoint_auth_method": authn_method or "none"}
        if spec.secret:
            registration["client_secret"] = spec.secret
        self.client.store_registration_info(oic["RegistrationResponse"](**registration))
        self.client.redirect_uris = list(spec.redirect_uris)

    def authorization_url(self, pkce=True, **extra):
        """(url, the request as sent, the code_verifier or None)."""
        args = {"client_id": self.spec.id, "response_type": "code", "scope": SCOPE, "redirect_uri": REDIRECT,
                "state": secrets.token_urlsafe(16), "nonce": secrets.token_urlsafe(16)}
        verifier = None
        if pkce:
            challenge, verifier = self.client.add_code_challenge()
            args.update(challenge)
        args.update(extra)
        url, _body, _headers, request = self.client.authorization_request_info(request_args=args)
        return url, request, verifier

    def parse_redirect(self, redirect, request):
        """The authorization response parsed by the library; its state and iss (RFC 9207) checked."""
        if not redirect.startswith(REDIRECT + "?"):
            raise Refused(f"redirected to {redirect}, not to the client's redirect_uri {REDIRECT}")
        response = self.client.parse_response(self.oic["AuthorizationResponse"], info=redirect, sformat="urlencoded")
        if "error" in response:
            raise Refused(f"authorization error on the redirect: {response.to_dict()}")
        assert response["state"] == request["state"], f"state {response['state']} != sent {request['state']}"
        iss = query(redirect).get("iss")
        assert iss in (None, self.pcr["issuer"]), f"the redirect's iss {iss} is not the issuer {self.pcr['issuer']}"
        return response

    def token(self, request, verifier=None, authn_method=None):
        """The library's token request for the code of `request`'s state; the id_token verified by the library."""
        args = {"redirect_uri": REDIRECT}
        if verifier:
            args["code_verifier"] = verifier
        method = self.authn_method if authn_method is None else authn_method
        return self.client.do_access_token_request(state=request["state"], request_args=args, authn_method=method)

    def check_tokens(self, response, request, acr=provider.ACR_PASSWORD):
        """What the library checks beyond its token response parsing: at_hash (verify_id_token with check_hash),
        the nonce and acr (Client.verify_id_token); then the claims the contract lists. Returns the IdToken."""
        if "error" in response:
            raise Refused(f"the token request was refused: {response.to_dict()}")
        for name in ("access_token", "token_type", "id_token"):
            assert name in response, f"the token response has no {name}: {response.to_dict()}"
        assert response["token_type"].lower() == "bearer", f"token_type {response['token_type']}"
        raw = response["id_token_jwt"]
        header = jwt_header(raw)
        assert header.get("alg") == self.spec.alg, f"id_token alg {header.get('alg')}, the client wants {self.spec.alg}"
        assert header.get("kid"), "the id_token's header has no kid"
        self.oic["verify_id_token"]({"id_token": raw, "access_token": response["access_token"]}, check_hash=True,
                                    keyjar=self.client.keyjar, iss=self.pcr["issuer"], client_id=self.spec.id)
        idt = response["id_token"]
        self.client.verify_id_token(idt, request)
        assert idt["sub"] == provider.USER, f"sub {idt['sub']}"
        assert idt["aud"] == [self.spec.id], f"aud {idt['aud']}"
        assert idt.get("azp") == self.spec.id, f"azp {idt.get('azp')}"
        assert idt.get("nonce") == request["nonce"], "nonce"
        assert idt.get("acr") == acr, f"acr {idt.get('acr')}, expected {acr}"
        assert isinstance(idt.get("amr"), list) and idt["amr"], f"amr {idt.get('amr')}"
        assert isinstance(idt.get("auth_time"), int) and idt["auth_time"] <= time.time() + 5, \
            f"auth_time {idt.get('auth_time')}"
        assert idt["iat"] <= time.time() + 5 < idt["exp"] + 5, f"iat {idt['iat']} exp {idt['exp']}"
        assert "at_hash" in idt, "the id_token has no at_hash"
        return idt

    def userinfo(self, request, method="GET"):
        # The access token in the Authorization header (RFC 6750 2.1), by GET or by POST.
        info = self.client.do_user_info_request(method=method, state=request["state"],
                                                behavior="use_authorization_header")
        if "error" in info:
            raise Refused(f"userinfo refused: {info.to_dict()}")
        expected = {"sub": provider.USER, "name": provider.DISPLAY_NAME, "preferred_username": provider.USER,
                    "email": provider.EMAIL}
        got = {name: info.get(name) for name in expected}
        assert got == expected, f"userinfo {info.to_dict()}, expected {expected}"
        return info

    def sign_in_flow(self, agent=None, pkce=True, respond=None, **extra):
        """A whole flow with a fresh user agent (or `agent`): (agent, request, token response, the code_verifier or
        None)."""
        agent = agent or UserAgent(self.pcr["issuer"])
        url, request, verifier = self.authorization_url(pkce=pkce, **extra)
        redirect = agent.authorize(url, respond)
        self.parse_redirect(redirect, request)
        response = self.token(request, verifier)
        return agent, request, response, verifier

    def checked_sign_in(self, acr=provider.ACR_PASSWORD, **flow):
        """sign_in_flow(**flow), then check_tokens (`acr` the one expected): (agent, request, token response,
        id_token)."""
        agent, request, response, _verifier = self.sign_in_flow(**flow)
        return agent, request, response, self.check_tokens(response, request, acr=acr)


def token_error(response, expected):
    """The library's parse of an error answer from the token endpoint: `expected` as error."""
    assert "error" in response, f"expected error {expected}, the token endpoint issued tokens: {response.to_dict()}"
    assert response["error"] == expected, f"error {response.to_dict()}, expected {expected}"
    return response.to_dict()


def raw_token_request(client, fields, auth=None):
    """A token request the library would not send as such (a stale refresh token); answered JSON."""
    import requests
    answer = requests.post(client.pcr["token_endpoint"], data=fields, auth=auth, timeout=provider.HTTP_TIMEOUT,
                           allow_redirects=False)
    try:
        body = answer.json()
    except ValueError:
        body = {"unparsed": answer.text[:300]}
    return answer.status_code, body, answer


# ------------------------------------------------------------------------------------------------ the steps

def run_steps(settings, results, folder):
    oic = import_oic()
    binary = settings.gatehouse
    clients = {
        "confidential": provider.confidential(binary, "lib-confidential", [REDIRECT],
                                              post_logout_redirect_uris=[LOGGED_OUT]),
        "es256": provider.confidential(binary, "lib-es256", [REDIRECT], alg="ES256"),
        "public": provider.OpenIDClient("lib-public", [REDIRECT]),
        "refresh": provider.confidential(binary, "lib-refresh", [REDIRECT]),
    }
    gatehouse, document = provider.start(binary, folder, list(clients.values()), settings.start_timeout)
    settings.logs.append(("gatehouse output", gatehouse.text))
    issuer = document.get("issuer")
    log(f"INFO issuer {issuer}")

    step = harness.step_runner(results, tracebacks=settings.verbose)

    def relying(kind, method="client_secret_basic"):
        return Relying(oic, issuer, clients[kind], method)

    def discovery():
        rp = relying("confidential")
        pcr = rp.pcr
        # The library's own validation of the document; its one refusal here, the issuer's http scheme (loopback, no
        # TLS in this test), is taken out by validating a copy whose issuer says https.
        try:
            pcr.verify()
            scheme = "https"
        except Exception as error:  # noqa: BLE001 - only the scheme refusal is expected
            if type(error).__name__ != "SchemeError":
                raise
            scheme = "http (the library's SchemeError only)"
            copy = oic["ProviderConfigurationResponse"](**dict(pcr.to_dict(), issuer="https" + pcr["issuer"][4:]))
            copy.verify()
        base = issuer
        expected = {"authorization_endpoint": base + "/oidc/authorize", "token_endpoint": base + "/oidc/token",
                    "userinfo_endpoint": base + "/oidc/userinfo", "jwks_uri": base + "/.well-known/jwks.json",
                    "end_session_endpoint": base + "/oidc/logout"}
        wrong = {k: pcr.get(k) for k, v in expected.items() if pcr.get(k) != v}
        assert not wrong, f"endpoints {wrong}, expected {expected}"
        for name, values in (("token_endpoint_auth_methods_supported", ["client_secret_basic", "client_secret_post", "none"]),
                             ("id_token_signing_alg_values_supported", ["RS256", "ES256"]),
                             ("code_challenge_methods_supported", ["S256"]),
                             ("response_types_supported", ["code"]),
                             ("scopes_supported", ["openid"]),
                             ("grant_types_supported", ["authorization_code", "refresh_token"])):
            missing = [value for value in values if value not in (pcr.get(name) or [])]
            assert not missing, f"{name} {pcr.get(name)} lacks {missing}"
        keys = rp.client.keyjar.get_issuer_keys(issuer)
        kinds = sorted({key.kty for key in keys})
        assert "RSA" in kinds and "EC" in kinds, \
            (f"the JWKS served before any id_token was issued has keys of kinds {kinds}, while the document advertises "
             f"{pcr.get('id_token_signing_alg_values_supported')} and the policy has RS256 and ES256 clients")
        return (f"issuer {issuer} as asked; document valid for the library (scheme {scheme}); "
                f"{len(keys)} keys ({', '.join(kinds)}) loaded from {pcr['jwks_uri']}")

    def confidential_flow(method):
        def run():
            rp = relying("confidential", method)
            agent, request, _, idt = rp.checked_sign_in(pkce=False)
            info = rp.userinfo(request)
            return (f"{method}: page asked {agent.asked}; id_token RS256 verified (signature, iss, aud, azp, exp, nonce, "
                    f"at_hash), sub {idt['sub']}, acr {idt['acr']}, amr {idt['amr']}; userinfo email {info['email']}")
        return run

    def wrong_client_secret():
        rp = relying("confidential")
        agent = UserAgent(issuer)
        url, request, _ = rp.authorization_url(pkce=False)
        rp.parse_redirect(agent.authorize(url), request)
        code = rp.client.get_grant(request["state"]).code
        status, body, _ = raw_token_request(rp, {"grant_type": "authorization_code", "code": code,
                                                 "redirect_uri": REDIRECT},
                                            auth=(rp.spec.id, rp.spec.secret + "x"))
        assert status == 401 and body.get("error") == "invalid_client", \
            f"a wrong secret answered {status} {body}, expected 401 invalid_client"
        return f"401 {body}"

    def public_pkce():
        rp = relying("public", "")
        agent, request, response, verifier = rp.sign_in_flow(pkce=True)
        assert request["code_challenge_method"] == "S256"
        idt = rp.check_tokens(response, request)
        rp.userinfo(request, method="POST")
        return (f"S256 challenge sent, verifier of {len(verifier)} chars redeemed without client authentication; "
                f"id_token verified, sub {idt['sub']}; userinfo by POST")

    def public_without_pkce():
        rp = relying("public", "")
        url, request, _ = rp.authorization_url(pkce=False)
        kind, value = UserAgent(issuer).open(url)
        assert kind == "redirect", "a public client's request without code_challenge got the sign-in page"
        fields = query(value)
        assert value.startswith(REDIRECT + "?") and fields.get("error") == "invalid_request" \
            and fields.get("state") == request["state"], \
            f"redirect {value}; expected error=invalid_request with the state (RFC 7636 4.4.1)"
        return f"redirected with {fields}"

    def es256():
        rp = relying("es256")
        _, request, response, idt = rp.checked_sign_in(pkce=False)
        kid = jwt_header(response["id_token_jwt"])["kid"]
        key = [k for k in rp.client.keyjar.get_issuer_keys(issuer) if k.kid == kid]
        assert key and key[0].kty == "EC" and key[0].crv == "P-256", \
            f"the id_token's kid {kid} is not an EC P-256 key of the JWKS: {key}"
        return f"id_token ES256 (kid {kid}, EC P-256 in the JWKS) verified by the library, sub {idt['sub']}"

    def refresh_rotation():
        rp = relying("refresh")
        _, request, response, _ = rp.checked_sign_in(pkce=False, scope=provider.SCOPE_ALLOWED)
        first = rp.client.get_token(state=request["state"])
        assert first.refresh_token, f"no refresh_token for scope {provider.SCOPE_ALLOWED}: {response.to_dict()}"
        old_refresh = first.refresh_token
        renewed = rp.client.do_access_token_refresh(state=request["state"], token=first,
                                                    authn_method="client_secret_basic")
        if "error" in renewed:
            raise Refused(f"the refresh was refused: {renewed.to_dict()}")
        assert renewed.get("access_token") and renewed["access_token"] != response["access_token"], \
            "no new access token"
        new_refresh = renewed.get("refresh_token")
        assert new_refresh and new_refresh != old_refresh, "the refresh token was not rotated"
        if "id_token" in renewed:
            idt = renewed["id_token"]
            assert idt["sub"] == provider.USER and idt["auth_time"] == response["id_token"]["auth_time"], \
                "the refreshed id_token's sub or auth_time changed (OIDC Core 12.2)"
        info = rp.client.do_user_info_request(method="GET", token=renewed["access_token"])
        assert info.get("sub") == provider.USER, f"userinfo with the refreshed access token: {info.to_dict()}"
        basic = (rp.spec.id, rp.spec.secret)
        status, body, _ = raw_token_request(rp, {"grant_type": "refresh_token", "refresh_token": old_refresh}, basic)
        assert status == 400 and body.get("error") == "invalid_grant", \
            f"the old refresh token answered {status} {body}, expected 400 invalid_grant"
        status2, body2, _ = raw_token_request(rp, {"grant_type": "refresh_token", "refresh_token": new_refresh}, basic)
        assert status2 == 400 and body2.get("error") == "invalid_grant", \
            f"after the old refresh token's reuse, the new one answered {status2} {body2}, expected 400 invalid_grant"
        revoked = rp.client.do_user_info_request(method="GET", token=renewed["access_token"])
        note = ("; the refreshed access token is refused at userinfo too" if "error" in revoked
                else "; (INFO) the refreshed access token still works at userinfo")
        return (f"rotated ({'with' if 'id_token' in renewed else 'without'} an id_token); old token -> {status} "
                f"{body.get('error')}; the new one after that -> {status2} {body2.get('error')}{note}")

    def wrong_redirect_uri():
        rp = relying("confidential")
        url, _, _ = rp.authorization_url(pkce=False, redirect_uri=OTHER_REDIRECT)
        import requests
        answer = requests.get(url, allow_redirects=False, timeout=provider.HTTP_TIMEOUT)
        assert answer.status_code == 400, f"{provider.describe(answer)}; expected 400"
        assert "Location" not in answer.headers, f"redirected: {answer.headers['Location']}"
        assert "text/html" in answer.headers.get("Content-Type", ""), \
            f"Content-Type {answer.headers.get('Content-Type')}, expected Gatehouse's HTML page"
        page = provider.SignInPage(answer.text)
        shown = page.error or answer.text[:120]
        assert not page.request, "the error page carries a sign-in form"
        return f"400 text/html, no Location; the page says {shown!r}"

    def reused_code():
        rp = relying("confidential")
        _, request, response, _ = rp.checked_sign_in(pkce=False)
        again = rp.token(request)
        error = token_error(again, "invalid_grant")
        revoked = rp.client.do_user_info_request(method="GET", token=response["access_token"])
        note = ("; the tokens of the first redemption are revoked (userinfo refuses them)" if "error" in revoked
                else "; (INFO) the first redemption's access token still works (RFC 6749 4.1.2: SHOULD revoke)")
        return f"second redemption -> {error}{note}"

    def pkce_mismatch():
        rp = relying("public", "")
        agent = UserAgent(issuer)
        url, request, verifier = rp.authorization_url(pkce=True)
        rp.parse_redirect(agent.authorize(url), request)
        other = secrets.token_urlsafe(48)
        response = rp.token(request, other)
        error = token_error(response, "invalid_grant")
        return f"verifier not matching the S256 challenge -> {error}"

    def nonce_replay():
        rp = relying("confidential")
        agent, first_request, first, _ = rp.checked_sign_in(pkce=False)
        replayed = first["id_token"]
        # A second flow (its own state and nonce) is fed the first flow's id_token, as a replaying attacker would.
        url, second_request, _ = rp.authorization_url(pkce=False)
        assert second_request["nonce"] != first_request["nonce"]
        try:
            rp.client.verify_id_token(replayed, second_request)
        except Exception as error:  # noqa: BLE001 - the library's refusal is the point
            caught = f"{type(error).__name__}: {error}"
        else:
            raise AssertionError("the library accepted an id_token whose nonce is another flow's")
        assert "nonce" in caught.lower(), f"refused for another reason: {caught}"
        # The same through the library's token request: the second flow's code, redeemed under the first flow's state.
        rp.parse_redirect(agent.authorize(url), second_request)
        second_code = rp.client.get_grant(second_request["state"]).code
        rp.client.get_grant(first_request["state"]).code = second_code
        try:
            rp.token(first_request)
        except Exception as error:  # noqa: BLE001
            caught2 = f"{type(error).__name__}: {error}"
        else:
            raise AssertionError("do_access_token_request accepted an id_token for another flow's nonce")
        assert "nonce" in caught2.lower(), f"refused for another reason: {caught2}"
        return f"Client.verify_id_token -> {caught}; do_access_token_request -> {caught2}"

    def max_age():
        rp = relying("confidential")
        agent, request, response, first = rp.checked_sign_in(pkce=False)
        # The session is there: prompt=none gives a code at once (so the refusal below is max_age's).
        url, silent, _ = rp.authorization_url(pkce=False, prompt="none")
        kind, value = agent.open(url)
        assert kind == "redirect" and "code" in query(value), \
            f"prompt=none within a fresh session answered {kind} {value if kind == 'redirect' else 'the sign-in page'}"
        time.sleep(2.2)
        url, request2, _ = rp.authorization_url(pkce=False, prompt="none", max_age=1)
        kind, value = agent.open(url)
        assert kind == "redirect", "max_age=1 with prompt=none after 2 s showed the sign-in page, not a redirect"
        fields = query(value)
        assert value.startswith(REDIRECT + "?") and fields.get("error") == "login_required" \
            and fields.get("state") == request2["state"], \
            f"redirect {value}; expected error=login_required with the state"
        url, request3, _ = rp.authorization_url(pkce=False, max_age=1)
        kind, page = agent.open(url)
        assert kind == "page", f"max_age=1 after 2 s redirected at once, without asking the password: {page}"
        redirect = agent.sign_in(page, provider.password_only)
        assert "UserLogin" in agent.asked, f"max_age=1 after 2 s: the page asked {agent.asked}, not the password"
        rp.parse_redirect(redirect, request3)
        newer = rp.check_tokens(rp.token(request3), request3)
        assert newer["auth_time"] > first["auth_time"], \
            f"auth_time {newer['auth_time']} is not newer than the first sign-in's {first['auth_time']}"
        return (f"prompt=none -> error=login_required; without it the page asked {agent.asked}; auth_time "
                f"{first['auth_time']} -> {newer['auth_time']}")

    def step_up_mfa():
        rp = relying("confidential")
        agent, request, response, idt = rp.checked_sign_in(pkce=False, respond=provider.password_and_totp,
                                                           acr_values=provider.ACR_MFA, acr=provider.ACR_MFA)
        asked = [sorted((value.get("challenges") or {}).keys()) for _, value in agent.rounds]
        codes = agent.recovery_codes
        assert codes and isinstance(codes, list), f"no recoveryCodes with the enrolment's redirect: {agent.rounds[-1]}"
        return f"page asked {agent.asked}, rounds' challenges {asked}; {len(codes)} recovery codes; acr {idt['acr']}, amr {idt['amr']}"

    def rp_logout():
        rp = relying("confidential")
        agent, request, response, _ = rp.checked_sign_in(pkce=False)
        hint = response["id_token_jwt"]

        def end_session(uri):
            ask = rp.client.construct_EndSessionRequest(request_args={
                "id_token_hint": hint, "post_logout_redirect_uri": uri, "state": secrets.token_urlsafe(12)})
            answer = agent.session.get(ask.request(rp.pcr["end_session_endpoint"]), allow_redirects=False,
                                       timeout=provider.HTTP_TIMEOUT)
            return ask, answer
        _, refused = end_session(OTHER_REDIRECT)
        location = refused.headers.get("Location", "")
        assert not location.startswith(OTHER_REDIRECT), \
            f"logout redirected to an unregistered post_logout_redirect_uri: {provider.describe(refused)}"
        ask, answer = end_session(LOGGED_OUT)
        location = answer.headers.get("Location", "")
        assert answer.status_code in (302, 303) and location.split("?")[0] == LOGGED_OUT \
            and query(location).get("state") == ask["state"], \
            f"{provider.describe(answer)}; expected a redirect to {LOGGED_OUT} with the state"
        url, silent, _ = rp.authorization_url(pkce=False, prompt="none")
        kind, value = agent.open(url)
        assert kind == "redirect" and query(value).get("error") == "login_required", \
            f"after the logout prompt=none answered {value if kind == 'redirect' else 'the sign-in page'}"
        return (f"unregistered post_logout_redirect_uri -> {refused.status_code} (no redirect); registered -> "
                f"{answer.status_code} to it with the state; prompt=none then -> login_required")

    steps = [("discovery", discovery),
             ("confidential-basic", confidential_flow("client_secret_basic")),
             ("confidential-post", confidential_flow("client_secret_post")),
             ("wrong-client-secret", wrong_client_secret),
             ("public-pkce", public_pkce),
             ("public-without-pkce", public_without_pkce),
             ("es256", es256),
             ("refresh-rotation", refresh_rotation),
             ("wrong-redirect-uri", wrong_redirect_uri),
             ("reused-code", reused_code),
             ("pkce-mismatch", pkce_mismatch),
             ("nonce-replay", nonce_replay),
             ("max-age", max_age),
             ("step-up-mfa", step_up_mfa),
             ("rp-logout", rp_logout)]
    for name, function in steps:
        step(name, function)
    return [name for name, _ in steps]


def main():
    settings = harness.standalone_settings(__doc__, keep_help="keep the work folder (policy, data, gatehouse log)",
                                           verbose_help="print the logs and tracebacks even on success", browser=False)
    if settings is None:
        return 2
    try:
        import oic
        log(f"INFO client library: oic (pyoidc) {oic.__version__}")
    except ImportError:
        log("FAIL setup: the oic package (pyoidc) is missing (pip install oic; scripts/openid-check installs it)")
        return 2
    return harness.run_standalone(run_steps, settings, folder="gatehouse-openid-",
                                  heading="OpenID Connect: pyoidc against gatehouse serve",
                                  title="OpenID client library check", label="openid", log_tail=20000, counts=True)


if __name__ == "__main__":
    harness.run_main(main)
