import AsyncHTTPClient
import Foundation
import GatehouseGateway
import GatehouseResourceServer
import NIOSSL
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// Confidential clients authenticated by TLS client certificate, and their certificate-bound tokens (RFC 8705;
/// issue 35), against the real `gatehouse serve --tls-client-ca`, with `curl --cert` as the client.
@Suite(.timeLimit(.minutes(3))) struct MutualTLSTests {
    static func policy(selfSignedThumbprint: String) -> String {
        """
        securityChecks: { PinCodeAttempts: { class: PinCodeAttempts } }
        applications:
          - { id: com.sample.pincodeswift, platform: ios, scopeElementMapping: { accessRestricted: PinCodeAttempts } }
        confidentialClients:
          - { id: balance-service, secretHash: "$2b$04$axi4I88RAaRiFuao0JVORezeW1NmWqrlkcjbmbaiCdWPCDsWSH.J2", allowedScope: "authorization.introspect accessRestricted" }
          - { id: bank-pki, tokenEndpointAuthMethod: tls_client_auth, tlsClientAuthSubjectDN: "CN=bank-pki,O=Example Bank", allowedScope: "accessRestricted gatehouse.admin.read" }
          - { id: bank-self, tokenEndpointAuthMethod: self_signed_tls_client_auth, certificateSHA256: "\(selfSignedThumbprint)", allowedScope: accessRestricted }
        """
    }

    /// `curl` with the test CA and, when given, a client certificate; the answer's body and status.
    static func exchange(_ url: String, certificate: (certificate: String, key: String)?, ca: String, arguments: [String] = [])
        async throws -> (status: Int, body: String)
    {
        var command = ["--cacert", ca, "-w", "\n%{http_code}"] + arguments
        if let certificate { command += ["--cert", certificate.certificate, "--key", certificate.key] }
        let result = try await curl(command + [url])
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    static func token(_ base: String, client: String, certificate: (certificate: String, key: String)?, ca: String) async throws
        -> (status: Int, body: String)
    {
        try await exchange(base + "/mfp/api/az/v1/token", certificate: certificate, ca: ca,
                           arguments: ["-d", "grant_type=client_credentials", "-d", "client_id=\(client)", "-d", "scope=accessRestricted"])
    }

    static func claims(ofTokenIn body: String) throws -> JSON {
        let answer = try JSONDecoder().decode(JSON.self, from: Data(body.utf8))
        let token = try #require(answer["access_token"]?.stringValue)
        let payload = try #require(Base64URL.decode(token.split(separator: ".")[1]))
        return try JSONDecoder().decode(JSON.self, from: payload)
    }

    @Test func clientsAuthenticatedByCertificateGetTokensOnlyTheirCertificateCanUse() async throws {
        let pki = try await TestCertificates.make(commonName: "127.0.0.1")
        defer { try? FileManager.default.removeItem(atPath: pki.directory) }
        let bankPKI = try await pki.issueClient("bank-pki", subject: "/O=Example Bank/CN=bank-pki")
        let otherSubject = try await pki.issueClient("other", subject: "/O=Example Bank/CN=someone-else")
        let impostor = try await pki.selfSignedClient("impostor", subject: "/O=Example Bank/CN=bank-pki")
        let bankSelf = try await pki.selfSignedClient("bank-self", subject: "/CN=bank-self")
        let policyPath = pki.directory + "/policy.yaml"
        try Self.policy(selfSignedThumbprint: try await TestCertificates.thumbprint(of: bankSelf.certificate))
            .write(toFile: policyPath, atomically: true, encoding: .utf8)
        let server = try GatehouseProcess.start([
            "serve", "--port", "0", "--data", TestServer.temporaryDirectory(), "--policy", policyPath, "--sample-adapter", "true",
            "--tls-certificate", pki.certificatePath, "--tls-key", pki.keyPath, "--tls-client-ca", pki.caPath,
        ])
        defer { server.stop() }
        let banner = try await server.waitForLine(containing: "listens on https://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init))
        let balance = base + "/mfp/api/adapters/ResourceAdapter/balance"

        // tls_client_auth: a certificate of the CA with the registered subject.
        let issued = try await Self.token(base, client: "bank-pki", certificate: bankPKI, ca: pki.caPath)
        #expect(issued.status == 200, "\(issued.body)")
        let bound = try Self.claims(ofTokenIn: issued.body)
        let thumbprint = try await TestCertificates.thumbprint(of: bankPKI.certificate)
        #expect(bound["cnf"]?["x5t#S256"]?.stringValue == thumbprint)
        let token = try #require(JSONDecoder().decode(JSON.self, from: Data(issued.body.utf8))["access_token"]?.stringValue)
        let bearer = ["-H", "Authorization: Bearer \(token)"]
        // The token works on a connection with its certificate, and on no other.
        #expect(try await Self.exchange(balance, certificate: bankPKI, ca: pki.caPath, arguments: bearer).status == 200)
        let without = try await Self.exchange(balance, certificate: nil, ca: pki.caPath, arguments: bearer)
        #expect(without.status == 401 && without.body.contains("invalid_token"), "\(without.body)")
        #expect(try await Self.exchange(balance, certificate: bankSelf, ca: pki.caPath, arguments: bearer).status == 401)
        // HTTP/2 streams find the certificate of their connection.
        #expect(try await Self.exchange(balance, certificate: bankPKI, ca: pki.caPath, arguments: bearer + ["--http2"]).status == 200)

        // The same subject self-signed, another subject from the CA, no certificate at all: refused.
        let forged = try await Self.token(base, client: "bank-pki", certificate: impostor, ca: pki.caPath)
        #expect(forged.status == 401 && forged.body.contains("invalid_client"), "\(forged.body)")
        #expect(try await Self.token(base, client: "bank-pki", certificate: otherSubject, ca: pki.caPath).status == 401)
        let none = try await Self.token(base, client: "bank-pki", certificate: nil, ca: pki.caPath)
        #expect(none.status == 401 && none.body.contains("TLS client certificate"), "\(none.body)")

        // self_signed_tls_client_auth: exactly the registered certificate.
        let selfIssued = try await Self.token(base, client: "bank-self", certificate: bankSelf, ca: pki.caPath)
        #expect(selfIssued.status == 200, "\(selfIssued.body)")
        #expect(try Self.claims(ofTokenIn: selfIssued.body)["cnf"]?["x5t#S256"]?.stringValue == (try await TestCertificates.thumbprint(of: bankSelf.certificate)))
        #expect(try await Self.token(base, client: "bank-self", certificate: bankPKI, ca: pki.caPath).status == 401)
        // A secret client's token (no certificate asked) is bound to nothing.
        let secret = try await Self.exchange(base + "/mfp/api/az/v1/token", certificate: nil, ca: pki.caPath,
                                             arguments: ["-u", "balance-service:s3cret", "-d", "grant_type=client_credentials", "-d", "scope=accessRestricted"])
        #expect(secret.status == 200)
        #expect(try Self.claims(ofTokenIn: secret.body)["cnf"] == nil)

        // Introspection tells a resource server what the token is bound to.
        let introspected = try await Self.exchange(base + "/mfp/api/az/v1/introspection", certificate: nil, ca: pki.caPath,
                                                   arguments: ["-u", "balance-service:s3cret", "-d", "token=\(token)"])
        #expect(introspected.status == 200)
        #expect(try JSONDecoder().decode(JSON.self, from: Data(introspected.body.utf8))["cnf"]?["x5t#S256"]?.stringValue == thumbprint)
        // The metadata says so.
        let metadata = try await Self.exchange(base + "/.well-known/oauth-authorization-server", certificate: nil, ca: pki.caPath)
        #expect(metadata.body.contains("\"tls_client_certificate_bound_access_tokens\":true") && metadata.body.contains("self_signed_tls_client_auth"))
        // The admin API holds an operator's bound token to its certificate too.
        let operatorToken = try await Self.exchange(base + "/mfp/api/az/v1/token", certificate: bankPKI, ca: pki.caPath, arguments: [
            "-d", "grant_type=client_credentials", "-d", "client_id=bank-pki", "-d", "scope=gatehouse.admin.read"])
        let adminBearer = try ["-H", "Authorization: Bearer " + #require(JSONDecoder().decode(JSON.self, from: Data(operatorToken.body.utf8))["access_token"]?.stringValue)]
        #expect(try await Self.exchange(base + "/admin/v1/policy", certificate: bankPKI, ca: pki.caPath, arguments: adminBearer).status == 200)
        #expect(try await Self.exchange(base + "/admin/v1/policy", certificate: nil, ca: pki.caPath, arguments: adminBearer).status == 401)

        // The gateway's gatehouse-token module: the bound token only from a connection that presents its certificate.
        try await Self.throughTheGateway(token: token, certificate: bankPKI, other: bankSelf, jwks: base + "/.well-known/jwks.json", pki: pki)
    }

    static func throughTheGateway(token: String, certificate: (certificate: String, key: String), other: (certificate: String, key: String),
                                  jwks: String, pki: TestCertificates) async throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(pki.caPath)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let module = GatehouseTokenLoginModule(verifier: LocalTokenVerifier(jwksURL: jwks, httpClient: http))
        do {
            try await RecordingFixture.run(customModules: ["bound-token": module], { upstream in
                var configuration = GatewayConfiguration(
                    realms: [RealmConfiguration(name: "api", scheme: .bearer,
                                                loginModules: [LoginModuleConfiguration(type: "bound-token", flag: .required)])],
                    services: [ServiceConfiguration(name: "api", path: "/api", upstream: upstream, realm: "api")])
                configuration.tls = .init(certificate: pki.certificatePath, key: pki.keyPath, clientCertificates: true)
                return configuration
            }) { fixture async throws in
                let url = "https://127.0.0.1:\(fixture.port)/api/x"
                let bearer = ["-H", "Authorization: Bearer \(token)"]
                #expect(try await Self.exchange(url, certificate: certificate, ca: pki.caPath, arguments: bearer).status == 200)
                #expect(try await Self.exchange(url, certificate: nil, ca: pki.caPath, arguments: bearer).status == 401)
                #expect(try await Self.exchange(url, certificate: other, ca: pki.caPath, arguments: bearer).status == 401)
                // Again, the token now remembered by the module's verifier: still bound.
                #expect(try await Self.exchange(url, certificate: certificate, ca: pki.caPath, arguments: bearer).status == 200)
                #expect(try await Self.exchange(url, certificate: nil, ca: pki.caPath, arguments: bearer).status == 401)
            }
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    @Test func aPolicyNamesWhatACertificateClientLacks() throws {
        func problem(_ entry: String) -> String {
            let yaml = "securityChecks: { Pin: { class: PinCodeAttempts } }\napplications: [{ id: a, platform: ios }]\nconfidentialClients:\n  - \(entry)\n"
            do {
                _ = try SecurityPolicy.parse(yaml: yaml, file: "policy.yaml", registry: .builtIn, services: SecurityCheckServices(users: PolicyTests.NoUsers()))
                return "accepted"
            } catch let error as PolicyError {
                return "\(error.key): \(error.problem)"
            } catch {
                return "\(error)"
            }
        }
        #expect(problem("{ id: a, tokenEndpointAuthMethod: tls_client_auth, allowedScope: x }").hasPrefix("confidentialClients[0].tlsClientAuthSubjectDN: is required"))
        #expect(problem("{ id: a, tokenEndpointAuthMethod: self_signed_tls_client_auth, certificateSHA256: short, allowedScope: x }")
                .hasPrefix("confidentialClients[0].certificateSHA256: is required"))
        #expect(problem("{ id: a, tokenEndpointAuthMethod: tls_client_auth, tlsClientAuthSubjectDN: \"CN=a\", secretHash: x, allowedScope: x }")
                .hasPrefix("confidentialClients[0].secretHash: has no use"))
        #expect(problem("{ id: a, tokenEndpointAuthMethod: private_key_jwt, allowedScope: x }").hasPrefix("confidentialClients[0].tokenEndpointAuthMethod: must be"))
        #expect(problem("{ id: a, tlsClientAuthSubjectDN: \"CN=a\", secretHash: x, allowedScope: x }").hasPrefix("confidentialClients[0].tlsClientAuthSubjectDN: goes with"))
        #expect(problem("{ id: a, tokenEndpointAuthMethod: tls_client_auth, tlsClientAuthSubjectDN: \"CN=a\", allowedScope: x }") == "accepted")
    }

    /// Without `--tls-client-certificates` (or a CA) the server asks for no certificate: a certificate client cannot
    /// authenticate, and the option without TLS stops the start.
    @Test func certificatesAreAskedForOnlyWhenConfigured() async throws {
        let pki = try await TestCertificates.make(commonName: "127.0.0.1")
        defer { try? FileManager.default.removeItem(atPath: pki.directory) }
        let bankSelf = try await pki.selfSignedClient("bank-self", subject: "/CN=bank-self")
        let policyPath = pki.directory + "/policy.yaml"
        try Self.policy(selfSignedThumbprint: try await TestCertificates.thumbprint(of: bankSelf.certificate)).write(toFile: policyPath, atomically: true, encoding: .utf8)
        let refused = try GatehouseProcess.start(["serve", "--port", "0", "--data", TestServer.temporaryDirectory(), "--tls-client-certificates"])
        #expect(try await refused.waitForExit() != 0)
        let message = String(decoding: refused.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("--tls-client-certificates needs --tls-certificate"), "\(message)")
        for ask in [false, true] {
            let server = try GatehouseProcess.start([
                "serve", "--port", "0", "--data", TestServer.temporaryDirectory(), "--policy", policyPath,
                "--tls-certificate", pki.certificatePath, "--tls-key", pki.keyPath,
            ] + (ask ? ["--tls-client-certificates"] : []))
            defer { server.stop() }
            let banner = try await server.waitForLine(containing: "listens on https://")
            let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init))
            #expect(try await Self.token(base, client: "bank-self", certificate: bankSelf, ca: pki.caPath).status == (ask ? 200 : 401))
        }
    }
}
