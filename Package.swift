// swift-tools-version:6.2
import PackageDescription

/// A product that only the server, the gateway, the `gatehouse` command, the benchmarks and the tests use: its package
/// is resolved only with the `Server` trait (on by default). An app that depends on this repository with
/// `traits: []` resolves swift-crypto, swift-log, SwiftNIO and swift-nio-ssl (with what those depend on) and nothing
/// else (`Examples/PortedApp`, checked by `scripts/check-client-packages`).
func server(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Server"]))
}

/// Every target builds in the Swift 6 language mode, with complete concurrency checking.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "gatehouse",
    // The SDK's floor (GatehouseProtocol and the client modules, enforced by scripts/check-availability); the server
    // and the gateway are built for Linux (see ARCHITECTURE.md, "Packages and platforms").
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "gatehouse", targets: ["GatehouseCLI"]),
        .library(name: "GatehouseProtocol", targets: ["GatehouseProtocol"]),
        .library(name: "GatehouseChecks", targets: ["GatehouseChecks"]),
        .library(name: "GatehouseStore", targets: ["GatehouseStore"]),
        .library(name: "GatehouseSQLite", targets: ["GatehouseSQLite"]),
        .library(name: "GatehousePostgres", targets: ["GatehousePostgres"]),
        .library(name: "GatehouseServer", targets: ["GatehouseServer"]),
        .library(name: "GatehouseResourceServer", targets: ["GatehouseResourceServer"]),
        .library(name: "GatehouseGateway", targets: ["GatehouseGateway"]),
        .library(name: "GatehouseClient", targets: ["GatehouseClient"]),
        .library(name: "GatehouseClientNIO", targets: ["GatehouseClientNIO"]),
        .library(name: "GatehouseClientKerberos", targets: ["GatehouseClientKerberos"]),
        .library(name: "GatehouseMobileFirst", targets: ["GatehouseMobileFirst"]),
        .library(name: "GatehouseClientWebSocket", targets: ["GatehouseClientWebSocket"]),
        .library(name: "GatehouseKaazing", targets: ["GatehouseKaazing"]),
    ],
    traits: [
        .default(enabledTraits: ["Server"]),
        .trait(name: "Server", description: "The server, the gateway, the gatehouse command and their packages (Hummingbird, GRDB, PostgresNIO, ...). Apps depend on the client products with traits: [] and resolve none of them."),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.38.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/attaswift/BigInt.git", from: "6.0.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.15.0"),
    ],
    targets: [
        // Wire types of the MobileFirst 8.0 runtime protocol, JSON values, scopes and JWS: shared by server and SDK.
        .target(
            name: "GatehouseProtocol",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The security-check SPI, its base algorithms and the built-in checks.
        .target(
            name: "GatehouseChecks",
            dependencies: [
                "GatehouseProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                server("HummingbirdBcrypt", "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                server("Tracing", "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The storage protocol and its records.
        .target(
            name: "GatehouseStore",
            dependencies: ["GatehouseProtocol", "GatehouseChecks"],
            swiftSettings: swiftSettings
        ),
        // The embedded default store on SQLite.
        .target(
            name: "GatehouseSQLite",
            dependencies: [
                "GatehouseStore",
                server("GRDB", "GRDB.swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
                "GatehouseChecks",
                "GatehouseProtocol",
            ],
            swiftSettings: swiftSettings
        ),
        // The store on PostgreSQL, for several stateless nodes.
        .target(
            name: "GatehousePostgres",
            dependencies: [
                "GatehouseStore",
                server("PostgresNIO", "postgres-nio"),
                // Its pool's errors, to tell an outage (``PostgresStore/outage(_:)``).
                server("_ConnectionPoolModule", "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                "GatehouseChecks",
                "GatehouseProtocol",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Middleware for any Hummingbird service that trusts Gatehouse's tokens.
        .target(
            name: "GatehouseResourceServer",
            dependencies: [
                "GatehouseProtocol",
                server("Hummingbird", "hummingbird"),
                server("JWTKit", "jwt-kit"),
                server("AsyncHTTPClient", "async-http-client"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // MIT Kerberos' GSS-API (Debian's libkrb5-dev), for the Negotiate (SPNEGO) scheme.
        .systemLibrary(
            name: "CGSSAPI",
            pkgConfig: "krb5-gssapi",
            providers: [.apt(["libkrb5-dev"])]
        ),
        // The gateway: HTTP and WebSocket services behind challenge schemes, realms and login modules.
        .target(
            name: "GatehouseGateway",
            dependencies: [
                "CGSSAPI",
                "GatehouseProtocol", "GatehouseResourceServer", "GatehouseChecks", "GatehouseHTTP",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                server("Metrics", "swift-metrics"),
                server("Prometheus", "swift-prometheus"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("HummingbirdBcrypt", "hummingbird-auth"),
                server("NIOExtras", "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                server("Yams", "Yams"),
                .product(name: "Logging", package: "swift-log"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                server("NIOHTTPTypes", "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                server("Tracing", "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // Serving HTTP in production, shared by the server and the gateway: TLS (reloadable), HTTP/2, timeouts.
        .target(
            name: "GatehouseHTTP",
            dependencies: [
                "GatehouseProtocol",
                server("HTTPTypes", "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                server("UnixSignals", "swift-service-lifecycle"),
                server("Prometheus", "swift-prometheus"),
                server("Metrics", "swift-metrics"),
                server("Yams", "Yams"),
                server("Tracing", "swift-distributed-tracing"),
                server("Instrumentation", "swift-distributed-tracing"),
                server("AsyncHTTPClient", "async-http-client"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("NIOPosix", "swift-nio"),
                server("NIOExtras", "swift-nio-extras"),
                server("NIOHTTP1", "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("NIOHTTPTypesHTTP1", "swift-nio-extras"),
                server("NIOHTTPTypesHTTP2", "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),
        // The authorization server: policy, pre-authorization rounds, tokens, HTTP routes.
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseProtocol", "GatehouseChecks", "GatehouseStore", "GatehouseHTTP", "GatehouseResourceServer",
                server("Hummingbird", "hummingbird"),
                server("Metrics", "swift-metrics"),
                server("Prometheus", "swift-prometheus"),
                server("BigInt", "BigInt"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                server("JWTKit", "jwt-kit"),
                server("Yams", "Yams"),
                .product(name: "Logging", package: "swift-log"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("UnixSignals", "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                server("HummingbirdBcrypt", "hummingbird-auth"),
                server("Tracing", "swift-distributed-tracing"),
                server("X509", "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // Embedded into the binary at build time (`PackageResources`): `gatehouse` is one file, with its
            // OpenAPI document and its web console.
            resources: [
                .embedInCode("OpenAPI/openapi.yaml"),
                .embedInCode("Console/Assets/console.html"), .embedInCode("Console/Assets/console.css"),
                .embedInCode("Console/Assets/console.js"), .embedInCode("Console/Assets/console-chart.js"),
                .embedInCode("Console/Assets/console-pages.js"), .embedInCode("Console/Assets/console-applications.js"),
                .embedInCode("Console/Assets/console-devices.js"), .embedInCode("Console/Assets/console-users.js"),
                .embedInCode("Console/Assets/icon.svg"),
                .embedInCode("OpenID/Assets/sign-in.html"), .embedInCode("OpenID/Assets/sign-in.css"),
                .embedInCode("OpenID/Assets/sign-in.js"), .embedInCode("OpenID/Assets/strings.json"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client SDK: Foundation, swift-crypto (through GatehouseProtocol) and swift-log's API only.
        .target(
            name: "GatehouseClient",
            dependencies: ["GatehouseProtocol", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The SDK over SwiftNIO, for Linux servers and tools: an HTTP transport on AsyncHTTPClient (with the Server trait),
        // one that pins servers' public keys (NIOSSL); it re-exports the gateway's WebSocket client.
        .target(
            name: "GatehouseClientNIO",
            dependencies: [
                "GatehouseClient", "GatehouseProtocol", "GatehouseClientWebSocket",
                server("AsyncHTTPClient", "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The gateway's WebSocket client on every platform (SwiftNIO's NIOWebSocket and swift-nio-ssl, nothing else):
        // challenges on the handshake, KAAZING's extended handshake, in-band revalidation.
        .target(
            name: "GatehouseClientWebSocket",
            dependencies: [
                "GatehouseClient", "GatehouseProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // KAAZING's client security and connection API (KGWebSocketFactory, KGChallengeHandler, KGLoginHandler, ...)
        // over the SDK, so that a KAAZING app's code compiles and runs against a Gatehouse gateway.
        .target(
            name: "GatehouseKaazing",
            dependencies: [
                "GatehouseClient", "GatehouseClientWebSocket", "GatehouseProtocol",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // MobileFirst's iOS SDK API (WLClient, WLAuthorizationManager, WLResourceRequest, SecurityCheckChallengeHandler)
        // over the SDK, so that an existing MobileFirst app's code compiles and runs against Gatehouse.
        .target(
            name: "GatehouseMobileFirst",
            dependencies: ["GatehouseClient", "GatehouseProtocol", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The SDK's Negotiate (Kerberos/SPNEGO) challenge handler: MIT's libgssapi_krb5, kept out of the core SDK.
        .target(
            name: "GatehouseClientKerberos",
            dependencies: ["GatehouseClient", "CGSSAPI"],
            swiftSettings: swiftSettings
        ),
        // Stand-ins of the Apple APIs that the SDK's Apple-only adapters call (Security's keychain and trust, URLSession's
        // delegate signatures), as Apple declares and documents them, so that those adapters compile and run on Linux.
        .target(name: "SecurityStandIn", path: "Tests/AppleStandIns/SecurityStandIn", swiftSettings: swiftSettings),
        // The SDK's Apple-only adapters (KeychainKeyStore, the session delegate's server trust) compiled on Linux against
        // the stand-ins: the files are GatehouseClient's own, linked in (APPLE_STAND_INS chooses the stand-in imports).
        .target(
            name: "GatehouseClientAppleAdapters",
            dependencies: ["GatehouseClient", "GatehouseProtocol", "SecurityStandIn"],
            path: "Tests/AppleStandIns/Adapters",
            swiftSettings: swiftSettings + [.define("APPLE_STAND_INS")]
        ),
        .testTarget(
            name: "AppleAdapterTests",
            dependencies: ["GatehouseClientAppleAdapters", "GatehouseClient", "GatehouseProtocol", "SecurityStandIn"],
            swiftSettings: swiftSettings
        ),
        // The demo's and the tests' upstream: an HTTP and WebSocket echo on Hummingbird (the gateway itself needs none).
        .target(
            name: "GatehouseEcho",
            dependencies: [
                "GatehouseHTTP", "GatehouseProtocol",
                server("Hummingbird", "hummingbird"),
                server("HummingbirdWebSocket", "hummingbird-websocket"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `gatehouse` command.
        .executableTarget(
            name: "GatehouseCLI",
            dependencies: [
                "GatehouseServer", "GatehouseClient", "GatehouseClientNIO", "GatehousePostgres", "GatehouseGateway", "GatehouseEcho", "GatehouseHTTP", "GatehouseSQLite", "GatehouseStore",
                server("ArgumentParser", "swift-argument-parser"),
                server("HummingbirdWSClient", "hummingbird-websocket"),
                server("Hummingbird", "hummingbird"),
                server("HummingbirdBcrypt", "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                server("PostgresNIO", "postgres-nio"),
                "GatehouseProtocol",
            ],
            swiftSettings: swiftSettings
        ),
        // An example of a custom security check written outside the package's own modules.
        .target(
            name: "ExampleChecks",
            dependencies: ["GatehouseChecks", "GatehouseProtocol"],
            path: "Examples/ExampleChecks",
            swiftSettings: swiftSettings
        ),
        // What the benchmarks share: `wrk` runs, figures, process memory.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "GatehouseProtocol",
                server("AsyncHTTPClient", "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            path: "Benchmarks/BenchmarkSupport",
            swiftSettings: swiftSettings
        ),
        // `scripts/bench-gateway`: the gateway's overhead on HTTP and WebSocket traffic, and its memory per connection.
        .executableTarget(
            name: "GatewayBenchmark",
            dependencies: [
                "BenchmarkSupport", "GatehouseGateway", "GatehouseEcho", "GatehouseProtocol", "GatehouseResourceServer", "GatehouseHTTP",
                server("JWTKit", "jwt-kit"),
                server("Hummingbird", "hummingbird"),
                server("HummingbirdWSClient", "hummingbird-websocket"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/GatewayBenchmark",
            swiftSettings: swiftSettings
        ),
        // `scripts/bench`: complete MobileFirst flows per second against a real server on loopback.
        .executableTarget(
            name: "FlowBenchmark",
            dependencies: [
                "BenchmarkSupport", "GatehouseServer", "GatehouseSQLite", "GatehouseProtocol", "GatehouseHTTP",
                server("AsyncHTTPClient", "async-http-client"),
                server("Hummingbird", "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/FlowBenchmark",
            swiftSettings: swiftSettings
        ),
        // `scripts/bench-multinode`: flows per second on one SQLite node, one and two PostgreSQL nodes (real
        // `gatehouse serve` processes), with each process's CPU per flow and a projection for N nodes.
        .executableTarget(
            name: "MultiNodeBenchmark",
            dependencies: [
                "BenchmarkSupport", "GatehouseProtocol",
                server("AsyncHTTPClient", "async-http-client"),
            ],
            path: "Benchmarks/MultiNodeBenchmark",
            swiftSettings: swiftSettings
        ),
        // An example service that trusts Gatehouse: its balance endpoint needs `accessRestricted`.
        .target(
            name: "BalanceService",
            dependencies: ["GatehouseResourceServer", server("Hummingbird", "hummingbird")],
            path: "Examples/BalanceService",
            swiftSettings: swiftSettings
        ),
        // Unit tests of one module each, with no server, socket or fixture: the wire formats' helpers, the server's
        // pieces (hand-written JSON, locks, errors), the checks' algorithms, the gateway's state machines, its request
        // policy and its handler on an EmbeddedChannel.
        .testTarget(
            name: "GatehouseProtocolTests",
            dependencies: ["GatehouseProtocol"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseProtocol", "GatehouseChecks", "GatehouseStore",
                server("HTTPTypes", "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseChecksTests",
            dependencies: [
                "GatehouseChecks", "GatehouseProtocol",
                server("HummingbirdBcrypt", "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseGatewayTests",
            dependencies: [
                "GatehouseGateway", "GatehouseProtocol", "GatehouseHTTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                server("HTTPTypes", "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // End to end: real servers on loopback ports, real stores, real clients (Support/ starts them).
        .testTarget(
            name: "GatehouseTests",
            dependencies: [
                "GatehouseServer", "GatehouseClient", "GatehouseProtocol", "GatehouseChecks", "GatehouseStore", "GatehouseSQLite",
                "GatehousePostgres", "GatehouseResourceServer", "GatehouseGateway", "GatehouseClientNIO", "ExampleChecks", "BalanceService",
                "GatehouseHTTP", "GatehouseEcho",
                "GatehouseClientKerberos", "GatehouseMobileFirst", "GatehouseClientWebSocket", "GatehouseKaazing",
                server("AsyncHTTPClient", "async-http-client"),
                server("Hummingbird", "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                server("NIOHTTP2", "swift-nio-http2"),
                server("ServiceLifecycle", "swift-service-lifecycle"),
                server("JWTKit", "jwt-kit"),
                server("HummingbirdWebSocket", "hummingbird-websocket"),
                server("HummingbirdWSClient", "hummingbird-websocket"),
                server("BigInt", "BigInt"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                server("HTTPTypes", "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                server("PostgresNIO", "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                server("GRDB", "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
