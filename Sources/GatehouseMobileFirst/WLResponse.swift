import Foundation
import GatehouseClient
import GatehouseProtocol

/// MobileFirst's answer to a resource request: its status, header fields and body.
public final class WLResponse: NSObject, Sendable {
    /// The HTTP status.
    public let status: Int32
    /// The response's header fields, by lower-case name (HTTP field names are case-insensitive; the accessors below
    /// take any case).
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

    /// ``responseJSON``, by MobileFirst's method name.
    public func getResponseJson() -> [AnyHashable: Any]! { responseJSON }

    /// The response's header fields, as MobileFirst's `getResponseHeaders` hands them (`[name: value]`).
    public func getResponseHeaders() -> [AnyHashable: Any]! { headers }

    /// The names of the response's header fields (lower-case), sorted.
    public func getHeaderNames() -> [Any]! { headers.keys.sorted() }

    /// The values of the header field `name` (any case); `nil` when the response has none. Repeated fields arrive
    /// joined by `, ` (one value), as Foundation's URL loading joins them.
    public func getHeaders(_ name: String!) -> [Any]! {
        getHeader(name).map { [$0] }
    }

    /// The value of the header field `name` (any case); `nil` when the response has none.
    public func getHeader(_ name: String!) -> String! {
        guard let name else { return nil }
        return headers[name.lowercased()]
    }
}
