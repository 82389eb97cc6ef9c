// swift-tools-version:6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "aasa-server",
    products: [
        .executable(name: "aasa-server", targets: ["aasa-server"])
    ],
    targets: [
        // Pure: bytes and values in, values out. No Foundation, no OS module, no clocks, no globals.
        .target(name: "AASA", swiftSettings: strictSettings),
        // Command line: argument parsing, help, file I/O at the edge, output formatting.
        .target(name: "CLI", dependencies: ["AASA"], swiftSettings: strictSettings),
        .executableTarget(name: "aasa-server", dependencies: ["CLI"], swiftSettings: strictSettings),
        // Release-mode timing of the pure core; run by Benchmarks/core.sh, never by `swift test`.
        .executableTarget(
            name: "CoreBench",
            dependencies: ["AASA"],
            path: "Benchmarks/CoreBench",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AASATests",
            dependencies: ["AASA"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "CLITests", dependencies: ["CLI", "AASA"], swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
