import Foundation
import TestSupport
import Testing

/// The real binary keeps its included files' sites in `state/compiled-sites` and restarts from it: a
/// tenant file changed while the server was down is served in its new version, the unchanged ones
/// byte for byte as before, and a damaged snapshot is ignored in words and written again.
@Suite("Compiled sites on the real binary: restarts from the state directory's snapshot")
struct CompiledSitesServingTests {
    static let config = """
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [], "include": ["sites.d/*.json"],
         "server": {"listen": ["127.0.0.1:0"], "admin": "off", "stateDirectory": "state", "reload": {"watch": false}}}
        """

    static func site(_ name: String, product: String) -> String {
        #"{"hosts": ["\#(name).example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "\#(product)"}]}]}}"#
    }

    static func aasa(_ host: String, port: Int) throws -> String {
        let result = try runTool(["curl", "-s", "-H", "Host: \(host)", "http://127.0.0.1:\(port)/.well-known/apple-app-site-association"])
        return String(decoding: result.stdout, as: UTF8.self)
    }

    static func kept(_ server: ServerProcess) -> Int { server.stderr.components(separatedBy: "kept for the next start").count - 1 }

    @Test("A restart restores the unchanged files, builds the one changed while it was down, and serves both right")
    func restart() throws {
        let tenants = (0..<40).map { Self.site("a\($0)", product: "/a\($0)/*") }
        let first = try ServerProcess(
            config: Self.config,
            files: [
                "sites.d/a.json": "[\n" + tenants.joined(separator: ",\n") + "\n]",
                "sites.d/b.json": Self.site("b", product: "/spring/*"),
                "sites.d/c.json": Self.site("c", product: "/c/*"),
            ]
        )
        // Kept to the end: its deinit removes the directory the restarts use.
        defer { withExtendedLifetime(first) {} }
        let directory = first.directory
        #expect(waitUntil(10) { Self.kept(first) == 1 }, "\(first.stderr)")
        let before = try (0..<40).map { try Self.aasa("a\($0).example.com", port: first.port) }
        #expect(before[7].contains("/a7/*"), "\(before[7])")
        #expect(try Self.aasa("b.example.com", port: first.port).contains("/spring/*"))
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/state/compiled-sites")[.posixPermissions] as? Int
        #expect(mode == 0o600, "the snapshot is private to the server's user")

        // Changed while the server is down; the restart names its config another way (relative, from its
        // directory): the snapshot's entries are named relative to the config, so they still match.
        try Data(Self.site("b", product: "/summer/*").utf8).write(to: URL(fileURLWithPath: directory + "/sites.d/b.json"))
        let second = try ServerProcess(config: Self.config, command: ["serve", "--config", "config.json"], currentDirectory: directory)
        defer { second.stop() }
        #expect(
            second.stderr.contains("2 included files restored from the compiled-sites snapshot, 1 built from their bytes"),
            "\(second.stderr)"
        )
        let b = try Self.aasa("b.example.com", port: second.port)
        #expect(b.contains("/summer/*") && !b.contains("/spring/*"), "\(b)")
        #expect(try (0..<40).map { try Self.aasa("a\($0).example.com", port: second.port) } == before)
        #expect(try Self.aasa("c.example.com", port: second.port).contains("/c/*"))
        // It built a file from its bytes, so it writes the snapshot again.
        #expect(waitUntil(10) { Self.kept(second) == 1 }, "\(second.stderr)")
        second.signal(SIGTERM)
        #expect(second.waitForExit() == 0)

        // One byte of the snapshot flipped: refused whole, said so, every file built, written again.
        let path = directory + "/state/compiled-sites"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let third = try ServerProcess(config: Self.config, command: ["serve", "--config", directory + "/config.json"])
        defer { third.stop() }
        #expect(third.stderr.contains("damaged or written by another version of the format; ignored"), "\(third.stderr)")
        #expect(!third.stderr.contains("restored from the compiled-sites snapshot"))
        #expect(try Self.aasa("b.example.com", port: third.port).contains("/summer/*"))
        #expect(try Self.aasa("a39.example.com", port: third.port) == before[39])
        #expect(waitUntil(10) { Self.kept(third) == 1 }, "\(third.stderr)")
    }

    static let hostedConfig = """
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "sites": [{"hosts": ["big.example.com"], "file": "big.aasa"}],
         "server": {"listen": ["127.0.0.1:0"], "admin": "off", "stateDirectory": "state", "reload": {"watch": false}}}
        """

    /// A valid AASA file of a few tens of KB, worth compressing.
    static func bigDocument(season: String) -> String {
        let components = (0..<600).map { #"{"/": "/\#(season)/\#($0)/*", "comment": "collection \#($0)"}"# }
        return #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "components": ["#
            + components.joined(separator: ", ") + "]}]}}"
    }

    /// The headers (but Date) and body of the AASA answer, raw (gzip when `gzip`).
    static func fetch(_ port: Int, gzip: Bool) throws -> (head: String, body: [UInt8]) {
        try withTemporaryDirectory { directory in
            let result = try runTool(
                ["curl", "-s", "-D", directory + "/head", "-H", "Host: big.example.com"] + (gzip ? ["-H", "Accept-Encoding: gzip"] : [])
                    + ["http://127.0.0.1:\(port)/.well-known/apple-app-site-association"]
            )
            let head = try String(contentsOfFile: directory + "/head", encoding: .utf8)
            return (head.split(separator: "\r\n").filter { !$0.lowercased().hasPrefix("date:") }.joined(separator: "\n"), result.stdout)
        }
    }

    @Test(
        "A hosted document: a restart serves it as the snapshot kept it, the same bytes and gzip form unchecked; changed while down it is checked, a mistake refused"
    )
    func hostedDocument() throws {
        let first = try ServerProcess(config: Self.hostedConfig, files: ["big.aasa": Self.bigDocument(season: "spring")])
        defer { withExtendedLifetime(first) {} }
        let directory = first.directory
        #expect(waitUntil(10) { Self.kept(first) == 1 }, "\(first.stderr)")
        let identity = try Self.fetch(first.port, gzip: false)
        let gzipped = try Self.fetch(first.port, gzip: true)
        #expect(identity.head.lowercased().contains("content-type: application/json") && identity.body.count > 20_000)
        #expect(gzipped.head.lowercased().contains("content-encoding: gzip") && gzipped.body.count < identity.body.count / 4)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)

        let command = ["serve", "--config", directory + "/config.json"]
        let second = try ServerProcess(config: Self.hostedConfig, command: command)
        #expect(
            second.stderr.contains(
                "hosted documents taken from the compiled-sites snapshot (the same bytes, checked and compressed before): 1; checked from their bytes: 0"
            ),
            "\(second.stderr)"
        )
        #expect(try Self.fetch(second.port, gzip: false) == identity)
        #expect(try Self.fetch(second.port, gzip: true) == gzipped)
        // Nothing new to keep: the snapshot is not written again.
        Thread.sleep(forTimeInterval: 1)
        #expect(Self.kept(second) == 0, "\(second.stderr)")
        second.signal(SIGTERM)
        #expect(second.waitForExit() == 0)

        // A mistake written while the server was down: the kept verdict was for other bytes.
        let file = URL(fileURLWithPath: directory + "/big.aasa")
        try Data(#"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"], "paths": 7}]}}"#.utf8).write(to: file)
        let refused = try runTool([TestPaths.serverExecutable] + command, timeout: 20)
        #expect(refused.status == 1 && refused.stderr.contains("big.aasa:1:"), "\(refused.stderr)")

        try Data(Self.bigDocument(season: "summer").utf8).write(to: file)
        let third = try ServerProcess(config: Self.hostedConfig, command: command)
        defer { third.stop() }
        #expect(!third.stderr.contains("taken from the compiled-sites snapshot"), "\(third.stderr)")
        let summer = try Self.fetch(third.port, gzip: false)
        #expect(String(decoding: summer.body, as: UTF8.self).contains("/summer/0/*"))
        #expect(waitUntil(10) { Self.kept(third) == 1 }, "\(third.stderr)")
    }
}
