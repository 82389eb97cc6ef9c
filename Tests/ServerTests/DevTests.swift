import Foundation
import Glibc
import TLS
import TestSupport
import Testing

@Suite("dev and dev-cert", .serialized)
struct DevTests {
    func mode(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1
    }

    @Test("dev-cert: a CA and an Apple-compatible leaf, keys 0600, the CA reused, the leaf renewed when hosts change")
    func devCert() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-devcert-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try runTool([
            TestPaths.serverExecutable, "dev-cert", "--host", "dev.example.com", "--host", "*.dev.example.com", "--out", directory,
        ])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(mode(directory + "/key.pem") == 0o600)
        #expect(mode(directory + "/ca-key.pem") == 0o600)
        let leaf = try #require(CertificateInspector.summary(try Array(Data(contentsOf: URL(fileURLWithPath: directory + "/cert.pem")))))
        #expect(leaf.names == ["dev.example.com", "*.dev.example.com"])
        let lifetime = leaf.notAfter - Int(Date().timeIntervalSince1970)
        #expect(lifetime > 820 * 86_400 && lifetime <= 825 * 86_400)
        let text = try runTool(["openssl", "x509", "-in", directory + "/cert.pem", "-noout", "-text"])
        let description = String(decoding: text.stdout, as: UTF8.self)
        #expect(description.contains("TLS Web Server Authentication"))
        #expect(description.contains("id-ecPublicKey") && description.contains("prime256v1"))
        let verify = try runTool(["openssl", "verify", "-CAfile", directory + "/ca.pem", directory + "/cert.pem"])
        #expect(verify.status == 0)
        let caBefore = try Data(contentsOf: URL(fileURLWithPath: directory + "/ca.pem"))
        let certBefore = try Data(contentsOf: URL(fileURLWithPath: directory + "/cert.pem"))
        let again = try runTool([
            TestPaths.serverExecutable, "dev-cert", "--host", "dev.example.com", "--host", "*.dev.example.com", "--out", directory,
        ])
        #expect(again.stderr.contains("reusing the CA") && again.stderr.contains("still valid"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/cert.pem")) == certBefore)
        _ = try runTool([TestPaths.serverExecutable, "dev-cert", "--host", "other.example.com", "--out", directory])
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/ca.pem")) == caBefore)
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/cert.pem")) != certBefore)
        #expect(try runTool([TestPaths.serverExecutable, "dev-cert", "--out", directory]).status == 2)
    }

    @Test("dev: starter config, CA profile, ready-to-paste instructions, HTTPS verified with the CA; the config is never overwritten")
    func dev() throws {
        let command = [
            "dev", "--host", "dev.example.com", "--port", "0", "--listen", "127.0.0.1", "--state-dir", "{dir}/state",
            "--app", "ABCDE12345.com.example.dev",
        ]
        let server = try ServerProcess(config: "{}", command: command)
        defer { server.stop() }
        let state = server.directory + "/state"
        #expect(server.stdout.contains("applinks:dev.example.com?mode=developer"))
        #expect(server.stdout.contains("Associated Domains Development"))
        #expect(server.stdout.contains("curl --cacert \(state)/ca.pem --resolve dev.example.com:"))
        #expect(mode(state + "/key.pem") == 0o600)
        let profile = try String(contentsOfFile: state + "/aasa-dev-ca.mobileconfig", encoding: .utf8)
        #expect(profile.contains("<string>com.apple.security.root</string>"))
        let caBody = try String(contentsOfFile: state + "/ca.pem", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("-----") }
            .joined()
        #expect(profile.contains("<data>\(caBody)</data>"))
        let port = server.port
        let result = try runTool([
            "curl", "-s", "--cacert", state + "/ca.pem", "--resolve", "dev.example.com:\(port):127.0.0.1",
            "https://dev.example.com:\(port)/.well-known/apple-app-site-association",
        ])
        #expect(result.status == 0)
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("ABCDE12345.com.example.dev"))
        server.signal(SIGTERM)
        #expect(server.waitForExit(10) == 0)

        // The user edits the starter config; a second run serves the edit and keeps the CA.
        let configPath = state + "/config.json"
        let edited = try String(contentsOfFile: configPath, encoding: .utf8).replacingOccurrences(
            of: "everything else opens the app",
            with: "my edit"
        )
        try Data(edited.utf8).write(to: URL(fileURLWithPath: configPath))
        let caBefore = try Data(contentsOf: URL(fileURLWithPath: state + "/ca.pem"))
        let second = Process()
        second.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        second.arguments = ["3", TestPaths.serverExecutable] + command.map { $0.replacingOccurrences(of: "{dir}", with: server.directory) }
        let log = server.directory + "-second.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        second.standardError = FileHandle(forWritingAtPath: log)
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        second.waitUntilExit()
        let secondLog = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(secondLog.contains("reusing the local CA"), "\(secondLog)")
        #expect(secondLog.contains("using the existing starter config"))
        #expect(try String(contentsOfFile: configPath, encoding: .utf8).contains("my edit"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: state + "/ca.pem")) == caBefore)
    }
}
