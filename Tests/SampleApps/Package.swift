// swift-tools-version:6.2
// The MobileFirst sample apps' fixture (scripts/sample-apps assembles it in .build-samples/package, with the apps'
// Swift files copied there from ../shared/clients/mobilefirst-swift-samples, only their import changed; never
// build it here). Targets:
// - UIKit: a stand-in for UIKit on Linux (the classes' shapes; what is presented can be read and operated).
// - PinCodeSwift5, PinCodeSwift6: the PinCodeSwift app's files that compile on Linux, with the driver that plays
//   the user, in the Swift 5 and Swift 6 language modes.
// - RememberMeSwift5, RememberMeSwift6: the driver of the RememberMe flow (none of the app's files compile on Linux:
//   each uses `#selector` or `@IBOutlet`, which need the Objective-C runtime).
import Foundation
import PackageDescription

/// The Gatehouse checkout (the script says where; by default two levels up).
let gatehouse = ProcessInfo.processInfo.environment["GATEHOUSE_REPO"] ?? "../.."

func app(_ name: String, _ mode: SwiftLanguageMode) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            "UIKit", .product(name: "GatehouseMobileFirst", package: "gatehouse"),
            .product(name: "GatehouseClient", package: "gatehouse"),
        ],
        path: "Sources/\(name)",
        // MobileFirst's framework re-exports UIKit on iOS (so does GatehouseMobileFirst there): an app file that
        // imports only the framework sees UIKit. On Linux the stand-in is not the façade's dependency, so every file
        // of the app imports it implicitly, as the compiler's -import-module does (no file is changed for it).
        swiftSettings: [.swiftLanguageMode(mode), .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "UIKit"])]
    )
}

let package = Package(
    name: "SampleApps",
    platforms: [.macOS(.v13), .iOS(.v16)],
    // Without the server trait: the client products, swift-crypto and swift-log only, as an app depends on them.
    dependencies: [.package(name: "gatehouse", path: gatehouse, traits: [])],
    targets: [
        .target(name: "UIKit", path: "Sources/UIKit", swiftSettings: [.swiftLanguageMode(.v6)]),
        app("PinCodeSwift5", .v5),
        app("PinCodeSwift6", .v6),
        app("RememberMeSwift5", .v5),
        app("RememberMeSwift6", .v6),
    ]
)
