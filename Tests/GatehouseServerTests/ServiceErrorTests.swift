import Foundation
@testable import GatehouseServer
import GatehouseProtocol
import GatehouseStore
import HTTPTypes
import Testing

/// The services' typed requests and refusals, and the one place that says each refusal as HTTP.
@Suite(.timeLimit(.minutes(3))) struct ServiceErrorTests {
    /// Every refusal of the authorization service, one of each case.
    static let refusals: [AuthorizationError] = [
        .invalidRequest("code is required"), .unsupportedGrantType("password"), .unsupportedResponseType, .invalidRedirectURI,
        .invalidGrant("The code has expired."), .scopeNotAllowed("Scope 'x' is not allowed."), .unmappedScope("Scope element 'x'"),
        .invalidClientAssertion("client_assertion is not a JWS"), .unknownClient("c1"), .invalidConfidentialClient,
        .clientAuthenticationRequired("Authenticate."), .insufficientScope("Client x may not introspect tokens."),
        .callerTokenRefused(insufficientScope: false, challenge: "Bearer error=\"invalid_token\"", message: "m"),
        .callerTokenRefused(insufficientScope: true, challenge: "Bearer error=\"insufficient_scope\"", message: "m"),
        .invalidProof("no proof"), .forbidden("another client's"), .originNotAllowed("origin"), .applicationNotRegistered("app"),
        .deviceBlocked("lost"), .accessDenied("pre-authorize first"), .unknownSecurityCheck("PinCode"), .conflict,
    ]

    /// OAuth endpoints answer only the codes their RFCs define (RFC 6749 §4.1.2.1 and §5.2, RFC 6750 §3.1,
    /// RFC 9449 §7.1; RFC 7662/7009 reuse them), in OAuth's shape; the others MobileFirst's upper-case codes in theirs. Every
    /// refusal is a 4xx, and a message is never empty.
    @Test func everyRefusalHasOneAnswerInEachShape() throws {
        let oauthCodes: Set = [
            "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope",
            "unsupported_response_type", "access_denied", "invalid_token", "insufficient_scope", "temporarily_unavailable", "invalid_dpop_proof",
        ]
        for refusal in Self.refusals {
            let oauth = GatehouseError(refusal, oauth: true), mobileFirst = GatehouseError(refusal, oauth: false)
            for answer in [oauth, mobileFirst] {
                #expect((400..<500).contains(answer.status.code), "\(refusal)")
                #expect(!answer.message.isEmpty)
            }
            #expect(oauth.style == .oauth && oauthCodes.contains(oauth.code), "\(refusal) → \(oauth.code)")
            if refusal != .unsupportedResponseType {
                #expect(mobileFirst.style == .mobileFirst && mobileFirst.code == mobileFirst.code.uppercased(), "\(refusal) → \(mobileFirst.code)")
            }
            let body = try JSONSerialization.jsonObject(with: Data(mobileFirst.bodyBuffer().readableBytesView)) as? [String: String]
            #expect(body?["errorCode"] ?? body?["error"] != nil)
        }
    }

    /// The answers clients depend on, as they were before the services took typed errors.
    @Test func theAnswersClientsKnow() {
        let unknown = GatehouseError(.unknownClient("c1"), oauth: false)
        #expect(unknown.status == .badRequest && unknown.code == "INVALID_CLIENT_ID")
        #expect(unknown.message == "Unknown client id 'c1'. Register the client again.")
        let unknownOAuth = GatehouseError(.unknownClient("c1"), oauth: true)
        #expect(unknownOAuth.status == .unauthorized && unknownOAuth.code == "invalid_client" && !unknownOAuth.message.contains("c1"))
        let secret = GatehouseError(.invalidConfidentialClient, oauth: true)
        #expect(secret.status == .unauthorized && secret.headers[.wwwAuthenticate] == "Basic realm=\"gatehouse\"")
        let conflict = GatehouseError(.conflict, oauth: false)
        #expect(conflict.status == .conflict && conflict.headers[HTTPField.Name(ProtocolNames.conflictHeader)!] == "true")
        let proof = GatehouseError(.invalidProof("no proof"), oauth: false)
        #expect(proof.code == "INVALID_PROOF" && proof.headers[.wwwAuthenticate]?.hasPrefix("DPoP ") == true)
        let refused = GatehouseError(.callerTokenRefused(insufficientScope: true, challenge: "Bearer x", message: "m"), oauth: true)
        #expect(refused.status == .forbidden && refused.code == "insufficient_scope" && refused.headers[.wwwAuthenticate] == "Bearer x")
        let responseType = GatehouseError(.unsupportedResponseType, oauth: false)
        #expect(responseType.code == "unsupported_response_type" && responseType.style == .oauth)
        #expect(GatehouseError(.unsupportedGrantType(String(repeating: "p", count: 500)), oauth: true).message.count < 100)
    }

    @Test func adminRefusals() {
        let cases: [(AdminError, Int, String)] = [
            (.invalidRequest("limit"), 400, "INVALID_REQUEST"), (.unauthenticated("token", challenge: "Bearer"), 401, "UNAUTHORIZED"),
            (.forbidden("scope", challenge: "Bearer"), 403, "FORBIDDEN"), (.notFound("x"), 404, "NOT_FOUND"), (.conflict("x"), 409, "CONFLICT"),
            (.currentKey("x"), 409, "CURRENT_KEY"), (.invalidPolicy("x", errors: ["e"]), 422, "INVALID_POLICY"),
        ]
        for (error, status, code) in cases {
            let answer = GatehouseError(error)
            #expect(answer.status.code == status && answer.code == code && answer.style == .mobileFirst)
        }
        #expect(GatehouseError(.forbidden("scope", challenge: "Bearer y")).headers[.wwwAuthenticate] == "Bearer y")
        #expect(GatehouseError(.invalidPolicy("x", errors: ["e"])).extra["errors"] == .array(["e"]))
    }

    @Test func tokenRequestsFromForms() throws {
        let code = try TokenRequest(form: ["grant_type": "authorization_code", "code": "c", "redirect_uri": "r", "client_assertion": "j",
                                           "client_assertion_type": "t"], authorization: nil)
        #expect(code == .authorizationCode(.init(code: "c", redirectURI: "r", clientID: nil, assertion: ClientAssertion(jws: "j", type: "t"))))
        #expect(try TokenRequest(form: ["grant_type": "client_credentials", "scope": "b a"], authorization: "Basic x")
            == .clientCredentials(.init(scope: Scope("a b"), authentication: .basic("Basic x"))))
        // A client id without Authorization: the TLS client certificate (RFC 8705); with it, Basic still.
        #expect(try TokenRequest(form: ["grant_type": "client_credentials", "client_id": "svc"], authorization: nil)
            == .clientCredentials(.init(scope: Scope(nil), authentication: .certificate(clientID: "svc"))))
        #expect(try TokenRequest(form: ["grant_type": "client_credentials", "client_id": "svc"], authorization: "Basic x")
            == .clientCredentials(.init(scope: Scope(nil), authentication: .basic("Basic x"))))
        #expect(try TokenRequest(form: ["grant_type": "client_credentials"], authorization: nil)
            == .clientCredentials(.init(scope: Scope(nil), authentication: .basic(nil))))
        #expect(throws: AuthorizationError.invalidRequest("grant_type is required")) { try TokenRequest(form: [:], authorization: nil) }
        #expect(throws: AuthorizationError.unsupportedGrantType("password")) { try TokenRequest(form: ["grant_type": "password"], authorization: nil) }
        #expect(throws: AuthorizationError.invalidRequest("code is required")) {
            try TokenRequest(form: ["grant_type": "authorization_code", "code": ""], authorization: nil)
        }
    }

    @Test func adminQueries() throws {
        #expect(try AdminRoutes<GatehouseRequestContext>.limit([:]) == 100)
        #expect(throws: AdminError.self) { try AdminRoutes<GatehouseRequestContext>.limit(["limit": "0"]) }
        #expect(throws: AdminError.self) { try AdminRoutes<GatehouseRequestContext>.limit(["limit": "1001"]) }
        let query = try AdminRoutes<GatehouseRequestContext>.registrationQuery(["device": "d", "user": "", "displayName": "n", "limit": "5"])
        #expect(query == RegistrationQuery(deviceID: "d", limit: 5), "empty filters are none, displayName only for devices")
        #expect(try AdminRoutes<GatehouseRequestContext>.registrationQuery(["displayName": "n"], byDisplayName: true).deviceDisplayName == "n")
        #expect(throws: AdminError.invalidRequest("after must be an event id (a whole number).")) {
            try AdminRoutes<GatehouseRequestContext>.auditAfter(["after": "-1"])
        }
    }
}
