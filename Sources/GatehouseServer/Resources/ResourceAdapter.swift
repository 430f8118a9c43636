import Hummingbird

/// The seeds' adapter: the bank balance of the PinCode sample behind `accessRestricted`, and an open endpoint.
public struct ResourceAdapter: Adapter {
    public let name = "ResourceAdapter"

    public init() {}

    public var routes: [AdapterRoute] {
        [
            AdapterRoute(.get, "balance", security: .scope("accessRestricted")) { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "19938.80")))
            },
            AdapterRoute(.get, "unprotected", security: .disabled) { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "Hello from an unprotected resource")))
            },
        ]
    }
}
