public import AsyncHTTPClient
public import Foundation
import GatehouseProtocol
import NIOCore
import NIOHTTP1
import Synchronization

/// Verifies tokens by asking Gatehouse (`POST /mfp/api/az/v1/introspection`), as MobileFirst's token validators
/// do: logout, blocks and revocation take effect at once.
///
/// It authenticates as a confidential client holding `authorization.introspect`: it obtains its own token with
/// `client_credentials`, and obtains a new one once when the server answers 401. Answers can be cached for
/// `cacheDuration` (0 by default: every request is checked).
public final class IntrospectionTokenVerifier: TokenVerifier {
    private struct State {
        var ownToken: (value: String, expiresAt: Date)?
        var answers: [String: (token: VerifiedToken, until: Date)] = [:]
    }

    private let apiURL: String
    private let clientID: String
    private let secret: String
    private let httpClient: HTTPClient
    private let cacheDuration: TimeInterval
    private let state = Mutex(State())

    /// - Parameters:
    ///   - serverURL: Gatehouse's base URL, e.g. `http://gatehouse:8080`.
    ///   - clientID: a confidential client allowed `authorization.introspect`.
    ///   - secret: that client's secret.
    ///   - httpClient: the AsyncHTTPClient the introspection calls go through.
    ///   - cacheDuration: seconds an answer is kept for the same token (0: every request is introspected).
    public init(serverURL: String, clientID: String, secret: String, httpClient: HTTPClient = .shared, cacheDuration: TimeInterval = 0) {
        self.apiURL = serverURL + "/mfp/api/az/v1"
        self.clientID = clientID
        self.secret = secret
        self.httpClient = httpClient
        self.cacheDuration = cacheDuration
    }

    /// An answer kept for `cacheDuration` and still valid (never with the default of 0: every token is asked about).
    public func rememberedVerification(of token: String) -> (token: VerifiedToken, until: Date)? {
        let now = Date()
        guard let cached = state.withLock({ $0.answers[token] }), cached.until > now, cached.token.expiresAt > now else { return nil }
        return (cached.token, min(cached.until, cached.token.expiresAt))
    }

    public func verify(_ token: String) async throws(TokenRejection) -> VerifiedToken {
        if let remembered = rememberedVerification(of: token) { return remembered.token }
        let now = Date()
        do {
            var (status, answer) = try await introspect(token, renew: false)
            if status == 401 { (status, answer) = try await introspect(token, renew: true) }
            if status == 409 { throw TokenRejection.conflict }
            guard status == 200, let answer, answer.active, let scope = answer.scope, let client = answer.clientID, let exp = answer.exp
            else { throw TokenRejection.invalidToken }
            let verified = VerifiedToken(
                scope: Scope(scope), clientID: client, userID: answer.user?["id"]?.stringValue,
                checks: answer.checks.map { Array($0.keys).sorted() } ?? [],
                expiresAt: Date(timeIntervalSince1970: Double(exp) / 1000), certificateThumbprint: answer.certificateThumbprint,
                acr: answer.acr, authTime: answer.authTime.map { Date(timeIntervalSince1970: TimeInterval($0)) })
            if cacheDuration > 0 {
                state.withLock { $0.answers[token] = (verified, now.addingTimeInterval(cacheDuration)) }
            }
            return verified
        } catch let rejection as TokenRejection {
            throw rejection
        } catch {
            throw .invalidToken
        }
    }

    private func introspect(_ token: String, renew: Bool) async throws -> (Int, TokenIntrospection?) {
        let own = try await ownToken(renew: renew)
        var request = HTTPClientRequest(url: apiURL + "/introspection")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Authorization", value: "Bearer \(own)")
        request.body = .bytes(ByteBuffer(string: "token=" + Self.formEscape(token)))
        let response = try await httpClient.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        return (Int(response.status.code), try? JSONDecoder().decode(TokenIntrospection.self, from: Data(buffer: body)))
    }

    private func ownToken(renew: Bool) async throws -> String {
        if !renew, let own = state.withLock({ $0.ownToken }), own.expiresAt > Date().addingTimeInterval(10) { return own.value }
        var request = HTTPClientRequest(url: apiURL + "/token")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Authorization", value: ClientSecretBasic.authorization(clientID: clientID, secret: secret))
        request.body = .bytes(ByteBuffer(string: "grant_type=client_credentials&scope=authorization.introspect"))
        let response = try await httpClient.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        let token = try JSONDecoder().decode(TokenResponse.self, from: Data(buffer: body))
        state.withLock { $0.ownToken = (token.access_token, Date().addingTimeInterval(TimeInterval(token.expires_in))) }
        return token.access_token
    }

    private static func formEscape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
