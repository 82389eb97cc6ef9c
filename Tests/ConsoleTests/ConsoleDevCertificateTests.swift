import Foundation
import TLS
import TestSupport
import Testing

/// A host served with a certificate from `aasa-server dev`'s CA: the console says Apple's CDN rejects it,
/// never "no findings" and a healthy expiry.
@Suite("The console on a dev-CA certificate")
struct ConsoleDevCertificateTests {
    @Test("the index row says dev CA, the summary counts it, and the host page has the tls.dev-certificate finding")
    func devCertificate() throws {
        let authority = try DevCertificates.makeAuthority()
        let leaf = try DevCertificates.makeLeaf(hosts: ["example.com", "www.example.com", "*.tenant.example.com"], authority: authority)
        let server = try ServerProcess(
            config: testConfig(
                server: #"""
                    {"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "127.0.0.1:0",
                     "certificates": [{"hosts": ["example.com", "www.example.com", "*.tenant.example.com"], "certificate": "dev.pem", "key": "dev-key.pem"}]}
                    """#
            ),
            files: ["dev.pem": String(decoding: leaf.certificate, as: UTF8.self), "dev-key.pem": String(decoding: leaf.key, as: UTF8.self)]
        )
        defer { server.stop() }
        func page(_ path: String) throws -> String {
            String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)\(path)"]).stdout, as: UTF8.self)
        }
        let index = try page("/console?q=example.com")
        #expect(index.contains("dev CA: Apple&#39;s CDN rejects it") || index.contains("dev CA: Apple's CDN rejects it"), "\(index)")
        #expect(index.contains("from the dev CA, which Apple"), "the summary counts it")
        let host = try page("/console/host/example.com")
        #expect(host.contains("[tls.dev-certificate]") && !host.contains("No findings."), "\(host)")
    }
}
