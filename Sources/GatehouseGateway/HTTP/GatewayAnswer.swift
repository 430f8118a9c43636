import HTTPTypes
import NIOCore

/// An answer the gateway gives instead of the upstream's: a `401` challenge, a `403`, or a `400`/`414` for a
/// request it will not route.
struct GatewayAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    /// The body as text.
    var bodyText: String { String(buffer: body) }

    /// `{"error":"invalid_request","error_description":"..."}` with `status` (`400` unless told).
    static func invalidRequest(_ description: String, status: Int = 400) -> GatewayAnswer {
        error("invalid_request", description, status: status)
    }

    /// `500 {"error":"server_error",...}`: the gateway could not form the upstream request.
    static func serverError(_ description: String) -> GatewayAnswer {
        error("server_error", description, status: 500)
    }

    /// `401 {"error":"unauthorized",...}` with the realm's `WWW-Authenticate` challenge.
    static func unauthorized(challenge: String) -> GatewayAnswer {
        var answer = error("unauthorized", "this service needs credentials: answer the WWW-Authenticate challenge", status: 401)
        answer.headers[.wwwAuthenticate] = challenge
        return answer
    }

    /// `403 {"error":"forbidden",...}`: authenticated, without a role the service requires.
    static var forbidden: GatewayAnswer { forbidden(because: "the authenticated user lacks a role this service requires") }

    /// `403 {"error":"forbidden","error_description":"<description>"}`.
    static func forbidden(because description: String) -> GatewayAnswer { error("forbidden", description, status: 403) }

    /// `404 {"error":"not_found",...}`: no service at the path.
    static var notFound: GatewayAnswer { error("not_found", "no service at this path", status: 404) }

    /// `502 {"error":"bad_gateway",...}`: the upstream could not be reached or its answer not read.
    static var badGateway: GatewayAnswer { error("bad_gateway", "the upstream service did not answer", status: 502) }

    /// `503 {"error":"temporarily_unavailable",...}` with `Retry-After: 1`: the gateway holds all it may now.
    static func unavailable(_ description: String) -> GatewayAnswer {
        var answer = error("temporarily_unavailable", description, status: 503)
        answer.headers[.retryAfter] = "1"
        return answer
    }

    /// `429 {"error":"too_many_requests",...}` with `Retry-After`: the client's address is refused for a while.
    static func throttled(_ description: String, retryAfter: Int) -> GatewayAnswer {
        var answer = error("too_many_requests", description, status: 429)
        answer.headers[.retryAfter] = String(max(retryAfter, 1))
        return answer
    }

    /// `504 {"error":"gateway_timeout",...}`: the upstream was silent past the read timeout.
    static var gatewayTimeout: GatewayAnswer { error("gateway_timeout", "the upstream service did not answer in time", status: 504) }

    /// `{"error":"<code>","error_description":"..."}` with `status`.
    private static func error(_ code: String, _ description: String, status: Int) -> GatewayAnswer {
        GatewayAnswer(status: Self.status(status),
                      headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                      body: ByteBuffer(string: #"{"error":"# + jsonString(code) + #","error_description":"# + jsonString(description) + "}"))
    }

    /// The status with its standard reason phrase (`HTTPResponse.Status(code:)` has none: `HTTP/1.1 400 `).
    static func status(_ code: Int) -> HTTPResponse.Status {
        let known: [HTTPResponse.Status] = [.badRequest, .unauthorized, .forbidden, .notFound, .methodNotAllowed, .requestTimeout,
                                            .contentTooLarge, .uriTooLong, .requestHeaderFieldsTooLarge, .internalServerError,
                                            .badGateway, .serviceUnavailable, .gatewayTimeout]
        return known.first { $0.code == code } ?? HTTPResponse.Status(code: code)
    }

    /// `200 {"status":"<status>"}`: the gateway's `/health` (alive) and `/ready` (configured and serving).
    static func probe(_ status: String) -> GatewayAnswer {
        GatewayAnswer(status: .ok, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
                      body: ByteBuffer(string: #"{"status":"# + jsonString(status) + "}"))
    }

    /// The answer to a target that ``RequestTarget`` refused.
    static func refused(_ error: RequestTargetError) -> GatewayAnswer {
        invalidRequest(error.description, status: error.status)
    }

    /// `text` as a JSON string literal.
    private static func jsonString(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output + "\""
    }
}
