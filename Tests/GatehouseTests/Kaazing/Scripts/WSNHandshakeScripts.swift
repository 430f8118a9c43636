import Foundation
@testable import GatehouseGateway
import GatehouseProtocol
import Testing

/// KAAZING Gateway's own `transport/wsn/src/test/scripts/org/kaazing/gateway/transport/wsn/handshake/*.rpt`
/// ([kaazing/gateway](https://github.com/kaazing/gateway), Apache-2.0): a browser's upgrade asking for
/// `x-kaazing-handshake`, byte for byte as the script writes it (its `Host`, cookies and all), against the real
/// gateway's `/echo` (which admits pages of `http://localhost:8001` only). Gatehouse answers without KAAZING's
/// `Access-Control-*`, `Server` and `Date` fields and with a JSON `403`: no KAAZING client reads them.
@Suite(.timeLimit(.minutes(3))) struct WSNHandshakeScripts {
    /// The scripts' upgrade request, with `origin` and `key`.
    static func upgrade(origin: String, key: String) -> String {
        "GET /echo?.kl=Y HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nHost: localhost:8555\r\nOrigin: \(origin)\r\n"
            + "Sec-WebSocket-Protocol: x-kaazing-handshake\r\nPragma: no-cache\r\nCache-Control: no-cache\r\nSec-WebSocket-Key: \(key)\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: x-webkit-deflate-frame\r\n"
            + "User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_8_2) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/28.0.1482.0 Safari/537.36\r\n"
            + "Cookie: SQLiteManager_currentLangue=2\r\n\r\n"
    }

    /// `101 Web Socket Protocol Handshake` selecting `x-kaazing-handshake`, then the balancer frame `0x82 0x04 EF 83 BF 4E`.
    static func expectOpened(_ connection: RawHTTPConnection, accept: String) async throws {
        guard let answer = await connection.readResponse(toHEAD: true) else { throw TestFailure("no answer to the upgrade") }
        #expect(answer.status == 101)
        #expect(answer.header("Connection") == "Upgrade")
        #expect(answer.header("Upgrade") == "websocket")
        #expect(answer.header("Sec-WebSocket-Accept") == accept)
        #expect(answer.header("Sec-WebSocket-Protocol") == "x-kaazing-handshake")
        #expect(answer.header("Sec-WebSocket-Extensions") == nil)
        #expect(await connection.readBytes(count: 6) == [0x82, 0x04, 0xEF, 0x83, 0xBF, 0x4E])
    }

    @Test("handshake/echo.service.cross.origin.allow") func echoServiceCrossOriginAllow() async throws {
        let connection = try RawHTTPConnection(port: try await ScriptGateway.shared.port, timeout: .seconds(20))
        await connection.send(Self.upgrade(origin: "http://localhost:8001", key: "ux63MC0852T2CjyVKr5pog=="))
        try await Self.expectOpened(connection, accept: WebSocketAccept.value(forKey: "ux63MC0852T2CjyVKr5pog=="))
    }

    @Test("handshake/echo.service.cross.origin.deny") func echoServiceCrossOriginDeny() async throws {
        let connection = try RawHTTPConnection(port: try await ScriptGateway.shared.port, timeout: .seconds(20))
        await connection.send(Self.upgrade(origin: "http://localhost:8002", key: "ux63MC0852T2CjyVKr5pog=="))
        let (bytes, closed) = await connection.readToEnd()
        #expect(RawHTTPResponse(bytes)?.status == 403)
        #expect(closed)
    }

    /// The first request of KAAZING's JavaScript client in Firefox 11 (`Connection: keep-alive, Upgrade`), from an
    /// allowed page.
    @Test("handshake/canCompleteAnExtendedHandshakeFirstRequestAndNegotiateTheXKaazinghandshakeProtocol")
    func canCompleteAnExtendedHandshakeFirstRequestAndNegotiateTheXKaazinghandshakeProtocol() async throws {
        let connection = try RawHTTPConnection(port: try await ScriptGateway.shared.port, timeout: .seconds(20))
        await connection.send("GET /echo?.kl=Y HTTP/1.1\r\nHost: localhost:8001\r\n"
                              + "User-Agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10.6; rv:11.0) Gecko/20100101 Firefox/11.0\r\n"
                              + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\nAccept-Language: en-us,en;q=0.5\r\n"
                              + "Accept-Encoding: gzip, deflate\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                              + "Origin: http://localhost:8001\r\nSec-WebSocket-Protocol: x-kaazing-handshake\r\nSec-WebSocket-Key: qqSUZf7gkYUO47sEGUgIJQ==\r\n"
                              + "Cookie: __utma=111872281.319134413.1321376658.1321376658.1321376658.1; __utmz=111872281.1321376658.1.1.utmcsr=(direct)|utmccn=(direct)|utmcmd=(none)\r\n"
                              + "Pragma: no-cache\r\nCache-Control: no-cache\r\nUpgrade: websocket\r\n\r\n")
        try await Self.expectOpened(connection, accept: "OOyJskC0Wrte6ecPvY3JUemp9/U=")
    }
}
