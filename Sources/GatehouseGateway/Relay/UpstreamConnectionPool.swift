import GatehouseHTTP
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One event loop's keep-alive connections to the gateway's upstreams. Its connections live on that loop, as do
/// the client connections that borrow them, so a request and its answer are relayed between two sockets of one
/// thread, without a lock or a task hop. Not thread-safe: used on its loop only.
final class UpstreamConnectionPool {
    /// Idle connections kept per upstream.
    static let maxIdle = 512
    /// How long a connection may sit idle before it is closed.
    static let idleLifetime: TimeAmount = .seconds(60)
    static let connectTimeout: TimeAmount = .seconds(10)

    let eventLoop: any EventLoop
    private let tls: UpstreamTLS
    /// How long an upstream may stay silent while an answer is awaited or streamed (or its connection idle).
    private let readTimeout: TimeAmount
    private var idle: [UpstreamKey: [UpstreamConnection]] = [:]
    /// The next closing of long-idle connections, while any are idle.
    private var sweep: Scheduled<Void>?

    init(eventLoop: any EventLoop, tls: UpstreamTLS, readTimeout: TimeAmount) {
        self.eventLoop = eventLoop
        self.tls = tls
        self.readTimeout = readTimeout
    }

    /// An idle connection to `key`, or a new one (`fresh`: always a new one). `done` runs on the loop.
    func acquire(_ key: UpstreamKey, fresh: Bool = false, _ done: @escaping (Result<UpstreamConnection, any Error>) -> Void) {
        if !fresh {
            while let connection = idle[key]?.popLast() {
                if connection.channel.isActive {
                    done(.success(connection))
                    return
                }
            }
        }
        let sslContext: NIOSSLContext?
        do {
            sslContext = key.tls ? try tls.context() : nil
        } catch {
            done(.failure(error))
            return
        }
        let readTimeout = self.readTimeout
        UpstreamTLS.connect(on: eventLoop, host: key.host, port: key.port, tls: sslContext) { channel in
            // No HTTP codec: ``UpstreamRequestHead`` writes the request's bytes (only values checked already) and
            // ``UpstreamResponseHandler`` reads the answer's.
            try channel.pipeline.syncOperations.addHandler(UpstreamResponseHandler(key: key, readTimeout: readTimeout))
        }
            .assumeIsolated()
            .whenComplete { result in
                done(result.flatMap { channel in
                    Result {
                        let handler = try channel.pipeline.syncOperations.handler(type: UpstreamResponseHandler.self)
                        return UpstreamConnection(channel: channel, handler: handler)
                    }
                })
            }
    }

    /// Takes back a connection whose last exchange ended cleanly (both messages complete, keep-alive both ways).
    func release(_ connection: UpstreamConnection) {
        connection.handler.exchange = nil
        connection.handler.resumeReads()
        guard connection.channel.isActive, (idle[connection.key]?.count ?? 0) < Self.maxIdle else {
            connection.close()
            return
        }
        connection.idleSince = .now()
        idle[connection.key, default: []].append(connection)
        if connection.handler.onClose == nil {
            // By its handler, not a weak reference to the connection: an object once weakly referenced has every later
            // retain and release on the runtime's slow path, and connections are retained several times a request.
            // The pool is one per event loop for the gateway's life: held strongly.
            connection.handler.onClose = { handler in self.forget(handler) }
        }
        scheduleSweep()
    }

    /// Closes, every quarter of ``idleLifetime``, the connections idle for longer than it, while any are idle: one
    /// timer per pool, not one per release (a timer set and cancelled per request costs more than the rest of
    /// the pool's work).
    private func scheduleSweep() {
        guard sweep == nil else { return }
        sweep = eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Self.idleLifetime.nanoseconds / 4)) {
            self.sweep = nil
            let cutoff = NIODeadline.now() - Self.idleLifetime
            for connection in self.idle.values.joined() where connection.idleSince <= cutoff { connection.close() }
            self.idle = self.idle.compactMapValues { connections in
                let fresh = connections.filter { $0.idleSince > cutoff }
                return fresh.isEmpty ? nil : fresh
            }
            if !self.idle.isEmpty { self.scheduleSweep() }
        }
    }

    /// Forgets the idle connection whose handler is `handler` (its channel closed).
    private func forget(_ handler: UpstreamResponseHandler) {
        idle[handler.key]?.removeAll { $0.handler === handler }
    }
}

/// The trust for `https` upstreams, made once per gateway on first use: the configured CA file's, or the system's
/// roots. Verification is never off.
final class UpstreamTLS: Sendable {
    private let configuration: TLSConfiguration?
    private let made = Mutex<NIOSSLContext?>(nil)

    init(configuration: TLSConfiguration?) {
        self.configuration = configuration
    }

    func context() throws -> NIOSSLContext {
        try made.withLock { made in
            if let made { return made }
            let context = try NIOSSLContext(configuration: configuration ?? .makeClientConfiguration())
            made = context
            return context
        }
    }
}

extension UpstreamTLS {
    /// A new connection to an upstream at `host`:`port` from `eventLoop` — the gateway's connect timeout, `TCP_NODELAY`,
    /// TLS first when `context` is given (``add(_:host:to:)``), then what `initialize` adds — counted in the process's
    /// ``DescriptorBudget`` until it closes (refused without trying inside its reserve). For HTTP exchanges and
    /// WebSocket bridges alike.
    static func connect(
        on eventLoop: any EventLoop, host: String, port: Int, tls context: NIOSSLContext?,
        initialize: @escaping @Sendable (any Channel) throws -> Void
    ) -> EventLoopFuture<any Channel> {
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(UpstreamConnectionPool.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try add(context, host: host, to: channel.pipeline.syncOperations)
                    try initialize(channel)
                }
            }
        return DescriptorBudget.shared.connect(on: eventLoop) { bootstrap.connect(host: host, port: port) }
    }

    /// Adds the TLS client handler for `host` first in a new upstream connection's pipeline when `context` is
    /// given: SNI with a host name only (RFC 6066 §3), never an address; the name is verified either way.
    static func add(_ context: NIOSSLContext?, host: String, to pipeline: ChannelPipeline.SynchronousOperations) throws {
        guard let context else { return }
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        try pipeline.addHandler(NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host))
    }
}

/// The gateway's upstream pools, one per event loop.
final class UpstreamPools: Sendable {
    private let tls: UpstreamTLS
    private let readTimeout: TimeAmount
    private let pools = Mutex<[ObjectIdentifier: NIOLoopBound<UpstreamConnectionPool>]>([:])

    init(tls: TLSConfiguration?, readTimeout: TimeAmount) {
        self.tls = UpstreamTLS(configuration: tls)
        self.readTimeout = readTimeout
    }

    /// The trust for `https`/`wss` upstreams (made on first use).
    func tlsContext() throws -> NIOSSLContext { try tls.context() }

    /// The pool of `eventLoop`; call on that loop.
    func pool(for eventLoop: any EventLoop) -> UpstreamConnectionPool {
        let id = ObjectIdentifier(eventLoop)
        if let bound = pools.withLock({ $0[id] }) { return bound.value }
        let made = NIOLoopBound(UpstreamConnectionPool(eventLoop: eventLoop, tls: tls, readTimeout: readTimeout), eventLoop: eventLoop)
        let bound = pools.withLock { pools in
            if let existing = pools[id] { return existing }
            pools[id] = made
            return made
        }
        return bound.value
    }
}
