import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// KAAZING Gateway's own `transport/wsn/src/test/scripts/org/kaazing/gateway/transport/wsn/shouldInactivityTimeout*.rpt`
/// and `.../wsn/extensions/idletimeout/*.rpt` ([kaazing/gateway](https://github.com/kaazing/gateway), Apache-2.0), the
/// client's side byte for byte against ``KeepAliveScriptGateway/timed`` (a 1 s inactivity timeout; KAAZING's
/// `WsnInactivityTimeoutIT` and `IdleTimeoutExtensionPongsIT` configure 2 s, which the scripts announce as
/// `timeout=2000`): a ping after half the timeout without reading (extended under `x-kaazing-ping-pong`), the
/// connection closed after the whole timeout without a pong, `x-kaazing-idle-timeout; timeout=1000` announced to a
/// client that asks, and a `PONG` when the gateway wrote nothing for three quarters of it. Each test is named after
/// its script.
///
/// Where Gatehouse differs in a detail no KAAZING client reads: an upgrade with `.kl=Y` but without the
/// `x-kaazing-handshake` sub-protocol is a plain RFC 6455 upgrade (`101 Switching Protocols`, no balancer frame
/// `0x82 0x04 EF 83 BF 4E`: KAAZING's clients send `.kl=Y` only with the extended handshake); no `Date` or `Server`
/// fields; the close is answered with the upstream's code; the timeout announced is the configured 1000 ms.
///
/// Not played: `shouldInactivityTimeoutWhenNetworkFailsDuringExtendedHandshake` (KAAZING pings while an extended
/// handshake's request is incomplete; Gatehouse ends a handshake that stalls after the gateway's `idleTimeout`, with
/// `1008`), `shouldInactivityTimeoutWithPingPongExtensionAndExtendedHandshakePort80` (the same exchange as
/// `...AndExtendedHandshake`, on port 80 with KAAZING's cross-origin fields).
@Suite(.timeLimit(.minutes(1))) struct WSNInactivityTimeoutScripts {
    static func connect() async throws -> RawHTTPConnection {
        try RawHTTPConnection(port: try await KeepAliveScriptGateway.timed.port, timeout: .seconds(8))
    }

    @Test("shouldInactivityTimeout") func shouldInactivityTimeout() async throws {
        let connection = try await Self.connect()
        await connection.send(KeepAliveScript.wsnUpgrade("/echo?.kl=Y", extensions: nil))
        let start = ContinuousClock.now
        #expect(try await KeepAliveScript.switched(connection, key: "nDaimG37f4nUqogPypithw==") == [])
        #expect(try await KeepAliveScript.read(connection, 2) == [0x89, 0x00])
        // Half the timeout without reading: not before it.
        #expect(KeepAliveScript.seconds(since: start) >= 0.45)
        await connection.send(KeepAliveScript.masked(0x8A, []))
        #expect(try await KeepAliveScript.read(connection, 2) == [0x89, 0x00])
        let (rest, closed) = await connection.readToEnd()
        #expect(rest.isEmpty && closed)
        // Half a timeout after the second ping, unanswered: closed.
        #expect(KeepAliveScript.seconds(since: start) >= 1.45)
    }

    @Test("shouldInactivityTimeoutWithPingPongExtension") func shouldInactivityTimeoutWithPingPongExtension() async throws {
        let connection = try await Self.connect()
        await connection.send(KeepAliveScript.wsnUpgrade("/echo?.kl=Y", extensions: "x-kaazing-idle-timeout,x-kaazing-ping-pong"))
        #expect(try await KeepAliveScript.switched(connection, key: "nDaimG37f4nUqogPypithw==")
                == ["x-kaazing-idle-timeout; timeout=1000", "x-kaazing-ping-pong; 01010102"])
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        await connection.send(KeepAliveScript.maskedExtendedPong)
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        let (rest, closed) = await connection.readToEnd()
        #expect(rest.isEmpty && closed)
    }

    @Test("shouldInactivityTimeoutWithPingPongExtensionAndExtendedHandshake")
    func shouldInactivityTimeoutWithPingPongExtensionAndExtendedHandshake() async throws {
        let connection = try await Self.connect()
        await connection.send("GET /echo?.kl=Y HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nHost: localhost:8001\r\n"
                              + "Origin: http://localhost:8001\r\nSec-WebSocket-Protocol: x-kaazing-handshake\r\nPragma: no-cache\r\n"
                              + "Cache-Control: no-cache\r\nSec-WebSocket-Key: ePYyZxvR5fDLh/oEugMjbA==\r\nSec-WebSocket-Version: 13\r\n"
                              + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits, x-webkit-deflate-frame\r\n"
                              + "User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_9_1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.77 Safari/537.36\r\n\r\n")
        guard let outer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        #expect(outer.status == 101)
        #expect(outer.header("Sec-WebSocket-Protocol") == "x-kaazing-handshake")
        #expect(outer.header("Sec-WebSocket-Extensions") == nil)
        #expect(try await KeepAliveScript.read(connection, 6) == [0x82, 0x04, 0xEF, 0x83, 0xBF, 0x4E])
        let request = "GET /echo HTTP/1.1\r\nWebSocket-Protocol: \r\nSec-WebSocket-Protocol: \r\n"
            + "Sec-WebSocket-Extensions: x-kaazing-idle-timeout,x-kaazing-ping-pong\r\n\r\n"
        #expect(request.utf8.count == 0x8C)
        await connection.send([0x82, 0xFE, 0x00, 0x8C, 0x00, 0x00, 0x00, 0x00] + Array(request.utf8))
        // `read [0x82 0x7e <length>]` and the inner 101 (without KAAZING's `Date` and `Server`, so its own length).
        let head = try await KeepAliveScript.read(connection, 2)
        #expect(head == [0x82, 0x7E] || head[0] == 0x82 && head[1] < 0x7E)
        let length = head[1] == 0x7E ? try await KeepAliveScript.read(connection, 2).reduce(0) { $0 << 8 | Int($1) } : Int(head[1])
        let inner = try KaazingHandshake.Response(parsing: try await KeepAliveScript.read(connection, length))
        #expect(inner.status == 101 && inner.reason == "Web Socket Protocol Handshake")
        #expect(inner.value(of: "Sec-WebSocket-Accept") == WebSocketAccept.value(forKey: "ePYyZxvR5fDLh/oEugMjbA=="))
        #expect(inner.fields.filter { $0.name == "Sec-WebSocket-Extensions" }.map(\.value)
                == ["x-kaazing-idle-timeout; timeout=1000", "x-kaazing-ping-pong; 01010102"])
        #expect(try await KeepAliveScript.read(connection, 2) == [0x82, 0x00])
        #expect(try await KeepAliveScript.read(connection, 6) == [0x82, 0x04, 0xEF, 0x83, 0xBF, 0x4E])
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        await connection.send(KeepAliveScript.maskedExtendedPong)
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        let (rest, closed) = await connection.readToEnd()
        #expect(rest.isEmpty && closed)
    }

    @Test("extensions/idletimeout/shouldGetValueFromIdleTimeoutExtension") func shouldGetValueFromIdleTimeoutExtension() async throws {
        let connection = try await Self.connect()
        await connection.send(KeepAliveScript.wsnUpgrade("/echo?.kl=Y", extensions: "x-kaazing-idle-timeout"))
        #expect(try await KeepAliveScript.switched(connection, key: "nDaimG37f4nUqogPypithw==") == ["x-kaazing-idle-timeout; timeout=1000"])
        try await KeepAliveScript.close(connection)
    }

    @Test("extensions/idletimeout/shouldNotNegotiateIdleTimeoutExtension") func shouldNotNegotiateIdleTimeoutExtension() async throws {
        let connection = try await Self.connect()
        await connection.send(KeepAliveScript.wsnUpgrade("/echoNoTimeout?.kl=Y", extensions: "x-kaazing-idle-timeout"))
        #expect(try await KeepAliveScript.switched(connection, key: "nDaimG37f4nUqogPypithw==") == [])
        try await KeepAliveScript.close(connection)
    }

    /// The upstream (`/proxy`) reads the client's messages and writes nothing: the gateway, having written nothing
    /// for 0.75 s since its ping, writes an extended pong while the client keeps writing (every 150 ms, the script's
    /// eight `SLEEP_*` barriers, 300 ms apart against KAAZING's 2 s).
    @Test("extensions/idletimeout/shouldGetPongsFromidleTimeoutExtension") func shouldGetPongsFromidleTimeoutExtension() async throws {
        let connection = try await Self.connect()
        await connection.send(KeepAliveScript.wsnUpgrade("/proxy?.kl=Y", extensions: "x-kaazing-idle-timeout,x-kaazing-ping-pong"))
        #expect(try await KeepAliveScript.switched(connection, key: "nDaimG37f4nUqogPypithw==")
                == ["x-kaazing-idle-timeout; timeout=1000", "x-kaazing-ping-pong; 01010102"])
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPing)
        await connection.send(KeepAliveScript.maskedExtendedPong)
        for _ in 1...8 {
            try await Task.sleep(for: .milliseconds(150))
            await connection.send([0x81, 0x83, 0x01, 0x01, 0x01, 0x01, 0x30, 0x33, 0x32])
        }
        #expect(try await KeepAliveScript.read(connection, 8) == KeepAliveScript.extendedPong)
        try await KeepAliveScript.close(connection)
    }
}
