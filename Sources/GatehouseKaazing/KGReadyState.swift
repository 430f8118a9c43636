/// A `KGWebSocket`'s state, as Swift sees KAAZING's C enum (`typedef enum { KGReadyState_CONNECTING = 0, ... }
/// KGReadyState`): a struct with a raw value, and its four values as global constants.
public struct KGReadyState: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
}

/// Created, not yet open (also while the challenges are answered).
public let KGReadyState_CONNECTING = KGReadyState(0)
/// Open: messages may be sent.
public let KGReadyState_OPEN = KGReadyState(1)
/// A close frame was sent; the server's is awaited.
public let KGReadyState_CLOSING = KGReadyState(2)
/// Closed, or never opened.
public let KGReadyState_CLOSED = KGReadyState(3)
