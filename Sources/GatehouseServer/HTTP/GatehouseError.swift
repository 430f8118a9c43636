public import HTTPTypes
import Foundation
public import GatehouseProtocol
public import Hummingbird

/// An error answered to a client: a status, a JSON body, and headers where the protocol wants them.
///
/// MobileFirst endpoints answer `{"errorCode":..,"errorMsg":..}`; OAuth endpoints (`az/v1/token`) answer
/// `{"error":..,"error_description":..}` (RFC 6749 §5.2).
public struct GatehouseError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public enum Style: Sendable { case mobileFirst, oauth }

    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var style: Style
    public var headers: HTTPFields
    /// More members of the body, beside the code and message (the errors of a refused policy).
    public var extra: JSONObject

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, style: Style = .mobileFirst, headers: HTTPFields = [:],
                extra: JSONObject = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.style = style
        self.headers = headers
        self.extra = extra
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: bodyBuffer()))
    }

    /// The body: the protocol's error type of the style, with ``extra`` members after its own.
    func bodyBuffer() -> ByteBuffer {
        let buffer = switch style {
        case .mobileFirst: JSONBody.buffer(ErrorResponse(errorCode: code, errorMsg: message))
        case .oauth: JSONBody.buffer(OAuthErrorResponse(error: code, errorDescription: message))
        }
        guard !extra.isEmpty, case .object(var body)? = try? JSONDecoder().decode(JSON.self, from: buffer) else { return buffer }
        body.merge(extra) { first, _ in first }
        return JSONBody.buffer(body)
    }
}

extension GatehouseError {
    static func invalidRequest(_ message: String) -> GatehouseError { .init(.badRequest, "INVALID_REQUEST", message) }
}

/// Encoding of JSON answers.
enum JSONBody {
    static func buffer(_ value: some Encodable) -> ByteBuffer {
        if let value = value as? any JSONTextEncodable { return ByteBuffer(bytes: value.jsonText) }
        let data = (try? SharedJSONCoders.sortedEncoder.encode(value)) ?? Data("{}".utf8)
        return ByteBuffer(bytes: data)
    }

    /// A JSON response.
    static func response(_ status: HTTPResponse.Status = .ok, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        Response(status: status, headers: self.headers(headers), body: .init(byteBuffer: buffer(value)))
    }

    /// `headers` and the JSON `Content-Type`.
    static func headers(_ headers: HTTPFields) -> HTTPFields {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return headers
    }
}
