import Foundation
import HTTPTypes
import Hummingbird

/// Cross-origin access for MobileFirst web apps served from another origin than Gatehouse.
///
/// Only origins named in some application's `allowedOrigins` get CORS headers (never `*`); a preflight
/// (`OPTIONS` with `Access-Control-Request-Method`) from such an origin is answered `204` here. The answers
/// expose the fields the web SDK reads (`WWW-Authenticate`, `Location`). Which application a cross-origin page
/// may register for is checked at registration (``CORS/isAllowed(origin:host:application:)``).
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The policy in force, whose applications' `allowedOrigins` are allowed.
    let policies: PolicyInForce

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let allowedOrigins = policies.current.allowedOrigins
        guard !allowedOrigins.isEmpty, let origin = request.headers[.origin], allowedOrigins.contains(origin.lowercased()) else {
            return try await next(request, context)
        }
        if request.method == .options, let method = request.headers[.accessControlRequestMethod] {
            var headers: HTTPFields = [
                .accessControlAllowOrigin: origin, .vary: "Origin",
                .accessControlAllowMethods: CORS.methods.contains(method.uppercased()) ? CORS.methods.joined(separator: ", ") : "",
                .accessControlMaxAge: "600", .contentLength: "0",
            ]
            if let requested = request.headers[.accessControlRequestHeaders], CORS.isFieldNameList(requested) {
                headers[.accessControlAllowHeaders] = requested
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = CORS.exposedHeaders
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
        return response
    }
}

/// Origins and the CORS rules Gatehouse applies.
enum CORS {
    static let methods = ["GET", "POST", "PUT", "DELETE", "OPTIONS"]
    static let exposedHeaders = "WWW-Authenticate, Location, Content-Type"

    /// `scheme://host[:port]` lowercased, without a default port; `nil` for anything else (paths, wildcards, `null`).
    static func normalizedOrigin(_ text: String) -> String? {
        guard let url = URLComponents(string: text.trimmingCharacters(in: .whitespaces)), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty, !host.contains("*"),
            url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil, url.password == nil
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        return url.port.map { $0 == defaultPort ? "\(scheme)://\(host)" : "\(scheme)://\(host):\($0)" } ?? "\(scheme)://\(host)"
    }

    /// Whether a page at `origin` may act for `application`: same origin as this server (`host`, the request's
    /// authority), or one of the application's allowed origins. No `Origin` (native clients) is allowed.
    static func isAllowed(origin: String?, host: String?, application: ApplicationPolicy) -> Bool {
        guard let origin else { return true }
        guard let normalized = normalizedOrigin(origin) else { return false }
        if let host, let authority = normalized.split(separator: "/").last, authority == host.lowercased() { return true }
        return application.allowedOrigins.contains(normalized)
    }

    /// A comma-separated list of HTTP field names (what a preflight may ask for).
    static func isFieldNameList(_ text: String) -> Bool {
        text.count <= 1024 && text.split(separator: ",").allSatisfy { name in
            let trimmed = name.trimmingCharacters(in: .whitespaces)
            return !trimmed.isEmpty && trimmed.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_".unicodeScalars.contains($0)) }
        }
    }
}
