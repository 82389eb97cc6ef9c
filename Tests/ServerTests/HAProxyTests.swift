import Foundation
import Glibc
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

    @Test("Requests through HAProxy reach the right site, carry the client address via PROXY v2, and health checks pass")
    func throughHAProxy() throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/haproxy"), "haproxy is installed by .ci/run")
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": [{"address": "127.0.0.1", "port": 0, "proxyProtocol": true}], "admin": "127.0.0.1:0", "healthPath": "/healthz"}"#
            )
        )
        defer { server.stop() }
        let frontPort = try Self.freePort()
        let configPath = server.directory + "/haproxy.cfg"
        let config = """
            global
                maxconn 100
            defaults
                mode http
                timeout connect 2s
                timeout client 10s
                timeout server 10s
            frontend aasa
                bind 127.0.0.1:\(frontPort)
                default_backend aasa_servers
            backend aasa_servers
                option httpchk
                http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host healthcheck
                server local 127.0.0.1:\(server.port) send-proxy-v2 check check-send-proxy inter 200ms fall 1 rise 1
            """
        try Data((config + "\n").utf8).write(to: URL(fileURLWithPath: configPath))
        let haproxy = Process()
        haproxy.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        haproxy.arguments = ["-f", configPath, "-db"]
        let logPath = server.directory + "/haproxy.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        haproxy.standardOutput = FileHandle(forWritingAtPath: logPath)
        haproxy.standardError = FileHandle(forWritingAtPath: logPath)
        haproxy.standardInput = FileHandle.nullDevice
        try haproxy.run()
        defer {
            haproxy.terminate()
            _ = waitUntil(5) { !haproxy.isRunning }
            if haproxy.isRunning { kill(haproxy.processIdentifier, SIGKILL) }
        }
        // Health checks arrive on /healthz through the PROXY listener.
        #expect(waitUntil(10) { server.stdout.contains("\"path\":\"/healthz\"") }, "no health check seen: \(server.stdout)")
        let url = "http://127.0.0.1:\(frontPort)/.well-known/apple-app-site-association"
        let result = try runTool(["curl", "-s", "--interface", "127.0.0.2", "-H", "Host: www.example.com", "-D", "-", url])
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.contains("HTTP/1.1 200 OK"), "\(text) \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        #expect(text.lowercased().contains("content-type: application/json"))
        #expect(text.contains(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"]"#))
        // The real client (127.0.0.2), not HAProxy's address, is what the access log records.
        #expect(waitUntil(3) { server.stdout.contains("\"client\":\"127.0.0.2\",\"host\":\"www.example.com\"") }, "\(server.stdout)")
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
        #expect(String(decoding: metrics.stdout, as: UTF8.self).contains(#"path="health",status="200""#))
    }
}
