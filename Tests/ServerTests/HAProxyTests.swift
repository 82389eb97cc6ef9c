import Foundation
import Glibc
import TLS
import TestSupport
import Testing

/// A real HAProxy (Debian's package, installed by .ci/run) in front: Host forwarded, PROXY v2 to us,
/// and its health check on our healthPath, as a load-balanced deployment runs.
@Suite("serve behind HAProxy", .serialized)
struct HAProxyTests {
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                bind(fd, pointer, length)
                return getsockname(fd, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test(
        "deploy/haproxy/haproxy.cfg as shipped: TLS ends at HAProxy, each domain reaches its backend with PROXY v2, health checks pass, and the AASA path is never redirected"
    )
    func throughHAProxy() throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/haproxy"), "haproxy is installed by .ci/run")
        let server =
            #"{"listen": [{"address": "127.0.0.1", "port": 0, "proxyProtocol": true}], "admin": "127.0.0.1:0", "healthPath": "/healthz"}"#
        let brandA = try ServerProcess(config: testConfig(server: server))
        defer { brandA.stop() }
        let brandB = try ServerProcess(
            config:
                #"{"version": 1, "sites": [{"hosts": ["example.org", "www.example.org"], "webcredentials": {"apps": ["ABCDE12345.org.example.brand"]}}], "server": \#(server)}"#
        )
        defer { brandB.stop() }
        // The certificate HAProxy presents: chain and key in one PEM, as its crt directory wants them.
        let authority = try DevCertificates.makeAuthority()
        let leaf = try DevCertificates.makeLeaf(
            hosts: ["example.com", "www.example.com", "example.org", "www.example.org"],
            authority: authority
        )
        let certificates = brandA.directory + "/haproxy-certs"
        try FileManager.default.createDirectory(atPath: certificates, withIntermediateDirectories: true)
        try Data(leaf.certificate + leaf.key).write(to: URL(fileURLWithPath: certificates + "/site.pem"))
        try Data(authority.certificate).write(to: URL(fileURLWithPath: brandA.directory + "/ca.pem"))
        let httpPort = try Self.freePort()
        let httpsPort = try Self.freePort()
        let logPath = brandA.directory + "/haproxy.log"
        // Only addresses and file locations are substituted; the file is the one that ships.
        let haproxy = try HAProxyProcess(
            config: "haproxy.cfg",
            environment: [
                "MAXCONN": "1000", "HTTP_BIND": "127.0.0.1:\(httpPort)", "HTTPS_BIND": "127.0.0.1:\(httpsPort)", "CERT_DIR": certificates,
                "HOSTS_MAP": TestPaths.repositoryRoot + "/deploy/haproxy/hosts.map",
                "BRAND_A_SERVER": "127.0.0.1:\(brandA.port)", "BRAND_B_SERVER": "127.0.0.1:\(brandB.port)",
            ],
            logPath: logPath
        )
        defer { withExtendedLifetime(haproxy) {} }
        let log = { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        // Health checks arrive on /healthz through both PROXY listeners.
        #expect(
            waitUntil(10) { brandA.stdout.contains("\"path\":\"/healthz\"") && brandB.stdout.contains("\"path\":\"/healthz\"") },
            "\(log())"
        )
        func curl(_ url: String, host: String, port: Int) throws -> String {
            let result = try runTool([
                "curl", "-s", "--interface", "127.0.0.2", "--cacert", brandA.directory + "/ca.pem",
                "--resolve", "\(host):\(port):127.0.0.1", "-D", "-", url,
            ])
            return String(decoding: result.stdout, as: UTF8.self)
        }
        let path = "/.well-known/apple-app-site-association"
        let shop = try curl("https://www.example.com:\(httpsPort)\(path)", host: "www.example.com", port: httpsPort)
        #expect(shop.contains("HTTP/1.1 200 OK"), "\(shop) \(log())")
        #expect(shop.lowercased().contains("content-type: application/json"))
        #expect(shop.contains(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"]"#))
        let brand = try curl("https://example.org:\(httpsPort)\(path)", host: "example.org", port: httpsPort)
        #expect(brand.contains(#"{"webcredentials":{"apps":["ABCDE12345.org.example.brand"]}}"#), "\(brand)")
        // Plain HTTP: everything is redirected to HTTPS except the AASA paths.
        let plainAASA = try curl("http://example.com:\(httpPort)\(path)", host: "example.com", port: httpPort)
        #expect(plainAASA.hasPrefix("HTTP/1.1 200"), "\(plainAASA)")
        let plainOther = try curl("http://example.com:\(httpPort)/products/1", host: "example.com", port: httpPort)
        #expect(plainOther.hasPrefix("HTTP/1.1 301"), "\(plainOther)")
        #expect(plainOther.contains("location: https://example.com:\(httpPort)/products/1"), "\(plainOther)")
        // The real client (127.0.0.2), not HAProxy's address, is what the access log records.
        #expect(
            waitUntil(3) { brandA.stdout.contains("\"client\":\"127.0.0.2\",\"host\":\"www.example.com:\(httpsPort)\"") },
            "\(brandA.stdout)"
        )
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(brandA.adminPort)/metrics"])
        #expect(String(decoding: metrics.stdout, as: UTF8.self).contains(#"path="health",status="200""#))
    }
}
