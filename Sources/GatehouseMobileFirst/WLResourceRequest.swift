import Foundation
import GatehouseClient
import GatehouseProtocol

/// MobileFirst's HTTP method names for ``WLResourceRequest``.
public let WLHttpMethodGet = "GET"
public let WLHttpMethodPost = "POST"
public let WLHttpMethodPut = "PUT"
public let WLHttpMethodDelete = "DELETE"
public let WLHttpMethodHead = "HEAD"
public let WLHttpMethodPatch = "PATCH"
public let WLHttpMethodOptions = "OPTIONS"
public let WLHttpMethodTrace = "TRACE"
public let WLHttpMethodConnect = "CONNECT"

/// The completion handler of ``WLResourceRequest``'s `send` methods: run on the main thread.
public typealias WLResourceRequestCompletion = @MainActor @Sendable (WLResponse?, (any Error)?) -> Void

/// MobileFirst's `WLResourceRequest` over the Gatehouse SDK: a request to a protected resource that obtains its token
/// and answers the server's challenges itself. A relative URL (`/adapters/ResourceAdapter/balance`) is under the
/// runtime's API; an absolute one is used as it is.
///
/// As Swift sees MobileFirst's Objective-C class, its initializers are `init!` (the samples' `request?.send { … }`
/// compiles); they return `nil` without a URL or a method. Make, configure and send a request from any thread; the
/// completion handler runs on the main thread. A request is one caller's object, like MobileFirst's: do not configure
/// one from two threads at once.
public final class WLResourceRequest: NSObject {
    /// The URL, as given.
    public let url: URL
    /// The HTTP method, upper-case.
    public let method: String
    /// Seconds each attempt may take (MobileFirst's default: 30).
    public var timeoutInterval: TimeInterval
    /// The scope to obtain a token for first (`nil`: the one the resource asks for).
    public let scope: String?
    /// The request's own header fields, by name as set.
    public private(set) var headers: [String: String] = [:]
    /// The query parameters, by name.
    public private(set) var queryParameters: [String: String] = [:]

    /// A request for `url` with `method` (`WLHttpMethodGet`, …), `timeout` seconds per attempt, `scope` first.
    public init!(url: URL!, method: String!, timeout: TimeInterval, scope: String!) {
        guard let url, let method, !method.isEmpty else { return nil }
        self.url = url
        self.method = method.uppercased()
        self.timeoutInterval = timeout
        self.scope = scope
    }

    /// A request for `url` with `method`, the default timeout (30 s).
    public convenience init!(url: URL!, method: String!) {
        self.init(url: url, method: method, timeout: 30, scope: nil)
    }

    /// A request for `url` with `method` and a timeout of `timeout` seconds.
    public convenience init!(url: URL!, method: String!, timeout: TimeInterval) {
        self.init(url: url, method: method, timeout: timeout, scope: nil)
    }

    /// A request for `url` with `method`, obtaining a token for `scope` before it is sent.
    public convenience init!(url: URL!, method: String!, scope: String!) {
        self.init(url: url, method: method, timeout: 30, scope: scope)
    }

    /// Sets the header field `name` to `value`, replacing any value it had.
    public func setHeaderValue(_ value: String!, forName name: String!) {
        guard let name else { return }
        removeHeaders(forName: name)
        headers[name] = value
    }

    /// Adds `value` to the header field `name` (values of one field are joined by `, `).
    public func addHeaderValue(_ value: String!, forName name: String!) {
        guard let name, let value else { return }
        if let existing = headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame }) {
            headers[existing.key] = existing.value + ", " + value
        } else {
            headers[name] = value
        }
    }

    /// The value of the header field `name` (any case), if set.
    public func header(forName name: String!) -> String! {
        guard let name else { return nil }
        return headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The values of the header field `name` (any case), if set.
    public func headers(forName name: String!) -> [Any]! { header(forName: name).map { [$0] } }

    /// The names of the header fields set, sorted.
    public func headerNames() -> [Any]! { headers.keys.sorted() }

    /// Removes the header field `name` (any case).
    public func removeHeaders(forName name: String!) {
        guard let name else { return }
        headers = headers.filter { $0.key.caseInsensitiveCompare(name) != .orderedSame }
    }

    /// Sets the query parameter `name` to `value`.
    public func setQueryParameterValue(_ value: String!, forName name: String!) {
        guard let name else { return }
        queryParameters[name] = value
    }

    /// Sends the request without a body.
    public func send(completionHandler: WLResourceRequestCompletion!) { send(.none, completionHandler) }
    /// Sends `json` as the body (`application/json`).
    public func send(withJSON json: [AnyHashable: Any]!, completionHandler: WLResourceRequestCompletion!) {
        send(.json(.object(JSONBridging.object(json))), completionHandler)
    }
    /// Sends form fields as the body (`application/x-www-form-urlencoded`).
    public func send(withFormParameters parameters: [AnyHashable: Any]!, completionHandler: WLResourceRequestCompletion!) {
        let fields = (parameters ?? [:]).map { (String(describing: $0.key.base), String(describing: $0.value)) }.sorted { $0.0 < $1.0 }
        send(.form(fields), completionHandler)
    }
    /// Sends `body` as text (`text/plain`).
    public func send(withBody body: String!, completionHandler: WLResourceRequestCompletion!) {
        send(.data(Data((body ?? "").utf8), contentType: "text/plain; charset=utf-8"), completionHandler)
    }
    /// Sends `data` as the body (`application/octet-stream` unless the request sets `Content-Type`).
    public func send(with data: Data!, completionHandler: WLResourceRequestCompletion!) {
        let type = header(forName: "Content-Type") ?? "application/octet-stream"
        send(.data(data ?? Data(), contentType: type), completionHandler)
    }

    private func send(_ body: RequestBody, _ completionHandler: WLResourceRequestCompletion?) {
        let query = queryParameters.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        let timeout = Duration.milliseconds(Int64(max(timeoutInterval, 0.001) * 1000))
        let shared = WLClient.shared
        var fields: [String: String] = [:]
        for global in shared.globalHeaders where header(forName: global.name) == nil { fields[global.name] = global.value }
        fields.merge(headers) { _, own in own }
        let (url, method, scope) = (url, method, scope)
        shared.complete(completionHandler) { [fields] client in
            let request = url.scheme == nil
                ? ResourceRequest(client: client, path: String(url.absoluteString.drop { $0 == "/" }), method: .init(rawValue: method),
                                  headers: fields, queryParameters: query, body: body, timeout: timeout, scope: scope)
                : ResourceRequest(client: client, url: url, method: .init(rawValue: method), headers: fields,
                                  queryParameters: query, body: body, timeout: timeout, scope: scope)
            let response = try await request.send()
            // MobileFirst answers a resource's own failure (4xx, 5xx) through the error too, with the response.
            return (WLResponse(response), response.isSuccess ? nil : WLError(.procedureError, "HTTP \(response.status)"))
        }
    }
}
