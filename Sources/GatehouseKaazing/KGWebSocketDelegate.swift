public import Foundation

/// A ``KGWebSocket``'s delegate, as KAAZING's `KGWebSocketDelegate` protocol: called on the socket's serial queue,
/// after the matching block property.
public protocol KGWebSocketDelegate: AnyObject {
    /// A message arrived: a `String` (text) or `Data` (binary).
    func webSocket(_ webSocket: KGWebSocket?, didReceiveMessage data: (any Sendable)?)
    /// The socket is open.
    func webSocketDidOpen(_ webSocket: KGWebSocket?)
    /// The socket closed (`wasClean`: with a close frame from the server).
    func webSocket(_ webSocket: KGWebSocket?, didCloseWithCode code: Int, reason: String?, wasClean: Bool)
    /// An error occurred (the connection failed, a challenge was not answered, ...).
    func webSocket(_ webSocket: KGWebSocket?, didReceiveError error: (any Error)?)
}
