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
        let command = Self.devCommand(listen: "127.0.0.1")
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

    /// `dev` on a free port of `listen`, its state in the test's directory, for a real app ID.
    static func devCommand(listen: String) -> [String] {
        [
            "dev", "--host", "dev.example.com", "--port", "0", "--listen", listen, "--state-dir", "{dir}/state",
            "--app", "ABCDE12345.com.example.dev",
        ]
    }

    /// The first line of `text` holding `marker`, split into arguments the way a shell would split it
    /// (the printed commands quote nothing).
    func printedCommand(_ text: String, _ marker: String) -> [String]? {
        text.split(separator: "\n").first { $0.contains(marker) }.map { line in
            line.split(separator: " ").map(String.init)
        }
    }

    @Test(
        "dev: the printed curl command, run as printed, succeeds against the address and port actually bound (--listen 127.0.0.2, --port 0)"
    )
    func printedCurlWorks() throws {
        let server = try ServerProcess(config: "{}", command: Self.devCommand(listen: "127.0.0.2"))
        defer { server.stop() }
        #expect(waitUntil(5) { server.stdout.contains("curl --cacert") })
        let curl = try #require(printedCommand(server.stdout, "curl --cacert"), "\(server.stdout)")
        #expect(curl.contains { $0.hasSuffix(":127.0.0.2") }, "the address listened on: \(curl)")
        let result = try runTool(curl + ["-o", "/dev/null", "-w", "%{http_code} %{content_type}"], directory: server.directory)
        #expect(String(decoding: result.stdout, as: UTF8.self) == "200 application/json", "\(curl)")
        // Loopback only and a port other than 443: a phone can use neither, and the guide says so.
        #expect(server.stdout.contains("warning: listening on loopback only (127.0.0.2:"))
        #expect(server.stdout.contains("on port 443 only"))
        #expect(!server.stdout.contains("The phone reaches this machine at:\n    1"), "no address is offered for loopback-only")
    }

    @Test(
        "dev serves its CA profile at /ca.mobileconfig with the type iOS installs from, and the guide gives its URL and the CA fingerprint"
    )
    func servesProfile() throws {
        let server = try ServerProcess(config: "{}", command: Self.devCommand(listen: "127.0.0.1") + ["--public-address", "192.0.2.50"])
        defer { server.stop() }
        let state = server.directory + "/state"
        let result = try runTool([
            "curl", "-s", "--cacert", state + "/ca.pem", "--resolve", "dev.example.com:\(server.port):127.0.0.1", "-D", "-",
            "https://dev.example.com:\(server.port)/ca.mobileconfig",
        ])
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
        #expect(text.lowercased().contains("content-type: application/x-apple-aspen-config"))
        #expect(text.contains("<string>com.apple.security.root</string>"))
        let fingerprint = try runTool(["openssl", "x509", "-in", state + "/ca.pem", "-noout", "-fingerprint", "-sha256"])
        let expected = String(decoding: fingerprint.stdout, as: UTF8.self).split(separator: "=").last.map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(waitUntil(5) { server.stdout.contains("Certificate Trust Settings") })
        #expect(server.stdout.contains(try #require(expected)), "the fingerprint iOS shows, as openssl computes it")
        // --public-address is what the phone is told to use (a container's host, a NAT).
        #expect(server.stdout.contains("    192.0.2.50 port \(server.port)  (--public-address)"))
        #expect(server.stdout.contains("https://192.0.2.50:\(server.port)/ca.mobileconfig"))
        // But nothing listens on it here: the phone would reach nothing, and the guide says so.
        #expect(
            server.stdout.contains(
                "but the phone is sent to 192.0.2.50 (--public-address): nothing forwards that to loopback, so it reaches nothing"
            ),
            "\(server.stdout)"
        )
        // The terminal is for people: no JSON access-log line among the instructions, even after a request.
        #expect(!server.stdout.contains(#"{"time":"#), "\(server.stdout)")
        for step in ["Developer Mode", "Associated Domains Development", "Universal Links → Diagnostics", "VPN & Device Management"] {
            #expect(server.stdout.contains(step), "device step: \(step)")
        }
    }

    @Test("dev --app on a later run replaces only the app ID in the starter config; a config the user wrote is never touched")
    func appUpdatesStarterOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-dev-app-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // First run without --app: the placeholder, which serves in dev but fails validate (so never CI).
        let first = try ServerProcess(
            config: "{}",
            command: ["dev", "--host", "dev.example.com", "--port", "0", "--listen", "127.0.0.1", "--state-dir", directory + "/state"]
        )
        first.signal(SIGTERM)
        #expect(first.waitForExit(10) == 0)
        let firstLog = first.stderr
        first.stop()
        #expect(firstLog.contains("the starter config names the placeholder app REPLACEME0.com.example.your-app"), "\(firstLog)")
        let starter = directory + "/state/config.json"
        let validation = try runTool([TestPaths.serverExecutable, "validate", "--config", starter])
        #expect(validation.status == 1)
        let findings = validation.stderr
        #expect(findings.contains("[appid.placeholder]"))
        #expect(findings.components(separatedBy: "[appid.placeholder]").count == 2, "one finding for one placeholder: \(findings)")

        // The user edits the starter; --app then changes the app ID and nothing else.
        let edited = try String(contentsOfFile: starter, encoding: .utf8).replacingOccurrences(of: "a link that opts out", with: "my note")
        try Data(edited.utf8).write(to: URL(fileURLWithPath: starter))
        let second = try ServerProcess(
            config: "{}",
            command: [
                "dev", "--host", "dev.example.com", "--port", "0", "--listen", "127.0.0.1", "--state-dir", directory + "/state",
                "--app", "ABCDE12345.com.example.real",
            ]
        )
        defer { second.stop() }
        #expect(
            second.stderr.contains(
                "updated the app in the starter config \(starter): REPLACEME0.com.example.your-app → ABCDE12345.com.example.real"
            )
        )
        let after = try String(contentsOfFile: starter, encoding: .utf8)
        #expect(after == edited.replacingOccurrences(of: "REPLACEME0.com.example.your-app", with: "ABCDE12345.com.example.real"))
        let served = try runTool([
            "curl", "-s", "-k", "--resolve", "dev.example.com:\(second.port):127.0.0.1",
            "https://dev.example.com:\(second.port)/.well-known/apple-app-site-association",
        ])
        #expect(String(decoding: served.stdout, as: UTF8.self).contains("ABCDE12345.com.example.real"))
        #expect(try runTool([TestPaths.serverExecutable, "validate", "--config", starter]).status == 0)
        second.signal(SIGTERM)
        #expect(second.waitForExit(10) == 0)

        // A config the user wrote and passed with --config: --app is not applied, and dev says why.
        let own = directory + "/mine.json"
        let ownText =
            #"{"version": 1, "sites": [{"hosts": ["dev.example.com"], "webcredentials": {"apps": ["ABCDE12345.com.example.mine"]}}]}"#
        try Data(ownText.utf8).write(to: URL(fileURLWithPath: own))
        let third = try ServerProcess(
            config: "{}",
            command: [
                "dev", "--host", "dev.example.com", "--port", "0", "--listen", "127.0.0.1", "--state-dir", directory + "/state",
                "--config", own, "--app", "ABCDE12345.com.example.other",
            ]
        )
        defer { third.stop() }
        #expect(third.stderr.contains("note: --app was not applied: dev never edits a config you wrote (\(own))"))
        #expect(try String(contentsOfFile: own, encoding: .utf8) == ownText)
    }
}

@Suite("dev on a real device's path: QR code, landing page, fetch line", .serialized)
struct DevDeviceLoopTests {
    @Test("the CA profile's address as a QR code zbarimg reads exactly; steps over plain HTTP; a line when the device fetches")
    func closesTheLoop() throws {
        let command = [
            "dev", "--host", "dev.example.com", "--port", "0", "--listen", "127.0.0.1", "--public-address", "127.0.0.1",
            "--state-dir", "{dir}/state", "--app", "ABCDE12345.com.example.dev",
        ]
        let server = try ServerProcess(config: "{}", command: command)
        defer { server.stop() }
        #expect(waitUntil(5) { server.stdout.contains("for the phone's camera:") })
        let lines = server.stdout.components(separatedBy: "\n")
        let heading = try #require(lines.firstIndex { $0.hasPrefix("The CA profile, ") })
        let url = try #require(lines[heading].split(separator: " ").dropFirst(3).first.map { String($0.dropLast()) })
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/ca.mobileconfig"), "\(lines[heading])")
        // The block: the lines after the heading's blank line made of half blocks and spaces only.
        let block = lines[(heading + 2)...].prefix { !$0.isEmpty && $0.allSatisfy { " ▀▄█".contains($0) } }.joined(separator: "\n")
        let decoded = try withTemporaryDirectory { try PrintedQR.decode(PrintedQR.modules(fromText: block), in: $0) }
        #expect(decoded == url)

        // Plain HTTP, as a phone that does not trust the CA yet reaches it: the profile and the steps.
        let profile = try runTool(["curl", "-s", "-D", "-", "-o", "/dev/null", url])
        #expect(String(decoding: profile.stdout, as: UTF8.self).contains("Content-Type: application/x-apple-aspen-config"))
        let landing = try runTool(["curl", "-s", url.replacingOccurrences(of: "/ca.mobileconfig", with: "/")])
        let page = String(decoding: landing.stdout, as: UTF8.self)
        #expect(page.contains("<a class=\"button\" href=\"/ca.mobileconfig\">") && page.contains("applinks:dev.example.com?mode=developer"))

        // The device in developer mode fetches over HTTPS (swcd): dev says so at once.
        let state = server.directory + "/state"
        let https = try #require(
            ServerProcess.ports(in: server.stderr).main.first { port in !url.contains(":\(port)/") }
        )
        let fetched = try runTool([
            "curl", "-s", "-o", "/dev/null", "-A", "swcd (unknown version) CFNetwork/1496.0.7 Darwin/23.5.0", "--cacert", state + "/ca.pem",
            "--resolve", "dev.example.com:\(https):127.0.0.1", "https://dev.example.com:\(https)/.well-known/apple-app-site-association",
        ])
        #expect(fetched.status == 0)
        #expect(
            waitUntil(5) {
                server.stdout.contains(
                    "iPhone or iPad (127.0.0.1) fetched apple-app-site-association for dev.example.com: 200, current version — developer mode works"
                )
            },
            "\(server.stdout.suffix(400))"
        )
    }
}
