// swift-tools-version:6.2
import PackageDescription

/// Every target builds in the Swift 6 language mode, with complete concurrency checking.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v15), .iOS(.v18)],
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
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
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
                .product(name: "GRDB", package: "GRDB.swift"),
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
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // Its pool's errors, to tell an outage (``PostgresStore/outage(_:)``).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
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
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
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
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // Serving HTTP in production, shared by the server and the gateway: TLS (reloadable), HTTP/2, timeouts.
        .target(
            name: "GatehouseHTTP",
            dependencies: [
                "GatehouseProtocol",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The authorization server: policy, pre-authorization rounds, tokens, HTTP routes.
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseProtocol", "GatehouseChecks", "GatehouseStore", "GatehouseHTTP", "GatehouseResourceServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "BigInt", package: "BigInt"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "X509", package: "swift-certificates"),
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
            ],
            swiftSettings: swiftSettings
        ),
        // The client SDK: Foundation, swift-crypto (through GatehouseProtocol) and swift-log's API only.
        .target(
            name: "GatehouseClient",
            dependencies: ["GatehouseProtocol", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The SDK over SwiftNIO, for Linux servers and tools: an HTTP transport on AsyncHTTPClient, one that pins
        // servers' public keys (NIOSSL), and the gateway's WebSocket client on HummingbirdWSClient.
        .target(
            name: "GatehouseClientNIO",
            dependencies: [
                "GatehouseClient", "GatehouseProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
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
        // The `gatehouse` command.
        .executableTarget(
            name: "GatehouseCLI",
            dependencies: [
                "GatehouseServer", "GatehouseClient", "GatehouseClientNIO", "GatehousePostgres", "GatehouseGateway", "GatehouseHTTP", "GatehouseSQLite", "GatehouseStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
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
                "BenchmarkSupport", "GatehouseGateway", "GatehouseProtocol", "GatehouseResourceServer",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Benchmarks/MultiNodeBenchmark",
            swiftSettings: swiftSettings
        ),
        // An example service that trusts Gatehouse: its balance endpoint needs `accessRestricted`.
        .target(
            name: "BalanceService",
            dependencies: ["GatehouseResourceServer", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Examples/BalanceService",
            swiftSettings: swiftSettings
        ),
        // Unit tests of one module each, with no server, socket or fixture: the checks' algorithms, the gateway's state
        // machines, its request policy and its handler on an EmbeddedChannel.
        .testTarget(
            name: "GatehouseChecksTests",
            dependencies: [
                "GatehouseChecks", "GatehouseProtocol",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
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
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // End to end: real servers on loopback ports, real stores, real clients (Support/ starts them).
        .testTarget(
            name: "GatehouseTests",
            dependencies: [
                "GatehouseServer", "GatehouseClient", "GatehouseProtocol", "GatehouseChecks", "GatehouseStore", "GatehouseSQLite",
                "GatehousePostgres", "GatehouseResourceServer", "GatehouseGateway", "GatehouseClientNIO", "ExampleChecks", "BalanceService",
                "GatehouseHTTP",
                "GatehouseClientKerberos", "GatehouseMobileFirst",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "BigInt", package: "BigInt"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
