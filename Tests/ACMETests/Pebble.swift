import Foundation
import Glibc
import TLS
import TestSupport

/// Debian's Pebble (a test ACME CA) and pebble-challtestsrv (its mock DNS, answering 127.0.0.1 for every
/// name) on free loopback ports, with a TLS certificate made here. Pebble validates HTTP-01 and TLS-ALPN-01
/// on `httpPort` and `tlsPort`, where the server under test listens.
final class Pebble {
    let directory: String
    let port: Int
    let managementPort: Int
    let dnsPort: Int
    let challengeManagementPort: Int
    let httpPort: Int
    let tlsPort: Int
    /// The CA that signed Pebble's own HTTPS certificate (for the server's `directoryTrust`).
    let listenerAuthorityPath: String
    private var pebble: Process?
    private var challtestsrv: Process?
    private var environment: [String: String]
    private var validity: Int?
    private var externalAccountKeys: [String: String]

    static var installed: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/pebble") }

    /// `environment`: PEBBLE_* fault settings. `validity`: certificate lifetime in seconds.
    /// `externalAccountKeys`: key id → base64url HMAC key; when given, Pebble requires External Account Binding.
    init(environment: [String: String] = [:], validity: Int? = nil, externalAccountKeys: [String: String] = [:]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-pebble-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        managementPort = try freeLoopbackPort()
        dnsPort = try freeLoopbackPort()
        challengeManagementPort = try freeLoopbackPort()
        httpPort = try freeLoopbackPort()
        tlsPort = try freeLoopbackPort()
        let authority = try DevCertificates.makeAuthority(commonName: "pebble listener test CA")
        let leaf = try DevCertificates.makeLeaf(hosts: ["localhost"], authority: authority)
        listenerAuthorityPath = directory + "/listener-ca.pem"
        try Data(authority.certificate).write(to: URL(fileURLWithPath: listenerAuthorityPath))
        try Data(leaf.certificate).write(to: URL(fileURLWithPath: directory + "/pebble.pem"))
        try Data(leaf.key).write(to: URL(fileURLWithPath: directory + "/pebble.key"))
        self.environment = environment
        self.validity = validity
        self.externalAccountKeys = externalAccountKeys
        try startChallTestSrv()
        try start()
    }

    var directoryURL: String { "https://localhost:\(port)/dir" }
    /// This CA's folder in a storage directory (its directory URL's host, port and path).
    var storageFolder: String { "localhost-\(port)-dir" }

    private func startChallTestSrv() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pebble-challtestsrv")
        process.arguments = [
            "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "", "-dns01", "127.0.0.1:\(dnsPort)", "-http01", "", "-https01", "",
            "-tlsalpn01", "", "-management", "127.0.0.1:\(challengeManagementPort)",
        ]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        challtestsrv = process
    }

    /// Starts (or restarts, with a fresh state: a new root) Pebble.
    func start() throws {
        var settings: [String: Any] = [
            "listenAddress": "127.0.0.1:\(port)", "managementListenAddress": "127.0.0.1:\(managementPort)",
            "certificate": directory + "/pebble.pem", "privateKey": directory + "/pebble.key", "httpPort": httpPort,
            "tlsPort": tlsPort, "ocspResponderURL": "", "externalAccountBindingRequired": !externalAccountKeys.isEmpty,
        ]
        if !externalAccountKeys.isEmpty { settings["externalAccountMACKeys"] = externalAccountKeys }
        if let validity { settings["certificateValidityPeriod"] = validity }
        let config = try JSONSerialization.data(withJSONObject: ["pebble": settings])
        try config.write(to: URL(fileURLWithPath: directory + "/pebble.json"))
        let logPath = directory + "/pebble.log"
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pebble")
        process.arguments = ["-config", directory + "/pebble.json", "-dnsserver", "127.0.0.1:\(dnsPort)"]
        process.environment = ProcessInfo.processInfo.environment.merging(["PEBBLE_VA_NOSLEEP": "1"].merging(environment) { $1 }) { $1 }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        pebble = process
        guard waitUntil(10, { self.log.contains("Listening on: 127.0.0.1:\(port)") && rootPEM() != nil }) else {
            throw TestFailure("pebble did not start: \(self.log.suffix(2000))")
        }
    }

    func stopCA() {
        guard let pebble, pebble.isRunning else { return }
        pebble.terminate()
        pebble.waitUntilExit()
    }

    var log: String { (try? String(contentsOfFile: directory + "/pebble.log", encoding: .utf8)) ?? "" }

    /// Orders Pebble has accepted (every start counted).
    var orderCount: Int { log.components(separatedBy: "Added order").count - 1 }

    /// The root that issues certificates now (changes when Pebble restarts).
    func rootPEM() -> String? {
        guard
            let result = try? runTool(
                ["curl", "-sf", "--cacert", listenerAuthorityPath, "https://localhost:\(managementPort)/roots/0"],
                timeout: 5
            ),
            result.status == 0
        else { return nil }
        let text = String(decoding: result.stdout, as: UTF8.self)
        return text.contains("BEGIN CERTIFICATE") ? text : nil
    }

    /// Writes the current root to a file, for curl's --cacert.
    func rootFile() throws -> String {
        guard let pem = rootPEM() else { throw TestFailure("no pebble root") }
        let path = directory + "/root-\(UUID().uuidString).pem"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Points `host` at `address` in the mock DNS (a wrong answer makes validation fail).
    func setAddress(_ host: String, _ address: String?) throws {
        let body = address.map { #"{"host":"\#(host)","addresses":["\#($0)"]}"# } ?? #"{"host":"\#(host)"}"#
        let path = address == nil ? "clear-a" : "add-a"
        let result = try runTool(["curl", "-sf", "-d", body, "http://127.0.0.1:\(challengeManagementPort)/\(path)"], timeout: 5)
        guard result.status == 0 else { throw TestFailure("challtestsrv \(path) failed: \(result.stderr)") }
    }

    /// A DNS-01 hook (lego's exec convention) that publishes TXT records in the mock DNS.
    func writeDNSHook() throws -> String {
        let path = directory + "/dns-hook.sh"
        let script = """
            #!/bin/sh
            case "$1" in
            present) exec curl -sf -d "{\\"host\\":\\"$2\\",\\"value\\":\\"$3\\"}" http://127.0.0.1:\(challengeManagementPort)/set-txt ;;
            cleanup) exec curl -sf -d "{\\"host\\":\\"$2\\"}" http://127.0.0.1:\(challengeManagementPort)/clear-txt ;;
            esac
            exit 3
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    deinit {
        stopCA()
        if let challtestsrv, challtestsrv.isRunning {
            challtestsrv.terminate()
            challtestsrv.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A config for the server under test: `sites` (JSON array text), listening on Pebble's validation ports,
/// with `acme` (JSON object members) added to the ACME section.
func acmeConfig(_ pebble: Pebble, sites: String, storage: String, acme: String = "", plainPort: Int? = nil, tlsPort: Int? = nil) -> String {
    // Every test name is under .test, one registered domain: the per-domain limit is the flood test's alone.
    let limits = acme.contains("ordersPerDomainPerWeek") ? "" : #", "ordersPerDomainPerWeek": 1000"#
    let extra = (acme.isEmpty ? "" : ", " + acme) + limits
    let retry = acme.contains("\"retryAfterFailure\"") ? "" : #", "retryAfterFailure": 2"#
    return """
        {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
         "sites": \(sites),
         "server": {
           "listen": ["127.0.0.1:\(plainPort ?? pebble.httpPort)", {"address": "127.0.0.1", "port": \(tlsPort ?? pebble.tlsPort), "tls": true}],
           "admin": "127.0.0.1:0", "accessLog": false,
           "acme": {"directory": "\(pebble.directoryURL)", "directoryTrust": "\(pebble.listenerAuthorityPath)",
                    "email": "ops@example.com", "agreeToTerms": true, "storage": "\(storage)"\(retry)\(extra)}
         }}
        """
}

/// One site per host list.
func sites(_ hosts: [[String]]) -> String {
    "["
        + hosts.map {
            #"{"hosts": [\#($0.map { "\"\($0)\"" }.joined(separator: ", "))], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "/*"}]}]}}"#
        }.joined(separator: ",") + "]"
}

/// GET the AASA over HTTPS from the server's TLS port as `host`, verifying against `root`: the status, or
/// nil when the handshake or verification failed.
func httpsStatus(_ host: String, port: Int, root: String) -> Int? {
    guard
        let result = try? runTool(
            [
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "--cacert", root, "--resolve",
                "\(host):\(port):127.0.0.1",
                "https://\(host):\(port)/.well-known/apple-app-site-association",
            ],
            timeout: 8
        ), result.status == 0
    else { return nil }
    return Int(String(decoding: result.stdout, as: UTF8.self))
}

/// A TLS handshake naming `host` that verifies nothing (it may fail): what starts an on-demand order.
func touchHandshake(_ host: String, port: Int) {
    _ = try? runTool(
        ["curl", "-sk", "-o", "/dev/null", "--max-time", "3", "--resolve", "\(host):\(port):127.0.0.1", "https://\(host):\(port)/"],
        timeout: 5
    )
}

/// A TLS handshake sending `serverName` as it is (any case, a trailing dot, a `*`), which curl would refuse.
func handshakeNaming(_ serverName: String, port: Int) {
    _ = try? runTool(["openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-servername", serverName, "-brief"], timeout: 5)
}

/// An `ask` endpoint that allows every name: another aasa-server whose health path answers 200.
struct AllowingAsk {
    let server: ServerProcess
    var url: String { "http://127.0.0.1:\(server.port)/healthz" }

    init() throws {
        server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "healthPath": "/healthz"}"#)
        )
    }
}

/// A server on `pebble` whose certificates come on demand only, each order allowed by `ask`.
func onDemandServer(_ pebble: Pebble, sites hosts: [[String]], ask: AllowingAsk) throws -> ServerProcess {
    try ServerProcess(
        config: acmeConfig(pebble, sites: sites(hosts), storage: "storage", acme: #""hosts": "none", "onDemand": {"ask": "\#(ask.url)"}"#)
    )
}
