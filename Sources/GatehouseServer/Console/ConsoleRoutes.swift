import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web console at `/console`: a static app (HTML, CSS, scripts: `ConsoleAssets`, embedded into the binary at build
/// time) over the admin API.
///
/// Every answer carries a strict Content-Security-Policy (only Gatehouse's own scripts and styles, no inline
/// script or style, no framing, forms never submitted by the browser itself), `nosniff`, no referrer, and
/// `Cache-Control: no-cache` with an `ETag`, so a browser revalidates (`304`) and picks up a new binary's assets at
/// once.
struct ConsoleRoutes<Context: RequestContext> {
    /// One served file: its bytes, type and entity tag.
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String

        init(_ text: String, contentType: String) {
            body = ByteBuffer(string: text)
            self.contentType = contentType
            etag = "\"" + String(Self.fnv1a(text.utf8), radix: 16) + "\""
        }

        /// FNV-1a, 64 bits: enough to tell two builds' assets apart.
        static func fnv1a(_ bytes: String.UTF8View) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return hash
        }
    }

    /// The policy every console answer carries.
    static var contentSecurityPolicy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The fields every console answer carries besides the policy.
    static var securityHeaders: [(HTTPField.Name, String)] {
        [
            (HTTPField.Name("Content-Security-Policy")!, contentSecurityPolicy),
            (HTTPField.Name("X-Content-Type-Options")!, "nosniff"),
            (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
            (HTTPField.Name("X-Frame-Options")!, "DENY"),
            (HTTPField.Name("Cross-Origin-Opener-Policy")!, "same-origin"),
        ]
    }

    /// The console's files by path under the router.
    static var assets: [(path: String, asset: Asset)] {
        [
            ("console", Asset(ConsoleAssets.html, contentType: "text/html; charset=utf-8")),
            ("console/console.css", Asset(ConsoleAssets.css, contentType: "text/css; charset=utf-8")),
            ("console/console.js", Asset(ConsoleAssets.script, contentType: "text/javascript; charset=utf-8")),
            ("console/console-chart.js", Asset(ConsoleAssets.chartScript, contentType: "text/javascript; charset=utf-8")),
            ("console/console-pages.js", Asset(ConsoleAssets.pagesScript, contentType: "text/javascript; charset=utf-8")),
            ("console/icon.svg", Asset(ConsoleAssets.icon, contentType: "image/svg+xml")),
        ]
    }

    func add(to router: Router<Context>) {
        for (path, asset) in Self.assets {
            router.get(RouterPath(path)) { request, _ in Self.answer(asset, ifNoneMatch: request.headers[.ifNoneMatch]) }
        }
    }

    /// The asset, or `304` when the browser's copy (`If-None-Match`) is current.
    static func answer(_ asset: Asset, ifNoneMatch: String?) -> Response {
        var headers: HTTPFields = [.contentType: asset.contentType, .cacheControl: "no-cache", .eTag: asset.etag]
        for (name, value) in securityHeaders { headers[name] = value }
        let tags = (ifNoneMatch ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if tags.contains(asset.etag) || tags.contains("*") {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: asset.body))
    }
}
