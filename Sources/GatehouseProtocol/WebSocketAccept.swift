import Crypto
import Foundation

/// RFC 6455 §4.2.2: the `Sec-WebSocket-Accept` value that answers a client's `Sec-WebSocket-Key` — written by the
/// gateway in a plain upgrade's `101` and in KAAZING's inner `101`.
package enum WebSocketAccept {
    /// The accept value for `key`: SHA-1 of the key and RFC 6455's GUID, in base64.
    package static func value(forKey key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }
}
