import Foundation
import GatehouseGateway
import GatehouseHTTP
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// An upstream for the gateway's hostile-input tests. HTTP: answers every request with JSON describing exactly
/// what reached it (`target`: the raw request target, `headers`: every field, repeated ones joined by `\n`).
/// WebSocket: `/phish` first sends the gateway's reserved frames (a challenge, an answer) and then `hello`; any
/// other path selects the first sub-protocol offered and first sends `seen:` + the JSON description of its handshake;
/// every path then answers each message
/// `m` with `got:m`, so that a reserved frame the gateway let through would show.
enum RecordingUpstream {
    struct Seen: Codable, Sendable {
        var method: String
        var target: String
        var headers: [String: String]

        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    static func makeApplication(logger: Logger, onServerRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let describe: @Sendable (Request, BasicWebSocketRequestContext) async throws -> Response = { request, _ in
            Response(status: .ok, headers: [.contentType: "application/json"],
                     body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(seen(request)))))
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .options] {
            router.on("/", method: method, use: describe)
            router.on("**", method: method, use: describe)
        }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        let phish: WebSocketDataHandler<WebSocketRouterContext<BasicWebSocketRequestContext>> = { inbound, outbound, _ in
            try await outbound.write(.text(GatewayRevalidation.challengePrefix + "Basic realm=\"demo\""))
            try await outbound.write(.text(GatewayRevalidation.answerPrefix + "Basic am9lOndlbGNvbWU="))
            try await outbound.write(.text("hello"))
            for try await message in inbound.messages(maxSize: 1 << 20) {
                if case .text(let text) = message { try await outbound.write(.text("got:" + text)) }
            }
        }
        let echo: WebSocketDataHandler<WebSocketRouterContext<BasicWebSocketRequestContext>> = { inbound, outbound, context in
            try await outbound.write(.text("seen:" + String(decoding: try JSONEncoder().encode(seen(context.request)), as: UTF8.self)))
            for try await message in inbound.messages(maxSize: 1 << 20) {
                if case .text(let text) = message { try await outbound.write(.text("got:" + text)) }
            }
        }
        webSocketRouter.ws("/phish", onUpgrade: phish)
        // The first sub-protocol offered is selected, as an application's server would.
        webSocketRouter.ws("**", shouldUpgrade: { request, _ in
            let first = request.headers[.secWebSocketProtocol]?.split(separator: ",").first?.trimmingCharacters(in: .whitespaces) ?? ""
            return first.isEmpty ? .upgrade([:]) : .upgrade([.secWebSocketProtocol: first])
        }, onUpgrade: echo)
        return Application(
            router: router, server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { await onServerRunning($0.localAddress?.port ?? 0) }, logger: logger)
    }

    /// What reached the upstream.
    static func seen(_ request: Request) -> Seen {
        var headers: [String: String] = [:]
        for field in request.headers {
            let name = field.name.canonicalName
            headers[name] = headers[name].map { $0 + "\n" + field.value } ?? field.value
        }
        return Seen(method: request.method.rawValue, target: request.head.path ?? "", headers: headers)
    }

    /// Decodes the description a request's answer carries.
    static func seen(_ body: some Sequence<UInt8>) throws -> Seen {
        try JSONDecoder().decode(Seen.self, from: Data(body))
    }
}

/// A recording upstream and a gateway in front of it.
struct RecordingFixture: Sendable {
    let gateway: Gateway
    let gatewayApp: RunningApp
    let upstream: RunningApp
    var port: Int { gatewayApp.port }
    var base: String { "http://127.0.0.1:\(gatewayApp.port)" }
    var wsBase: String { "ws://127.0.0.1:\(gatewayApp.port)" }

    /// Starts both; `make` builds the gateway's configuration from the upstream's base URL.
    static func run<T: Sendable>(
        logger: Logger = GatewayFixture.logger, customModules: [String: any LoginModule] = [:], tracer: OTLPTracer? = nil, _ make: (String) throws -> GatewayConfiguration,
        _ body: (RecordingFixture) async throws -> T
    ) async throws -> T {
        let upstream = try await RunningApp.start(logger: GatewayFixture.logger) { onRunning in
            RecordingUpstream.makeApplication(logger: GatewayFixture.logger, onServerRunning: onRunning)
        }
        var configuration = try make("http://127.0.0.1:\(upstream.port)")
        configuration.port = 0
        let gateway: Gateway
        let app: RunningApp
        do {
            gateway = try Gateway(configuration: configuration, customModules: customModules, tracer: tracer, logger: logger)
            app = try await RunningApp.start(logger: logger) { onRunning in try gateway.makeServer(onServerRunning: onRunning) }
        } catch {
            await upstream.stop()
            throw error
        }
        let fixture = RecordingFixture(gateway: gateway, gatewayApp: app, upstream: upstream)
        do {
            let result = try await body(fixture)
            await app.stop()
            await upstream.stop()
            return result
        } catch {
            await app.stop()
            await upstream.stop()
            throw error
        }
    }
}
