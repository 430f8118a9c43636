/// A client assertion (RFC 7523 §2.2) as a request carries it: the JWS and its declared type, neither checked yet
/// (the service checks them).
public struct ClientAssertion: Sendable, Hashable {
    /// `client_assertion`.
    public var jws: String?
    /// `client_assertion_type`.
    public var type: String?

    public init(jws: String?, type: String?) {
        self.jws = jws
        self.type = type
    }
}
