import Foundation
import GatehouseHTTP
import GatehouseProtocol
import HTTPTypes
public import Hummingbird
import HummingbirdWebSocket
public import Logging
import NIOCore

/// An upstream for tests and the demo: WebSocket echo on every path (selecting the first sub-protocol offered), and
/// an HTTP echo that describes the request it got (`GET /path?query user=<X-Gateway-User> authorization=<...>
/// body=<...>`).
public enum EchoService {
    public static func makeApplication(
        host: String = "127.0.0.1", port: Int = 0, logger: Logger = Logger(label: "echo-service"),
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let describe: @Sendable (Request, BasicWebSocketRequestContext) async throws -> String = { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let user = request.headers.first { $0.name.canonicalName == GatewayUserField.name.lowercased() }?.value ?? "-"
            let authorization = request.headers[.authorization] ?? "-"
            return "\(request.method) \(request.uri) user=\(user) authorization=\(authorization) body=\(String(buffer: body))"
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch] {
            router.on("/", method: method, use: describe)
            router.on("**", method: method, use: describe)
        }
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        let echo: WebSocketDataHandler<WebSocketRouterContext<BasicWebSocketRequestContext>> = { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 20) {
                switch message {
                case .text(let text): try await outbound.write(.text(text))
                case .binary(let bytes): try await outbound.write(.binary(bytes))
                }
            }
        }
        // The first sub-protocol the client offers is selected, as an application's server would select one.
        let selectFirstProtocol: @Sendable (Request, BasicWebSocketRequestContext) async throws -> RouterShouldUpgrade = { request, _ in
            guard let offered = request.headers[.secWebSocketProtocol]?.split(separator: ",").first else { return .upgrade([:]) }
            let name = offered.trimmingCharacters(in: .whitespaces)
            return name.isEmpty ? .upgrade([:]) : .upgrade([.secWebSocketProtocol: name])
        }
        // `/sink`: reads a WebSocket's messages and answers none (an upstream that never writes, as KAAZING's
        // keep-alive scripts have one).
        let sink: WebSocketDataHandler<WebSocketRouterContext<BasicWebSocketRequestContext>> = { inbound, _, _ in
            for try await _ in inbound.messages(maxSize: 1 << 20) {}
        }
        webSocketRouter.ws("/sink", shouldUpgrade: selectFirstProtocol, onUpgrade: sink)
        webSocketRouter.ws("/sink/**", shouldUpgrade: selectFirstProtocol, onUpgrade: sink)
        webSocketRouter.ws("/", shouldUpgrade: selectFirstProtocol, onUpgrade: echo)
        webSocketRouter.ws("**", shouldUpgrade: selectFirstProtocol, onUpgrade: echo)
        return Application(
            // Frames up to the messages' bound (Hummingbird's default is 16 KiB): the gateway relays an emulated
            // WebSocket's message, and KAAZING's scripts echo 64 KiB ones, as one frame.
            router: router, server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter, configuration: WebSocketServerConfiguration(maxFrameSize: 1 << 20)),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                // Its connections are the process's descriptors too (the demo runs it in the gateway's process).
                await AcceptPressureHandler.install(on: channel, logger: logger)
                await onServerRunning(channel.localAddress?.port ?? 0)
            }, logger: logger)
    }
}
