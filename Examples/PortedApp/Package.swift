// swift-tools-version:6.2
// An app's package as an iOS team writes it: this repository's client products, with `traits: []` so that none of
// the server's packages is resolved. `scripts/check-client-packages` resolves it and fails on any package outside
// swift-crypto, swift-log, SwiftNIO and swift-nio-ssl (and what those depend on).
import PackageDescription

let package = Package(
    name: "PortedApp",
    platforms: [.iOS(.v16), .macOS(.v13)],
    dependencies: [
        // An app names the repository's URL and a version; this example names it by path.
        .package(name: "gatehouse", path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "PortedApp",
            dependencies: [
                .product(name: "GatehouseClient", package: "gatehouse"),
                .product(name: "GatehouseMobileFirst", package: "gatehouse"),
                .product(name: "GatehouseClientWebSocket", package: "gatehouse"),
                .product(name: "GatehouseKaazing", package: "gatehouse"),
            ]
        ),
    ]
)
