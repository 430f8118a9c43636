import Foundation
import GatehouseProtocol
import NIOHTTP1
import Testing

/// The web console's files at `/console`: served by the binary itself with their types, a strict
/// Content-Security-Policy and revalidation; nothing inline, nothing from elsewhere.
@Suite(.timeLimit(.minutes(3))) struct ConsoleTests {
    static let assets: [(path: String, type: String)] = [
        ("/console", "text/html; charset=utf-8"), ("/console/console.css", "text/css; charset=utf-8"),
        ("/console/console.js", "text/javascript; charset=utf-8"), ("/console/console-chart.js", "text/javascript; charset=utf-8"),
        ("/console/console-pages.js", "text/javascript; charset=utf-8"), ("/console/icon.svg", "image/svg+xml"),
    ]

    @Test(.timeLimit(.minutes(3))) func everyFileIsServedWithItsTypeAStrictPolicyAndRevalidation() async throws {
        try await TestServer.run { server in
            for (path, type) in Self.assets {
                let answer = try await HTTP.send(.GET, server.baseURL + path)
                #expect(answer.status == 200, "\(path)")
                #expect(answer.header("Content-Type") == type, "\(path)")
                #expect(!answer.body.isEmpty, "\(path)")
                let policy = answer.header("Content-Security-Policy") ?? ""
                #expect(policy.contains("default-src 'self'") && policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
                #expect(answer.header("X-Content-Type-Options") == "nosniff")
                #expect(answer.header("Cache-Control") == "no-cache")
                let etag = try #require(answer.header("ETag"), "\(path)")
                let again = try await HTTP.send(.GET, server.baseURL + path, headers: [("If-None-Match", etag)])
                #expect(again.status == 304, "\(path)")
                #expect(again.body.isEmpty)
                #expect(try await HTTP.send(.GET, server.baseURL + path, headers: [("If-None-Match", "\"other\"")]).status == 200)
                let head = try await HTTP.send(.HEAD, server.baseURL + path)
                #expect(head.status == 200 && head.body.isEmpty, "HEAD \(path)")
            }
            let post = try await HTTP.send(.POST, server.baseURL + "/console")
            #expect(post.status == 405)
            #expect(try await HTTP.send(.GET, server.baseURL + "/console/nothing.js").status == 404)
        }
    }

    @Test(.timeLimit(.minutes(3))) func thePageHoldsNoInlineScriptOrStyleAndLoadsNothingFromElsewhere() async throws {
        try await TestServer.run { server in
            let page = String(decoding: try await HTTP.send(.GET, server.baseURL + "/console").body, as: UTF8.self)
            // Every script and stylesheet the page names is one of ours, and served.
            let referenced = page.matches(of: /(?:src|href)="([^"#]+)"/).map { String($0.output.1) }
            #expect(Set(referenced) == Set(Self.assets.dropFirst().map(\.path)))
            #expect(page.matches(of: /<script(?![^>]*\bsrc=)[^>]*>/).isEmpty, "an inline script")
            #expect(!page.contains("<style") && !page.contains(" style=") && !page.contains(" onclick="))
            for (path, _) in Self.assets {
                let text = String(decoding: try await HTTP.send(.GET, server.baseURL + path).body, as: UTF8.self)
                // No CDN, no font or script from another host: the machines may be offline.
                let external = text.matches(of: /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/).map { String($0.output) }
                #expect(external.allSatisfy { $0 == "http://www.w3.org" }, "\(path): \(external)")
                #expect(!text.contains("innerHTML") && !text.contains("eval("), "\(path)")
            }
        }
    }

    /// The console sends an account as a path segment percent-encoded (`user%3Ajohn`): the admin API decodes it.
    @Test(.timeLimit(.minutes(3))) func aPercentEncodedAccountIsUnlocked() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            for _ in 0..<3 {
                var client = try ProtocolClient(server)
                try await client.register()
                _ = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "wrong"]])
            }
            let locked = try await Admin.send(.GET, server, "/accounts", token: writer)
            #expect(locked.json?["accounts"]?.arrayValue?.compactMap { $0["account"]?.stringValue } == ["user:john"])
            let unlocked = try await Admin.send(.DELETE, server, "/accounts/user%3Ajohn", token: writer)
            #expect(unlocked.status == 200)
            #expect(unlocked.json?["unlocked"] == "user:john")
            #expect(try await Admin.send(.GET, server, "/accounts", token: writer).json?["accounts"]?.arrayValue?.isEmpty == true)
            #expect(try await Admin.send(.DELETE, server, "/accounts/user%3Ajohn", token: writer).status == 404)
        }
    }
}
