/// KAAZING's two WebSocket extensions, as KAAZING Gateway 5 negotiates and speaks them (k3po's
/// `specification/ws.extensions/x-kaazing-idle-timeout` and `x-kaazing-ping-pong`, the gateway's
/// `transport/ws/.../bridge/extensions/{idletimeout,pingpong}`):
///
/// - ``idleTimeout``: the client asks for it in `Sec-WebSocket-Extensions` (the emulated transport: in
///   `X-WebSocket-Extensions`); the server announces ``idleTimeoutOffer(milliseconds:)`` and then writes a frame at
///   least that often (a `PONG` when it has nothing else to say), and the client closes a connection on which it read
///   nothing for that long.
/// - ``pingPong``: the server announces ``pingPongOffer`` (its four ``controlBytes`` in hexadecimal); a text frame
///   beginning with the control bytes is then an extended `PING` (``extendedPing``) or `PONG` (``extendedPong``), which
///   a browser's script can see where it never sees a standard one, or the escape frame (``escape``: the control bytes
///   alone) that says the next text frame is data although it begins with them.
///
/// Shared by the gateway (both ways) and by tests playing the client.
package enum KaazingExtensions {
    /// `x-kaazing-idle-timeout`.
    package static let idleTimeout = "x-kaazing-idle-timeout"
    /// `x-kaazing-ping-pong`.
    package static let pingPong = "x-kaazing-ping-pong"
    /// The emulated transport's field naming the extensions, in the create request and its `201`.
    package static let emulatedField = "X-WebSocket-Extensions"

    /// The four bytes that begin every extended frame: ASCII control characters, valid UTF-8 that no text message
    /// is likely to begin with (KAAZING's `PingPongExtension.CONTROL_BYTES`).
    package static let controlBytes: [UInt8] = [0x01, 0x01, 0x01, 0x02]
    /// An extended `PING`: the control bytes, then a standard ping frame's header without FIN and no payload.
    package static let extendedPing: [UInt8] = controlBytes + [0x09, 0x00]
    /// An extended `PONG`: the control bytes, then a standard pong frame's header without FIN and no payload.
    package static let extendedPong: [UInt8] = controlBytes + [0x0A, 0x00]
    /// The escape frame: the control bytes alone, sent before a text message that begins with them.
    package static let escape: [UInt8] = controlBytes

    /// The `Sec-WebSocket-Extensions` value announcing the idle timeout, as KAAZING writes it:
    /// `x-kaazing-idle-timeout; timeout=<ms>`.
    package static func idleTimeoutOffer(milliseconds: Int64) -> String { "\(idleTimeout); timeout=\(milliseconds)" }

    /// The `Sec-WebSocket-Extensions` value announcing ping-pong with its control bytes: `x-kaazing-ping-pong; 01010102`.
    package static let pingPongOffer = "\(pingPong); " + controlBytes.map { byte in
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }.joined()

    /// The extensions' names that `values` (each a comma-separated `Sec-WebSocket-Extensions` list, an extension's
    /// parameters after `;`) ask for, in lower case.
    package static func requested(in values: [String]) -> Set<String> {
        var names: Set<String> = []
        for value in values {
            for item in value.split(separator: ",") {
                let name = item.prefix { $0 != ";" }.trimmingCharacters(in: " \t")
                if !name.isEmpty { names.insert(name.lowercased()) }
            }
        }
        return names
    }

    /// What a client's text message is under ping-pong, from its first bytes (at least six, or all of a shorter
    /// message) and its whole length — as KAAZING's `PingPongFilter.wsTextReceived` reads it.
    package enum ClientText: Equatable, Sendable {
        /// Not beginning with the control bytes: data.
        case data
        /// The escape frame: the next text message is data although it begins with the control bytes.
        case escape
        case ping
        case pong
        /// Beginning with the control bytes and none of the above: a protocol error (KAAZING closes with 1002).
        case invalid
    }

    /// Reads a client's text message: `prefix` its first bytes (at least six of them when it is that long),
    /// `length` its whole length.
    package static func clientText(prefix: some Collection<UInt8>, length: Int) -> ClientText {
        guard length >= controlBytes.count, prefix.starts(with: controlBytes) else { return .data }
        if length == controlBytes.count { return .escape }
        if length == extendedPing.count {
            if prefix.elementsEqual(extendedPing) { return .ping }
            if prefix.elementsEqual(extendedPong) { return .pong }
        }
        return .invalid
    }
}

extension Substring {
    /// Without leading and trailing characters of `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self[...]
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
