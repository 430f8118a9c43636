public import Foundation
import GatehouseProtocol

/// Handles the challenges of a gateway in front of the servers that answers with its own login page (or a
/// redirect to one) instead of the resource — MobileFirst's `GatewayChallengeHandler` (that name is kept as an
/// alias). One of the SDK's three handler abstractions (see ``HTTPChallengeHandler`` for HTTP authentication
/// challenges, ``SecurityCheckChallengeHandler`` for security checks).
///
/// Subclass it: ``canHandleResponse(_:)`` recognises the gateway's answer, ``handleChallenge(_:)`` logs in —
/// typically with ``submitLoginForm(url:parameters:headers:timeout:method:)`` — and then calls
/// ``submitSuccess()`` (the original request is sent again) or ``cancel()`` (it fails with
/// ``GatehouseClientError/challengeCancelled(securityCheck:)`` naming this handler). Subclasses restate
/// `@unchecked Sendable`. Register it with
/// ``GatehouseClient/registerLoginPageChallengeHandler(_:)``.
open class LoginPageChallengeHandler: @unchecked Sendable {
    /// The handler's name (reported in errors).
    public let name: String
    private let pending = PendingAnswer<Bool>()
    private let connection = Locked<(any HTTPTransport, ClientConfiguration)?>(nil)

    /// A gateway handler named `name`.
    public init(name: String) {
        self.name = name
    }

    /// Whether `response` is this gateway's challenge (a login page, a redirect to one, ...).
    open func canHandleResponse(_ response: ResourceResponse) -> Bool { false }

    /// Called with the gateway's challenge: log in, then call ``submitSuccess()`` or ``cancel()``.
    open func handleChallenge(_ response: ResourceResponse) {}

    /// Called when the challenge was abandoned without ``submitSuccess()`` or ``cancel()``: `reason` is
    /// `challengeTimedOut` or `cancelled`. Take the login
    /// page down.
    open func challengeAbandoned(_ reason: GatehouseClientError) {}

    /// Posts (or gets) a login form through the client's HTTP stack, so that the cookies it sets are sent with
    /// the requests that follow.
    ///
    /// - Parameters:
    ///   - url: the form's URL; a relative URL is resolved against the server URL.
    ///   - parameters: the form fields.
    ///   - headers: extra header fields.
    ///   - timeout: the request's timeout.
    ///   - method: `.post` (a form body) or `.get` (a query).
    public final func submitLoginForm(
        url: URL, parameters: [String: String], headers: [String: String] = [:], timeout: Duration = .seconds(30),
        method: ResourceRequest.Method = .post
    ) async throws(GatehouseClientError) -> ResourceResponse {
        guard let (transport, configuration) = connection.withLock({ $0 }) else {
            throw .invalidArgument("the gateway challenge handler \(name) is not registered with a client")
        }
        let target = url.scheme == nil ? URL(string: url.relativeString, relativeTo: configuration.serverURL)?.absoluteURL ?? url : url
        let fields = parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var request = TransportRequest(method: method.rawValue, url: target, timeout: timeout)
        for (name, value) in configuration.globalHeaders.merging(headers, uniquingKeysWith: { $1 }) { request.headers.append((name, value)) }
        if method == .get {
            request.url = FormEncoding.url(target, adding: fields)
        } else {
            request.headers.append(("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"))
            request.body = Data(FormEncoding.encode(fields).utf8)
        }
        return ResourceResponse(try await transport.send(request))
    }

    /// The gateway let the client in: the original request is sent again.
    ///
    /// - Returns: `false` when no challenge is open (abandoned, or already answered).
    @discardableResult
    public final func submitSuccess() -> Bool { pending.resume(true) }

    /// Abandons the gateway challenge: the request fails with ``GatehouseClientError/challengeCancelled(securityCheck:)``.
    ///
    /// - Returns: `false` when no challenge is open.
    @discardableResult
    public final func cancel() -> Bool { pending.resume(false) }

    // MARK: Framework

    func attach(transport: any HTTPTransport, configuration: ClientConfiguration) {
        connection.withLock { $0 = (transport, configuration) }
    }

    /// Puts the challenge to the handler; `true` when it called ``submitSuccess()``.
    func respond(to response: ResourceResponse) async -> Bool {
        await pending.wait(cancelled: false) { handleChallenge(response) }
    }
}

/// MobileFirst's name of ``LoginPageChallengeHandler``, for code ported from its tutorials.
public typealias GatewayChallengeHandler = LoginPageChallengeHandler
