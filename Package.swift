// swift-tools-version:6.2
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The request path mutates connection state held in classes (one per connection, touched by one thread);
// checking exclusivity at run time there cost ~1,500 instructions per request (swift_beginAccess and a
// thread-local access set), more than parsing the request. Debug builds, which run the tests, keep the
// checks; the compile-time checks stay on everywhere.
let serverSettings = strictSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "aasa-server",
    products: [
        .executable(name: "aasa-server", targets: ["aasa-server"])
    ],
    targets: [
        // C: what Swift cannot import (epoll, signalfd, accept4 need _GNU_SOURCE; zlib's init macros).
        .target(name: "CLinux", cSettings: [.define("_GNU_SOURCE")]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // SQLite and libpq: their headers only; each library is opened when a link store in it is first
        // used (Database), so a server without one never loads it.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CPostgreSQL", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),

        // Pure: bytes and values in, values out. No Foundation, no OS module, no clocks, no globals.
        // Small text and byte helpers the other targets share, written once (no dependencies).
        .target(name: "Support", swiftSettings: strictSettings),
        .target(name: "AASA", dependencies: ["Support"], swiftSettings: strictSettings),
        // Who fetched which version of a host's documents, and when (pure; the server and `status` share it).
        .target(name: "FetchRecords", dependencies: ["AASA", "Support"], swiftSettings: strictSettings),
        // The admin console's pages, rendered as pure functions of what is served and recorded.
        .target(name: "ConsolePages", dependencies: ["FetchRecords", "Support"], swiftSettings: strictSettings),
        .target(name: "HTTP1", dependencies: ["Support"], swiftSettings: strictSettings),
        // Link domains: who is asking, where each visitor goes, and the pages they see (pure).
        .target(name: "Links", dependencies: ["AASA", "Support"], swiftSettings: strictSettings),
        // QR codes for URLs, as text, SVG and PNG: pure (PNG's compression is handed in).
        .target(name: "QRCode", swiftSettings: strictSettings),

        // Thin: the only code that makes system calls (Posix) or calls zlib (Gzip).
        .target(name: "Posix", dependencies: ["CLinux", "Support"], swiftSettings: strictSettings),
        .target(name: "Gzip", dependencies: ["CZlib"], swiftSettings: strictSettings),
        .target(name: "TLS", dependencies: ["COpenSSL", "Posix", "Support"], swiftSettings: strictSettings),
        // Connections to SQLite files and PostgreSQL servers, one protocol for both: the only code that calls
        // SQLite or libpq.
        .target(name: "Database", dependencies: ["CSQLite", "CPostgreSQL", "Posix", "Support"], swiftSettings: strictSettings),
        // The short links of every link domain, in a SQLite file or a PostgreSQL database: schema
        // migrations, reads, changes.
        .target(name: "LinkStore", dependencies: ["Database", "Links", "AASA", "Posix", "Support"], swiftSettings: strictSettings),

        // Composition: the epoll server, built from the pure and thin targets.
        .target(
            name: "Server",
            dependencies: [
                "AASA", "ACME", "ConsolePages", "Database", "FetchRecords", "HTTP1", "Links", "LinkStore", "Posix", "Gzip", "QRCode", "TLS",
                "Support",
            ],
            swiftSettings: serverSettings
        ),

        // `check`: its own HTTP/1.1 and TLS client (Posix, TLS) and the pure evaluation of what it saw.
        // Outgoing HTTP/1.1 requests (ACME, the on-demand ask URL), blocking, on worker threads.
        .target(name: "HTTPClient", dependencies: ["HTTP1", "Posix", "TLS"], swiftSettings: strictSettings),
        // Certificates from an RFC 8555 CA: the protocol, storage shared by replicas, renewal, challenges.
        .target(
            name: "ACME",
            dependencies: ["AASA", "Database", "HTTPClient", "HTTP1", "Posix", "TLS", "Support"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "Check",
            dependencies: ["AASA", "HTTP1", "HTTPClient", "Posix", "TLS", "Gzip", "Support"],
            swiftSettings: strictSettings
        ),

        // Command line: argument parsing, help, file I/O at the edge, output formatting.
        .target(
            name: "CLI",
            dependencies: [
                "AASA", "ACME", "FetchRecords", "HTTP1", "HTTPClient", "Links", "LinkStore", "Server", "Check", "Posix", "QRCode", "TLS",
                "Gzip", "Support",
            ],
            swiftSettings: strictSettings,
            plugins: ["BuildInfo"]
        ),
        // Build time only: records the checkout's commit for `--version` (reruns when HEAD moves).
        .executableTarget(name: "BuildInfoGenerator", path: "Plugins/BuildInfoGenerator"),
        .plugin(name: "BuildInfo", capability: .buildTool(), dependencies: ["BuildInfoGenerator"], path: "Plugins/BuildInfo"),
        .executableTarget(
            name: "aasa-server",
            dependencies: ["CLI"],
            exclude: ["StaticCxx"],
            swiftSettings: strictSettings,
            // The Swift runtime's C++ library linked in, not loaded at every start (see StaticCxx/libstdc++.so).
            linkerSettings: [
                .unsafeFlags(["-L", Context.packageDirectory + "/Sources/aasa-server/StaticCxx"], .when(configuration: .release))
            ]
        ),

        // Release-mode timing of the pure core; run by Benchmarks/core.sh, never by `swift test`.
        .executableTarget(
            name: "CoreBench",
            dependencies: ["AASA"],
            path: "Benchmarks/CoreBench",
            swiftSettings: strictSettings
        ),
        // Shared by the test targets: the repository root, the built binary, bounded waits, running tools.
        .target(name: "TestSupport", dependencies: ["TLS"], path: "Tests/TestSupport", exclude: ["chromium.py"]),
        .testTarget(
            name: "AASATests",
            dependencies: ["AASA", "Support", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "SupportTests", dependencies: ["Support"], swiftSettings: strictSettings),
        .testTarget(name: "FetchRecordsTests", dependencies: ["FetchRecords", "AASA", "Support"], swiftSettings: strictSettings),
        .testTarget(
            name: "ConsoleTests",
            dependencies: ["ConsolePages", "FetchRecords", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1"], swiftSettings: strictSettings),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "Gzip", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "LinkStoreTests",
            dependencies: ["Database", "LinkStore", "Links", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "LinksTests", dependencies: ["Links", "AASA", "Support", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Server", "AASA", "Database", "FetchRecords", "HTTP1", "Links", "LinkStore", "Gzip", "TLS", "Posix", "Support",
                "TestSupport",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckTests",
            dependencies: ["Check", "AASA", "HTTP1", "TLS", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "TLSTests",
            dependencies: ["TLS", "COpenSSL", "Posix", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "DevTests", dependencies: ["TLS", "TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "DeploymentTests",
            dependencies: ["Server", "TestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ACMETests",
            dependencies: ["ACME", "AASA", "Database", "TLS", "Support", "Posix", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "CLITests", dependencies: ["CLI", "AASA", "Posix", "TestSupport"], swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)
