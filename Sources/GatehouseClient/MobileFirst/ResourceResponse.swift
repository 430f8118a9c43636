public import Foundation
import GatehouseProtocol

/// A protected resource's answer.
public struct ResourceResponse: Sendable {
    /// The HTTP status.
    public let status: Int
    /// Header fields by lower-cased name.
    public let headers: [String: String]
    /// The body.
    public let body: Data

    /// A response; header names are lower-cased here.
    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
        self.body = body
    }

    init(_ response: TransportResponse) {
        self.init(status: response.status, headers: response.headers, body: response.body)
    }

    /// The value of a header field, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as JSON, if it is JSON.
    public var json: JSON? { try? JSONDecoder().decode(JSON.self, from: body) }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
