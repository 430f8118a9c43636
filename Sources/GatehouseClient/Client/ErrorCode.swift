/// The stable code of an SDK error type (`Domain`): a name that stays the same across versions, so that codes can
/// be added without breaking a caller's `switch`, as jwt-kit's and Auth0.swift's errors do. The code type of both
/// ``GatehouseClientError`` and ``GatewayClientError``; each declares its codes as static members.
public struct ErrorCode<Domain>: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
    /// The code's name, such as `challengeCancelled`.
    public let rawValue: String
    /// The code named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The name.
    public var description: String { rawValue }
}
