import Foundation
import TestSupport
import Testing

/// Tenants in their own files, as a provisioning system manages them: each add, edit and removal of a
/// file is seen by the watcher and served without a restart; a broken file keeps the last good config.
@Suite("serve with included site files", .serialized)
struct IncludeServingTests {
    static func site(_ host: String, path: String = "/p/*") -> String {
        #"{"hosts": ["\#(host)"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "\#(path)"}]}]}}"#
    }

    @Test("Adding, editing and removing a file under sites.d is served after the reload; a broken file is rejected naming it")
    func tenants() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "include": ["sites.d/*.json"],
             "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0"}}
            """#
        let server = try ServerProcess(config: config, files: ["sites.d/a.json": Self.site("a.example.com")])
        defer { server.stop() }
        func document(_ host: String) -> String {
            let result = try? runTool([
                "curl", "-s", "-H", "Host: \(host)", "http://127.0.0.1:\(server.port)/.well-known/apple-app-site-association",
            ])
            return result.map { String(decoding: $0.stdout, as: UTF8.self) } ?? ""
        }
        #expect(document("a.example.com").contains(#""/":"/p/*""#))
        // A new tenant file: the directory is watched by pattern, so the new name is seen.
        try atomicWrite(Self.site("b.example.com"), to: server.directory + "/sites.d/b.json")
        #expect(waitUntil(5) { document("b.example.com").contains("ABCDE12345.com.example.shop") }, "\(server.stderr)")
        try atomicWrite(Self.site("a.example.com", path: "/q/*"), to: server.directory + "/sites.d/a.json")
        #expect(waitUntil(5) { document("a.example.com").contains(#""/":"/q/*""#) })
        try FileManager.default.removeItem(atPath: server.directory + "/sites.d/b.json")
        #expect(waitUntil(5) { document("b.example.com") == #"{"applinks":{"details":[]}}"# })
        #expect(server.stderr.contains("hosts removed: b.example.com"))
        // A broken tenant file: rejected with its name and position; everything keeps serving.
        try atomicWrite(#"{"hosts": ["c.example.com"], "applinks": }"#, to: server.directory + "/sites.d/c.json")
        #expect(waitUntil(5) { server.stderr.contains("sites.d/c.json:1:") }, "\(server.stderr)")
        #expect(document("a.example.com").contains(#""/":"/q/*""#))
        #expect(try runTool([TestPaths.serverExecutable, "validate", "--config", server.directory + "/config.json"]).status == 1)
    }

    @Test(
        "An edit to one tenant file rebuilds only its changed sites: other hosts keep ETag and Last-Modified; a site moved between files changes nothing"
    )
    func editRebuildsOnlyThatFile() throws {
        let config = #"""
            {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"}, "include": ["sites.d/*.json"],
             "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false, "reload": {"watch": false}}}
            """#
        let server = try ServerProcess(
            config: config,
            files: [
                "sites.d/a.json": Self.site("a.example.com"),
                "sites.d/b.json": "[\(Self.site("b1.example.com")), \(Self.site("b2.example.com"))]",
            ]
        )
        defer { server.stop() }
        func get(_ host: String) throws -> HTTPResponse {
            let client = try RawClient(port: server.port)
            client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            return try #require(client.readResponses(1).first)
        }
        func reload() throws -> String {
            String(
                decoding: try runTool(["curl", "-s", "-X", "POST", "http://127.0.0.1:\(server.adminPort)/reload"]).stdout,
                as: UTF8.self
            )
        }
        let before = try ["a.example.com", "b1.example.com", "b2.example.com"].map(get)
        // Last-Modified has one-second resolution: a rebuilt response would show a later one.
        Thread.sleep(forTimeInterval: 1.2)
        try atomicWrite(
            "[\(Self.site("b1.example.com")), \(Self.site("b2.example.com", path: "/q/*"))]",
            to: server.directory + "/sites.d/b.json"
        )
        let outcome = try reload()
        #expect(outcome.contains("hosts changed: b2.example.com\""), "\(outcome)")
        let after = try ["a.example.com", "b1.example.com", "b2.example.com"].map(get)
        for kept in 0..<2 {
            #expect(after[kept].header("ETag") == before[kept].header("ETag"))
            #expect(after[kept].header("Last-Modified") == before[kept].header("Last-Modified"))
        }
        #expect(after[2].bodyText.contains(#""/":"/q/*""#))
        #expect(after[2].header("Last-Modified") != before[2].header("Last-Modified"))
        // b1 moves to its own file: same hosts, same document, so no host changed.
        try atomicWrite(Self.site("b1.example.com"), to: server.directory + "/sites.d/c.json")
        try atomicWrite("[\(Self.site("b2.example.com", path: "/q/*"))]", to: server.directory + "/sites.d/b.json")
        let moved = try reload()
        #expect(moved.contains("no host changed"), "\(moved)")
        #expect(try get("b1.example.com").header("ETag") == before[1].header("ETag"))
        #expect(try get("b2.example.com").bodyText.contains(#""/":"/q/*""#))
        // A file sorted before all others, then removed: every host answers from its own site each time.
        try atomicWrite(Self.site("first.example.com", path: "/first/*"), to: server.directory + "/sites.d/0.json")
        #expect(try reload().contains("hosts added: first.example.com"))
        #expect(try get("first.example.com").bodyText.contains(#""/":"/first/*""#))
        #expect(try get("a.example.com").header("ETag") == before[0].header("ETag"))
        #expect(try get("b2.example.com").bodyText.contains(#""/":"/q/*""#))
        try FileManager.default.removeItem(atPath: server.directory + "/sites.d/0.json")
        #expect(try reload().contains("hosts removed: first.example.com"))
        #expect(try get("first.example.com").bodyText == #"{"applinks":{"details":[]}}"#)
        #expect(try get("b1.example.com").header("ETag") == before[1].header("ETag"))
    }
}
