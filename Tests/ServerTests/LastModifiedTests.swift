import Foundation
import Glibc
import TestSupport
import Testing

/// Last-Modified says when a document changed, not when the server started: a restart keeps it (the
/// first load stamps documents with their files' modification time), and a reload that leaves one
/// document as it was leaves its Last-Modified too.
@Suite("Last-Modified across restarts and reloads", .serialized)
struct LastModifiedTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    static func config(productPath: String) -> String {
        #"""
        {"version": 1,
         "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]}}},
         "sites": [{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "\#(productPath)"}]}]},
                    "android": ["shop"]}],
         "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false, "reload": {"watch": false},
                    "stateDirectory": "state"}}
        """#
    }

    func lastModified(_ server: ServerProcess, _ path: String) throws -> String? {
        let client = try RawClient(port: server.port)
        client.send("GET \(path) HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n")
        return client.readResponses(1).first?.header("Last-Modified")
    }

    @Test(
        "a restart keeps Last-Modified (file times, or the state directory's first-served times); a reload of the AASA alone keeps assetlinks.json's"
    )
    func restartsAndReloads() throws {
        let aasa = "/.well-known/apple-app-site-association"
        let assetLinks = "/.well-known/assetlinks.json"
        try withTemporaryDirectory { directory in
            try restartThenReload(in: directory, aasa: aasa, assetLinks: assetLinks)
        }
    }

    func restartThenReload(in directory: String, aasa: String, assetLinks: String) throws {
        let configPath = directory + "/config.json"
        try Self.config(productPath: "/product/*").write(toFile: configPath, atomically: true, encoding: .utf8)
        // The config last changed on 1 June 2026, long before this run.
        var times = [timespec(tv_sec: 1_780_272_000, tv_nsec: 0), timespec(tv_sec: 1_780_272_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, configPath, &times, 0) == 0)
        let june = "Mon, 01 Jun 2026 00:00:00 GMT"
        let command = ["serve", "--config", configPath]
        do {
            let first = try ServerProcess(config: "{}", command: command)
            defer { first.stop() }
            #expect(try lastModified(first, aasa) == june)
            #expect(try lastModified(first, assetLinks) == june)
        }
        var changed = ""
        do {
            let restarted = try ServerProcess(config: "{}", command: command)
            defer { restarted.stop() }
            #expect(try lastModified(restarted, aasa) == june, "a restart is not a change")
            // A device fetches: the state directory now keeps this host's versions and when each was first served.
            let device = try RawClient(port: restarted.port)
            device.send("GET \(aasa) HTTP/1.1\r\nHost: example.com\r\nUser-Agent: swcd (unknown version)\r\nConnection: close\r\n\r\n")
            #expect(device.readResponses(1).first?.status == 200)
            #expect(waitUntil(5) { (try? FileManager.default.contentsOfDirectory(atPath: directory + "/state"))?.isEmpty == false })
            try Self.config(productPath: "/item/*").write(toFile: configPath, atomically: true, encoding: .utf8)
            let reload = try runTool(["curl", "-s", "-X", "POST", "http://127.0.0.1:\(restarted.adminPort)/reload"])
            #expect(String(decoding: reload.stdout, as: UTF8.self).contains("\"reloaded\""))
            changed = try #require(try lastModified(restarted, aasa))
            #expect(changed != june, "the AASA changed: stamped with the reload")
            #expect(try lastModified(restarted, assetLinks) == june, "assetlinks.json did not change")
            let status = try runTool([TestPaths.serverExecutable, "status", "--admin", "127.0.0.1:\(restarted.adminPort)", "example.com"])
            let words = String(decoding: status.stdout, as: UTF8.self)
            #expect(words.contains("assetlinks.json: version ") && words.contains("served since 2026-06-01 00:00:00 UTC"), "\(words)")
            #expect(waitUntil(5) { ((try? stateText(directory)) ?? "").components(separatedBy: "\"type\":\"version\"").count >= 3 })
        }
        // The config is touched again (a deploy rewrote it unchanged): the file time says now, the state
        // directory says when each version was first served — and wins.
        Thread.sleep(forTimeInterval: 1.1)
        #expect(utimensat(AT_FDCWD, configPath, nil, 0) == 0)
        let again = try ServerProcess(config: "{}", command: command)
        defer { again.stop() }
        #expect(try lastModified(again, aasa) == changed, "first served at the reload, as recorded")
        #expect(try lastModified(again, assetLinks) == june, "recorded as first served in June")
    }

    func stateText(_ directory: String) throws -> String {
        try FileManager.default.contentsOfDirectory(atPath: directory + "/state").filter { $0.hasPrefix("fetches-") }
            .map { try String(contentsOfFile: directory + "/state/" + $0, encoding: .utf8) }.joined()
    }
}
