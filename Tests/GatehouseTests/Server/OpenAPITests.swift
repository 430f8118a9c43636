import Foundation
import GatehouseProtocol
import NIOHTTP1
import Testing

/// The served OpenAPI document stays true: real answers of every endpoint conform to it.
@Suite(.timeLimit(.minutes(3))) struct OpenAPITests {
    @Test func realAnswersConformToTheServedDocument() async throws {
        try await TestServer.run { server in
            let served = try await HTTP.send(.GET, server.baseURL + "/openapi.json")
            #expect(served.status == 200)
            let checker = OpenAPIChecker(document: try #require(served.json))
            #expect(served.json?["openapi"] == "3.1.0")
            var exchanges: [(String, String, TestResponse)] = []
            func record(_ method: String, _ url: String, _ response: TestResponse) {
                exchanges.append((method, String(url.dropFirst(server.baseURL.count)), response))
            }
            let api = server.baseURL + "/mfp/api"
            var client = try ProtocolClient(server)
            let registration = try await client.registerRequest()
            record("POST", api + "/registration/v1/self", registration)
            try await client.register()
            record("POST", api + "/registration/v1/self", try await ProtocolClient(server, app: "com.nobody").registerRequest())
            record("POST", api + "/preauth/v1/preauthorize", try await client.preauthorize(scope: "accessRestricted"))
            record("POST", api + "/preauth/v1/preauthorize", try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]))
            record("POST", api + "/preauth/v1/preauthorize", try await client.preauthorize(scope: "Nope"))
            record("POST", api + "/preauth/v1/preauthorize",
                   try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: [("Content-Type", "text/plain")], body: Data("x".utf8)))
            let authorization = try await client.authorize(scope: "accessRestricted")
            record("GET", api + "/az/v1/authorization", authorization)
            record("GET", api + "/az/v1/authorization", try await client.authorize(scope: "accessRestricted", redirectURI: "https://evil"))
            let code = try #require(ProtocolClient.code(from: authorization))
            let tokenResponse = try await client.token(code: code)
            record("POST", api + "/az/v1/token", tokenResponse)
            record("POST", api + "/az/v1/token", try await client.token(code: code))
            let token = try tokenResponse.decode(TokenResponse.self).access_token
            let basic = ("Authorization", "Basic " + Data("balance-service:s3cret".utf8).base64EncodedString())
            record("POST", api + "/az/v1/introspection", try await HTTP.postForm(api + "/az/v1/introspection", [("token", token)], headers: [basic]))
            record("POST", api + "/az/v1/introspection", try await HTTP.postForm(api + "/az/v1/introspection", [("token", token)]))
            let balanceURL = api + "/adapters/ResourceAdapter/balance"
            record("GET", balanceURL, try await HTTP.send(.GET, balanceURL, headers: [("Authorization", "Bearer \(token)")]))
            record("GET", balanceURL, try await HTTP.send(.GET, balanceURL))
            record("GET", balanceURL, try await HTTP.send(.GET, balanceURL, headers: [("Authorization", "Bearer \(try await client.obtainToken(scope: nil).access_token)")]))
            record("GET", api + "/adapters/ResourceAdapter/unprotected", try await HTTP.send(.GET, api + "/adapters/ResourceAdapter/unprotected"))
            record("POST", api + "/preauth/v1/heartbeat", try await HTTP.postForm(api + "/preauth/v1/heartbeat", [
                ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", try client.assertion(jti: nil, aud: nil)),
            ]))
            record("POST", api + "/az/v1/revoke", try await HTTP.postForm(api + "/az/v1/revoke", [("token", token)], headers: [basic]))
            record("POST", api + "/preauth/v1/logout", try await client.logout(securityCheck: "PinCodeAttempts"))
            record("POST", api + "/preauth/v1/logout", try await client.logout(securityCheck: "Nope"))
            let clientID = try #require(client.clientID)
            let read = api + "/registration/v1/self/\(clientID)?" + HTTP.formEncode([
                ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", try client.assertion(jti: nil, aud: nil)),
            ])
            record("GET", read, try await HTTP.send(.GET, read))
            let wrongType = api + "/az/v1/authorization?response_type=token&client_id=x&redirect_uri=y"
            record("GET", wrongType, try await HTTP.send(.GET, wrongType))
            record("POST", api + "/loguploader",
                   try await HTTP.send(.POST, api + "/loguploader", headers: [("Content-Type", "text/plain")], body: Data("a log".utf8)))
            for path in ["/health", "/ready", "/.well-known/jwks.json", "/mfp/api/az/v1/jwks", "/.well-known/oauth-authorization-server"] {
                record("GET", server.baseURL + path, try await HTTP.send(.GET, server.baseURL + path))
            }
            #expect(exchanges.count == 28)
            #expect(exchanges.suffix(8).prefix(3).map(\.2.status) == [200, 400, 200])
            for (method, path, response) in exchanges {
                let problems = checker.problems(method: method, path: path, response: response)
                #expect(problems.isEmpty, "\(problems)")
            }
            // The checker itself catches a wrong body.
            let wrong = checker.validate(["token_type": "MAC"], against: ["$ref": "#/components/schemas/TokenResponse"], at: "x")
            #expect(wrong.count == 4)
        }
    }

    /// Every documented path is routed with exactly its documented methods (and `HEAD` wherever `GET`, as `GET`
    /// without the body): `OPTIONS` answers `204` with that `Allow`, an undeclared method `405` with the same `Allow`
    /// and a JSON error; an unknown path stays `404`.
    @Test func undeclaredMethodsAnswer405WithAllow() async throws {
        try await TestServer.run { server in
            let document = try #require(try await HTTP.send(.GET, server.baseURL + "/openapi.json").json)
            let paths = try #require(document["paths"]?.objectValue)
            #expect(paths.count == 45)
            let httpMethods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
            for (template, item) in paths {
                let path = template.replacingOccurrences(of: "{clientId}", with: "some-client")
                    .replacingOccurrences(of: "{check}", with: "some-check").replacingOccurrences(of: "{account}", with: "user:someone")
                    .replacingOccurrences(of: "{kid}", with: "some-kid").replacingOccurrences(of: "{application}", with: "com.some.app")
                    .replacingOccurrences(of: "{platform}", with: "ios").replacingOccurrences(of: "{deviceId}", with: "some-device")
                let declared = Set((item.objectValue ?? [:]).keys.filter(httpMethods.contains).map { $0.uppercased() })
                let options = try await HTTP.send(.OPTIONS, server.baseURL + path)
                #expect(options.status == 204, "OPTIONS \(template)")
                let allow = Set((options.header("Allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                // HEAD is answered wherever GET is (as GET without the body).
                let implicit: Set<String> = declared.contains("GET") ? ["OPTIONS", "HEAD"] : ["OPTIONS"]
                #expect(allow == declared.union(implicit), "\(template): Allow \(allow), documented \(declared)")
                if declared.contains("GET"), !template.contains("authorization") {
                    let head = try await HTTP.send(.HEAD, server.baseURL + path)
                    let get = try await HTTP.send(.GET, server.baseURL + path)
                    #expect(head.status == get.status, "HEAD \(template)")
                    #expect(head.body.isEmpty)
                }
                for method in [HTTPMethod.GET, .HEAD, .POST, .PUT, .DELETE, .PATCH, .TRACE] where !allow.contains(method.rawValue) {
                    let refused = try await HTTP.send(method, server.baseURL + path)
                    #expect(refused.status == 405, "\(method) \(template)")
                    #expect(refused.header("Allow") == options.header("Allow"))
                    if method == .HEAD {
                        #expect(refused.body.isEmpty)
                    } else {
                        #expect(refused.json?["errorCode"] == "METHOD_NOT_ALLOWED")
                    }
                }
            }
            let unknown = try await HTTP.send(.TRACE, server.baseURL + "/mfp/api/nothing")
            #expect(unknown.status == 404)
            #expect(unknown.json?["errorCode"] == "NOT_FOUND")
        }
    }
}
