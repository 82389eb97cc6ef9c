import Foundation
import TestSupport
import Testing

/// `/.well-known/assetlinks.json` served per host like the AASA: prepared at load, 200 application/json,
/// ETag, gzip when it pays, HEAD, hot reload, counted; 404 where a host has no Android apps.
@Suite("Serving assetlinks.json", .serialized)
struct AssetLinksServingTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    static func config(brandFile: String = "brand.json") -> String {
        // Enough packages on one site for the list to pass 1 KB, so gzip applies.
        let many = (0..<8).map { #"{"package": "com.example.app\#($0)", "sha256": ["\#(fingerprint)"]}"# }.joined(separator: ", ")
        return #"""
            {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]}}},
             "sites": [
               {"hosts": ["example.com"], "webcredentials": {"apps": ["shop"]}, "android": ["shop"]},
               {"hosts": ["go.example.com"], "android": [\#(many)]},
               {"hosts": ["ios.example.com"], "webcredentials": {"apps": ["shop"]}},
               {"hosts": ["brand.example.org"], "webcredentials": {"apps": ["shop"]}, "assetlinksFile": "\#(brandFile)"}
             ],
             "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "fetcherNetworks": {"google": ["127.0.0.0/8"]}}}
            """#
    }

    static let brand =
        #"[{"relation": ["delegate_permission/common.handle_all_urls"], "target": {"namespace": "android_app", "package_name": "org.example.brand", "sha256_cert_fingerprints": ["\#(fingerprint)"]}}]"#

    func get(
        _ server: ServerProcess,
        host: String,
        path: String = "/.well-known/assetlinks.json",
        extra: [String] = []
    ) throws -> (
        head: String, body: String
    ) {
        let result = try runTool(["curl", "-s", "-D", "-", "-H", "Host: \(host)"] + extra + ["http://127.0.0.1:\(server.port)\(path)"])
        let text = String(decoding: result.stdout, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        return (parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test("Per host: 200 JSON with ETag and gzip, HEAD without a body, 404 where there are no Android apps, AASA untouched")
    func perHost() throws {
        let server = try ServerProcess(config: Self.config(), files: ["brand.json": Self.brand])
        defer { server.stop() }
        let shop = try get(server, host: "example.com")
        #expect(shop.head.hasPrefix("HTTP/1.1 200 OK"), "\(shop.head)")
        #expect(shop.head.contains("Content-Type: application/json"))
        #expect(shop.head.contains("ETag: \""))
        #expect(shop.body.contains(#""package_name":"com.example.shop""#))
        let head = try runTool([
            "curl", "-s", "-I", "-H", "Host: example.com", "http://127.0.0.1:\(server.port)/.well-known/assetlinks.json",
        ])
        let headText = String(decoding: head.stdout, as: UTF8.self)
        #expect(headText.contains("Content-Length: \(shop.body.utf8.count)"))
        // Android-only: assetlinks.json (gzip, it is over 1 KB); the AASA paths answer as for an unknown host.
        let go = try get(server, host: "go.example.com", extra: ["-H", "Accept-Encoding: gzip"])
        #expect(go.head.contains("Content-Encoding: gzip") && go.head.contains("Vary: Accept-Encoding"), "\(go.head)")
        let goAASA = try get(server, host: "go.example.com", path: "/.well-known/apple-app-site-association")
        #expect(goAASA.head.hasPrefix("HTTP/1.1 200") && goAASA.body == #"{"applinks":{"details":[]}}"#)
        // No Android apps: 404 with a reason, never an empty list.
        for host in ["ios.example.com", "unknown.example.net"] {
            let none = try get(server, host: host)
            #expect(none.head.hasPrefix("HTTP/1.1 404"), "\(host)")
            #expect(none.body.contains("no Android apps"))
        }
        let brand = try get(server, host: "brand.example.org")
        #expect(brand.body == Self.brand, "a hosted file is served byte for byte")
        let post = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Host: example.com",
            "http://127.0.0.1:\(server.port)/.well-known/assetlinks.json",
        ])
        #expect(String(decoding: post.stdout, as: UTF8.self) == "405")
        // Google's verifier is counted per site, like Apple's CDN (this config counts loopback as Google's network).
        _ = try runTool([
            "curl", "-s", "-A", "GoogleAssociationService", "-H", "Host: example.com",
            "http://127.0.0.1:\(server.port)/.well-known/assetlinks.json",
        ])
        let metrics = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"]).stdout, as: UTF8.self)
        #expect(metrics.contains(#"aasa_google_fetches_total{host="example.com"} 1"#), "\(metrics)")
        #expect(metrics.contains("aasa_google_verified_fetches_total 1"), "\(metrics)")
        #expect(metrics.contains("aasa_google_unverified_fetches_total 0"), "\(metrics)")
        #expect(metrics.contains(#"aasa_requests_total{host="ios.example.com",path="assetlinks",status="404"} 1"#))
    }

    @Test("A hosted assetlinks file is watched: an edit is served after the reload, a broken edit keeps the last good one")
    func hotReload() throws {
        let server = try ServerProcess(config: Self.config(), files: ["brand.json": Self.brand])
        defer { server.stop() }
        let edited = Self.brand.replacingOccurrences(of: "org.example.brand", with: "org.example.renamed")
        try atomicWrite(edited, to: server.directory + "/brand.json")
        #expect(waitUntil(5) { (try? get(server, host: "brand.example.org").body) == edited }, "\(server.stderr)")
        #expect(server.stderr.contains("hosts changed: brand.example.org"), "\(server.stderr)")
        // Lower-case fingerprints would make Google ignore the file: rejected, the previous list keeps serving.
        try atomicWrite(edited.replacingOccurrences(of: "14:6D:E9", with: "14:6d:e9"), to: server.directory + "/brand.json")
        #expect(waitUntil(5) { server.stderr.contains("[assetlinks.fingerprint]") })
        #expect(try get(server, host: "brand.example.org").body == edited)
    }
}
