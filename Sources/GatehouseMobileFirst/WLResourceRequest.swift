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

/// MobileFirst's answer to a resource request: its status, fields and body.
public final class WLResponse: NSObject, Sendable {
    /// The HTTP status.
    public let status: Int32
    /// The response fields, by lower-case name.
    public let headers: [String: String]
    /// The body.
    public let responseData: Data

    init(_ response: ResourceResponse) {
        status = Int32(response.status)
        headers = response.headers
        responseData = response.body
    }

    /// The body as text.
    public var responseText: String! { String(decoding: responseData, as: UTF8.self) }
    /// The body as a JSON object, if it is one.
    public var responseJSON: [AnyHashable: Any]! {
        guard case .object(let object)? = try? JSONDecoder().decode(JSON.self, from: responseData) else { return nil }
        return JSONBridging.dictionary(object)
    }
}

/// MobileFirst's `WLResourceRequest` over the Gatehouse SDK: a request to a protected resource that obtains its token
/// and answers the server's challenges itself. A relative URL (`/adapters/ResourceAdapter/balance`) is under the
/// runtime's API; an absolute one is used as it is. Completion handlers run on the main thread.
@MainActor
public final class WLResourceRequest: NSObject {
    public let url: URL
    public let method: String
    /// Seconds each attempt may take.
    public var timeoutInterval: TimeInterval
    /// The scope to obtain a token for first (`nil`: the one the resource asks for).
    public let scope: String?
    public private(set) var headers: [String: String] = [:]
    public private(set) var queryParameters: [String: String] = [:]

    public init(url: URL!, method: String!, timeout: TimeInterval = 30, scope: String? = nil) {
        self.url = url
        self.method = method.uppercased()
        self.timeoutInterval = timeout
        self.scope = scope
    }

    public convenience init(url: URL!, method: String!, scope: String!) {
        self.init(url: url, method: method, timeout: 30, scope: scope)
    }

    public func setHeaderValue(_ value: String!, forName name: String!) { headers[name] = value }
    public func setQueryParameterValue(_ value: String!, forName name: String!) { queryParameters[name] = value }

    /// Sends the request without a body.
    public func send(completionHandler: ((WLResponse?, (any Error)?) -> Void)!) { send(.none, completionHandler) }
    /// Sends `json` as the body.
    public func send(withJSON json: [AnyHashable: Any]!, completionHandler: ((WLResponse?, (any Error)?) -> Void)!) {
        send(.json(.object(JSONBridging.object(json))), completionHandler)
    }
    /// Sends form fields as the body (`application/x-www-form-urlencoded`).
    public func send(withFormParameters parameters: [String: String]!, completionHandler: ((WLResponse?, (any Error)?) -> Void)!) {
        send(.form((parameters ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }), completionHandler)
    }
    /// Sends `body` as text.
    public func send(withBody body: String!, completionHandler: ((WLResponse?, (any Error)?) -> Void)!) {
        send(.data(Data((body ?? "").utf8), contentType: "text/plain; charset=utf-8"), completionHandler)
    }

    private func send(_ body: RequestBody, _ completionHandler: ((WLResponse?, (any Error)?) -> Void)?) {
        let query = queryParameters.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        let timeout = Duration.milliseconds(Int64(timeoutInterval * 1000))
        let (url, method, headers, scope) = (url, method, headers, scope)
        WLClient.sharedInstance().complete(completionHandler) { client in
            let request = url.scheme == nil
                ? ResourceRequest(client: client, path: String(url.absoluteString.drop { $0 == "/" }), method: .init(rawValue: method),
                                  headers: headers, queryParameters: query, body: body, timeout: timeout, scope: scope)
                : ResourceRequest(client: client, url: url, method: .init(rawValue: method), headers: headers,
                                  queryParameters: query, body: body, timeout: timeout, scope: scope)
            let response = try await request.send()
            // MobileFirst answers a resource's own failure (4xx, 5xx) through the error too, with the response.
            return (WLResponse(response), response.isSuccess ? nil : WLError(.procedureError, "HTTP \(response.status)"))
        }
    }
}
