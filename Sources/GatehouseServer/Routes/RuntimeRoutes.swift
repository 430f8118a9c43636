import HTTPTypes
import GatehouseChecks
import GatehouseProtocol
import Hummingbird
import NIOCore

/// The MobileFirst 8.0 runtime protocol under `/mfp/api` (the MobileFirst Server runtime REST API).
struct RuntimeRoutes<Context: ClientRequestContext> {
    let service: AuthorizationService

    /// Where the runtime API is served.
    static var prefix: String { "mfp/api" }

    func add(to router: Router<Context>) {
        let api = router.group(RouterPath(Self.prefix))
        api.post("registration/v1/self", use: register)
        api.put("registration/v1/self/:clientId", use: updateRegistration)
        api.get("registration/v1/self/:clientId", use: readRegistration)
        api.post("preauth/v1/preauthorize", use: preauthorize)
        api.get("az/v1/authorization", use: authorize)
        api.get("az/v1/authorization/redirect/:clientId", use: redirectTarget)
        api.post(RouterPath(Self.token), use: token)
        api.post(RouterPath(Self.introspection), use: introspect)
        api.post("az/v1/revoke", use: revoke)
        api.post("preauth/v1/logout", use: logout)
        api.post("preauth/v1/heartbeat", use: heartbeat)
        api.post("loguploader", use: uploadLogs)
    }

    /// `POST loguploader`: the client logs and analytics the MobileFirst SDKs send. Gatehouse has no analytics
    /// service: the body (any type, up to 1 MiB) is read and discarded, and the SDK told it was received, so it
    /// empties its buffer instead of sending the same logs again.
    @Sendable func uploadLogs(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let buffer = try await RequestReading.body(of: &request, upTo: 1024 * 1024, tooLarge: "Client logs are limited to 1 MiB a request.")
        context.logger.debug("Discarded \(buffer.readableBytes) bytes of client logs")
        return JSONBody.response(.ok, [String: String]())
    }

    @Sendable func register(_ request: Request, context: Context) async throws -> Response {
        var request = request
        if let registrations = service.policies.current.registrationThrottle, let address = context.clientAddress,
           try await !registrations.admit(address, now: EpochTime.nowMillis()) {
            throw GatehouseError(.tooManyRequests, "TOO_MANY_REGISTRATIONS",
                                 "Too many registrations from this address; try again later.",
                                 headers: [.retryAfter: String(max(registrations.window / 1000, 1))])
        }
        let body = try await RequestReading.json(RegistrationRequest.self, from: &request)
        let clientID = try await service.register(body, origin: request.headers[.origin], host: context.forwardedHost ?? request.head.authority,
                                                  address: context.clientAddress)
        return JSONBody.response(.created, ["clientId": clientID], headers: [.location: "/mfp/api/registration/clients/\(clientID)"])
    }

    @Sendable func updateRegistration(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let clientID = try context.parameters.require("clientId")
        let body = try await RequestReading.json(RegistrationRequest.self, from: &request)
        try await service.updateRegistration(clientID: clientID, body)
        // The web SDK stores the updated data only when the answer names the client in `Location`.
        return JSONBody.response(.ok, ["clientId": clientID], headers: [.location: "/mfp/api/registration/clients/\(clientID)"])
    }

    @Sendable func readRegistration(_ request: Request, context: Context) async throws -> Response {
        let clientID = try context.parameters.require("clientId")
        let record = try await service.registration(clientID: clientID, assertion: ClientAssertion(form: RequestReading.query(request)))
        let registration: JSON = [
            "device": .object([
                "id": .string(record.data.device.id), "hardware": JSON(record.data.device.hardware),
                "platform": JSON(record.data.device.platform), "deviceDisplayName": JSON(record.data.device.deviceDisplayName),
            ]),
            "application": .object([
                "id": .string(record.data.application.id), "clientPlatform": .string(record.data.application.clientPlatform),
                "version": JSON(record.data.application.version),
            ]),
            "attributes": .object(record.data.attributes ?? [:]),
        ]
        return JSONBody.response(.ok, ["registration": registration])
    }

    @Sendable func preauthorize(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let body = try await RequestReading.json(PreauthorizeRequest.self, from: &request)
        var headers: [String: String] = [:]
        for field in request.headers where field.name != .authorization && field.name != .cookie {
            headers[field.name.canonicalName] = field.value
        }
        let outcome = try await service.preauthorize(body, checkRequest: CheckRequest(headers: headers, remoteAddress: context.clientAddress))
        var responseHeaders: HTTPFields = [.cacheControl: "no-store"]
        if outcome.status == 401 { responseHeaders[.wwwAuthenticate] = ProtocolNames.mfpChallenge }
        return JSONBody.response(.init(code: outcome.status), outcome.body, headers: responseHeaders)
    }

    @Sendable func authorize(_ request: Request, context: Context) async throws -> Response {
        let location = try await service.authorize(AuthorizationRequest(query: RequestReading.query(request)), host: context.forwardedHost ?? request.head.authority)
        return Response(status: .found, headers: [.location: location, .cacheControl: "no-store", .contentLength: "0"])
    }

    @Sendable func redirectTarget(_ request: Request, context: Context) async throws -> Response {
        let query = RequestReading.query(request)
        if let code = query["code"], !code.isEmpty {
            return JSONBody.response(.ok, ["code": code], headers: [.cacheControl: "no-store"])
        }
        throw GatehouseError(.badRequest, query["error"] ?? "invalid_request", query["errorMsg"] ?? "No code was issued.", style: .oauth)
    }

    @Sendable func token(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let form = try await oauthForm(&request)
        let tokenRequest = try TokenRequest(form: form, authorization: request.headers.value(of: .authorization))
        let token = try await service.token(tokenRequest, address: context.clientAddress, certificate: { await context.presentedCertificate() })
        return JSONBody.response(.ok, token, headers: Self.tokenFields)
    }

    static var introspection: String { "az/v1/introspection" }

    /// The runtime requests answered from memory on the event loop when they can be (``LoopAnswers``): an
    /// introspection whose caller, token and client were all checked or read before, and a client-credentials
    /// token for a caller whose secret was verified before. Each as the router answers it.
    var loopRoutes: [LoopAnswers.Route] {
        let service = self.service
        let introspection = "/\(Self.prefix)/\(Self.introspection)", token = "/\(Self.prefix)/\(Self.token)"
        return [
            LoopAnswers.Route(method: .post, path: introspection, template: introspection) { request in
                guard let (form, authorization) = Self.form(request),
                      let answer = service.rememberedIntrospection(TokenManagementRequest(form: form, authorization: authorization))
                else { return nil }
                return LoopAnswers.Answer(headers: JSONBody.headers(Self.introspectionFields), body: JSONBody.buffer(answer))
            },
            LoopAnswers.Route(method: .post, path: token, template: token) { request in
                guard let (form, authorization) = Self.form(request),
                      let tokenRequest = try? TokenRequest(form: form, authorization: authorization),
                      let answer = service.rememberedClientCredentials(tokenRequest, address: request.clientAddress)
                else { return nil }
                return LoopAnswers.Answer(headers: JSONBody.headers(Self.tokenFields), body: JSONBody.buffer(answer))
            },
        ]
    }

    /// The form of a request answered on the loop, if it has the form's media type and an `Authorization` field.
    private static func form(_ request: LoopAnswers.Request) -> (form: [String: String], authorization: String)? {
        guard let authorization = request.head.headerFields.value(of: .authorization),
              RequestReading.mediaType(of: request.head.headerFields.value(of: .contentType) ?? "", is: RequestReading.formType)
        else { return nil }
        return (RequestReading.parseForm(String(buffer: request.body)), authorization)
    }

    static var token: String { "az/v1/token" }
    /// The fields of a token answer besides its type.
    static var tokenFields: HTTPFields { [.cacheControl: "no-store", .pragma: "no-cache"] }
    /// The fields of an introspection answer besides its type.
    static var introspectionFields: HTTPFields { [.cacheControl: "no-store"] }

    @Sendable func introspect(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let form = try await oauthForm(&request)
        let introspection = try await service.introspect(TokenManagementRequest(form: form, authorization: request.headers.value(of: .authorization)))
        return JSONBody.response(.ok, introspection, headers: Self.introspectionFields)
    }

    @Sendable func revoke(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let form = try await oauthForm(&request)
        try await service.revoke(TokenManagementRequest(form: form, authorization: request.headers.value(of: .authorization)),
                                 address: context.clientAddress)
        return JSONBody.response(.ok, [String: String]())
    }

    /// A form body, with errors in the OAuth shape.
    private func oauthForm(_ request: inout Request) async throws -> [String: String] {
        do {
            return try await RequestReading.form(from: &request)
        } catch let error as GatehouseError {
            throw GatehouseError(error.status, error.status == .unsupportedMediaType || error.status == .badRequest ? "invalid_request" : error.code, error.message, style: .oauth)
        }
    }

    @Sendable func logout(_ request: Request, context: Context) async throws -> Response {
        var request = request
        let form = try await RequestReading.form(from: &request)
        try await service.logout(securityCheck: form["security_check"], assertion: ClientAssertion(form: form))
        return JSONBody.response(.ok, [String: String]())
    }

    @Sendable func heartbeat(_ request: Request, context: Context) async throws -> Response {
        var request = request
        try await service.heartbeat(assertion: ClientAssertion(form: try await RequestReading.form(from: &request)))
        return JSONBody.response(.ok, [String: String]())
    }
}

extension HTTPField.Name {
    static let pragma = Self("Pragma")!
}
