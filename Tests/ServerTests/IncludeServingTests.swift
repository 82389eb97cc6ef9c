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
}
