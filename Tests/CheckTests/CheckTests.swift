import Foundation
import Glibc
import TLS
import TestSupport
import Testing

/// A broken web server from Fixtures/broken-server.py, on an ephemeral loopback port.
final class BrokenServer {
    let process = Process()
    let directory: String
    private(set) var port = 0

    init(mode: String, certificate: DevCertificates.PEMPair? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-broken-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var arguments = [TestPaths.repositoryRoot + "/Tests/CheckTests/Fixtures/broken-server.py", "--mode", mode]
        if let certificate {
            try Data(certificate.certificate).write(to: URL(fileURLWithPath: directory + "/cert.pem"))
            try Data(certificate.key).write(to: URL(fileURLWithPath: directory + "/key.pem"))
            arguments += ["--cert", directory + "/cert.pem", "--key", directory + "/key.pem"]
        }
        _ = FileManager.default.createFile(atPath: directory + "/out", contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: directory + "/out")
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let ready = waitUntil(10) {
            let text = (try? String(contentsOfFile: self.directory + "/out", encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") }), let value = Int(line.dropFirst(5)) else {
                return false
            }
            self.port = value
            return true
        }
        guard ready else { throw TestFailure("broken server (\(mode)) did not start") }
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Certificates made once for the suite: a CA the checks trust (--cacert) and leaves signed by it.
enum CheckCertificates {
    static let authority = try! DevCertificates.makeAuthority(commonName: "check test CA")
    static let good = try! DevCertificates.makeLeaf(
        hosts: ["example.com", "www.example.com", "*.tenant.example.com"],
        authority: authority
    )
    static let expired = try! DevCertificates.makeLeaf(
        hosts: ["example.com"],
        authority: authority,
        validFromOffset: -40 * 86_400,
        validDays: 10
    )
    static let wrongName = try! DevCertificates.makeLeaf(hosts: ["other.example.net"], authority: authority)
    static let cdn = try! DevCertificates.makeLeaf(hosts: ["cdn.test"], authority: authority)
}

@Suite("check: a live host as Apple's fetcher sees it", .serialized)
struct CheckTests {
    struct Result {
        var status: Int32
        var findings: [(rule: String, severity: String, message: String, evidence: String)]
        var hosts: [String]
        var stdout: String

        func rules(_ severity: String) -> [String] { findings.filter { $0.severity == severity }.map(\.rule) }
        func finding(_ rule: String) -> (rule: String, severity: String, message: String, evidence: String)? {
            findings.first { $0.rule == rule && $0.severity != "pass" }
        }
    }

    /// Runs `check --json` and reads its findings.
    func check(_ arguments: [String], timeout: Int = 30) throws -> Result {
        let run = try runTool([TestPaths.serverExecutable, "check", "--json"] + arguments, timeout: timeout)
        let text = String(decoding: run.stdout, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any],
            let hosts = object["hosts"] as? [[String: Any]]
        else { throw TestFailure("no JSON report (exit \(run.status)): \(text) \(run.stderr)") }
        var findings: [(String, String, String, String)] = []
        let names = hosts.compactMap { $0["host"] as? String }
        for host in hosts {
            for finding in host["findings"] as? [[String: Any]] ?? [] {
                findings.append(
                    (
                        finding["rule"] as? String ?? "", finding["severity"] as? String ?? "", finding["message"] as? String ?? "",
                        finding["evidence"] as? String ?? ""
                    )
                )
            }
        }
        return Result(status: run.status, findings: findings, hosts: names, stdout: text)
    }

    /// The test CA as a file for `check --ca-file`: one per test process, removed when it exits.
    static let caPath: String = {
        atexit { unlink(CheckTests.caPathName()) }
        return caPathName()
    }()

    static func caPathName() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("check-ca-\(getpid()).pem").path
    }

    func caFile() throws -> String {
        let path = Self.caPath
        if !FileManager.default.fileExists(atPath: path) {
            // Atomically: suites run in parallel, and another may be reading it already.
            try Data(CheckCertificates.authority.certificate).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
        return path
    }

    /// `check https://example.com:PORT` against a broken server, trusting the test CA.
    func checkBroken(_ mode: String, certificate: DevCertificates.PEMPair = CheckCertificates.good, extra: [String] = []) throws -> Result {
        let server = try BrokenServer(mode: mode, certificate: certificate)
        return try check(
            ["https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):127.0.0.1", "--cacert", try caFile()] + extra
        )
    }

    @Test("A clean pass against aasa-server itself, with --config, --app and --path; JUnit written")
    func cleanPass() throws {
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "accessLog": false, "certificates": [{"hosts": ["example.com", "www.example.com", "*.tenant.example.com"], "certificate": "cert.pem", "key": "key.pem"}]}"#
            ),
            files: [
                "cert.pem": String(decoding: CheckCertificates.good.certificate, as: UTF8.self),
                "key.pem": String(decoding: CheckCertificates.good.key, as: UTF8.self),
            ]
        )
        defer { server.stop() }
        let junit = server.directory + "/report.xml"
        let result = try check([
            "--config", server.directory + "/config.json", "--connect", "127.0.0.1:\(server.port)", "--cacert", try caFile(),
            "--app", "ABCDE12345.com.example.shop", "--path", "/section-3/x", "--junit", junit,
        ])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.rules("error").isEmpty)
        for rule in [
            "check.connection", "check.certificate", "check.status", "check.content-type", "check.document", "check.head",
            "check.user-agent", "check.config-mismatch", "check.app",
        ] {
            #expect(result.findings.contains { $0.rule == rule && $0.severity == "pass" }, "\(rule)")
        }
        #expect(result.findings.contains { $0.rule == "check.path" && $0.message.contains("opens ABCDE12345.com.example.shop") })
        // Every exact host of the config was checked (the wildcard needs a TARGET).
        #expect(result.hosts == ["example.com", "www.example.com"])
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("<testsuite name=\"https://example.com\""))
        // Case names are rule ids, stable from run to run; dates and counts stay in the output.
        #expect(xml.contains("<testcase classname=\"example.com\" name=\"check.status\">"))
        #expect(xml.contains("<testcase classname=\"example.com\" name=\"check.certificate\">"))
        #expect(!xml.contains("days\">"), "a name carries a count of days")
        #expect(!xml.contains("<failure"))
    }

    @Test(
        "Broken deployments: each gives its rule and exit 1",
        arguments: [
            ("redirect", "check.redirect", "apex to www"), ("trailing-slash", "check.redirect", "trailing slash"),
            ("html", "check.content-type", "catch-all"), ("ua-block", "check.user-agent", "AASA-Bot"),
            ("head-mismatch", "check.head", "HEAD answers 404"),
            ("bom", "json.bom", ""), ("truncated", "check.content-length", "cut short"), ("gzip-oversized", "size.limit", ""),
        ]
    )
    func broken(mode: String, rule: String, words: String) throws {
        let result = try checkBroken(mode)
        #expect(result.status == 1, "\(mode): \(result.stdout)")
        let finding = try #require(result.finding(rule), "\(mode): \(result.findings.map(\.rule))")
        #expect(finding.severity == "error" || rule == "json.bom", "\(mode)")
        #expect(words.isEmpty || (finding.message + finding.evidence).contains(words), "\(mode): \(finding.message)")
        if mode == "redirect" {
            #expect(finding.evidence.contains("Location: https://www.example.com/.well-known/apple-app-site-association"))
        }
        if mode == "ua-block" {
            // The 403 is the WAF's answer to AASA-Bot: one finding, the cause, not also a status error.
            #expect(result.finding("check.status") == nil, "\(result.findings.map(\.rule))")
        }
    }

    @Test("An origin checked over http that redirects: the fix is to answer 200 over http; findings name the http URL")
    func plainHTTPRedirect() throws {
        let origin = try BrokenServer(mode: "redirect")
        let redirected = try check([
            "http://example.com:\(origin.port)", "--resolve", "example.com:\(origin.port):127.0.0.1", "--plain-http-ok",
        ])
        let finding = try #require(redirected.finding("check.redirect"), "\(redirected.findings)")
        #expect(finding.message.contains("http://example.com:\(origin.port)/.well-known/apple-app-site-association redirects"))
        #expect(finding.message.contains("the origin must answer 200 with the file over http itself"), "\(finding.message)")
        #expect(!finding.message.contains("serve the file at https://"))
        #expect(redirected.finding("check.plain-http")?.severity == "info")
        let bom = try BrokenServer(mode: "bom")
        let plain = try check(["http://example.com:\(bom.port)", "--resolve", "example.com:\(bom.port):127.0.0.1"])
        #expect(
            plain.finding("json.bom")?.evidence.hasPrefix("http://example.com:\(bom.port)/.well-known/apple-app-site-association:") == true,
            "\(plain.findings)"
        )
        #expect(plain.finding("check.plain-http")?.severity == "warning")
    }

    @Test("application/octet-stream is a warning: exit 0, and 1 with --strict")
    func octetStream() throws {
        let result = try checkBroken("octet-stream")
        #expect(result.status == 0)
        #expect(result.finding("check.content-type")?.severity == "warning")
        #expect(try checkBroken("octet-stream", extra: ["--strict"]).status == 1)
    }

    @Test(
        "Certificates: self-signed, expired and wrong-name are errors naming the problem; --insecure reports them as warnings and goes on"
    )
    func certificates() throws {
        let expired = try checkBroken("good", certificate: CheckCertificates.expired)
        #expect(expired.finding("check.certificate-expired")?.severity == "error")
        #expect(expired.status == 1)
        let wrongName = try checkBroken("good", certificate: CheckCertificates.wrongName)
        #expect(wrongName.finding("check.certificate-name")?.message.contains("other.example.net") == true)
        // Self-signed: not signed by any CA the check trusts.
        let selfSigned = try DevCertificates.makeAuthority(commonName: "example.com")
        let server = try BrokenServer(mode: "good", certificate: selfSigned)
        let untrusted = try check(["https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):127.0.0.1"])
        let finding = try #require(untrusted.finding("check.certificate-untrusted"))
        #expect(finding.message.contains("self-signed"))
        #expect(finding.message.contains("developer mode"))
        let goesOn = try check(["https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):127.0.0.1", "--insecure"])
        #expect(goesOn.finding("check.certificate-untrusted")?.severity == "warning")
        #expect(goesOn.findings.contains { $0.rule == "check.document" && $0.severity == "pass" })
        #expect(goesOn.status == 0)
    }

    @Test("Plain HTTP on the port given as HTTPS is named as such; a server that never answers is bounded by --timeout")
    func transport() throws {
        // aasa-server's own plain listener answers a ClientHello with a 400 at once, as HTTP servers do.
        let plain = try ServerProcess(config: testConfig())
        defer { plain.stop() }
        let notTLS = try check(["https://example.com:\(plain.port)", "--resolve", "example.com:\(plain.port):127.0.0.1"])
        #expect(notTLS.finding("check.tls-not-tls") != nil, "\(notTLS.findings.map(\.rule))")
        #expect(notTLS.status == 1)
        let silent = try BrokenServer(mode: "silent")
        let started = monotonicSeconds()
        let timedOut = try check([
            "http://example.com:\(silent.port)", "--resolve", "example.com:\(silent.port):127.0.0.1", "--timeout", "1",
        ])
        #expect(monotonicSeconds() - started < 8)
        #expect(timedOut.finding("check.timeout")?.message.contains("waiting for the answer to GET") == true, "\(timedOut.findings)")
        #expect(timedOut.finding("check.plain-http")?.severity == "warning")
        #expect(timedOut.status == 1)
        // A closed port.
        let refused = try check(["https://example.com:1", "--resolve", "example.com:1:127.0.0.1"])
        #expect(refused.finding("check.refused") != nil)
    }

    @Test("A server that completes TLS at once and then never answers: one check.timeout naming the awaited answer, on every run")
    func timeoutBlamedOnThePhaseThatStalled() throws {
        let silent = try BrokenServer(mode: "silent", certificate: CheckCertificates.good)
        for _ in 0..<3 {
            let started = monotonicSeconds()
            let result = try check([
                "https://example.com:\(silent.port)", "--resolve", "example.com:\(silent.port):127.0.0.1", "--cacert", try caFile(),
                "--timeout", "1.5", "--cdn", "--cdn-base", "https://cdn.test:1", "--resolve", "cdn.test:1:127.0.0.1",
            ])
            // The CDN fetch shares the host's limit: no fresh allowance after the origin used it up.
            #expect(monotonicSeconds() - started < 5)
            #expect(result.rules("error") == ["check.timeout"], "\(result.findings)")
            let finding = try #require(result.finding("check.timeout"))
            #expect(finding.message.contains("1.5 s limit ran out waiting for the answer to GET /.well-known/apple-app-site-association"))
            #expect(finding.message.contains("TLS handshake succeeded"), "\(finding.message)")
            #expect(result.status == 1)
        }
    }

    @Test("--connect and --resolve take names: resolved, each address tried, the one that answered named")
    func namesForConnectAndResolve() throws {
        let server = try BrokenServer(mode: "good", certificate: CheckCertificates.good)
        let viaConnect = try check(["example.com", "--connect", "localhost:\(server.port)", "--cacert", try caFile()])
        #expect(viaConnect.status == 0, "\(viaConnect.stdout)")
        let connected = try #require(viaConnect.findings.first { $0.rule == "check.connection" })
        #expect(connected.message.contains("connected to 127.0.0.1:\(server.port)"), "\(connected.message)")
        #expect(connected.message.contains("localhost resolves to"), "\(connected.message)")
        let viaResolve = try check([
            "https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):localhost", "--cacert", try caFile(),
        ])
        #expect(viaResolve.status == 0, "\(viaResolve.stdout)")
        let unknown = try check(["example.com", "--connect", "no-such-host.invalid:\(server.port)"])
        let dns = try #require(unknown.finding("check.dns"), "\(unknown.findings)")
        #expect(dns.message.contains("no-such-host.invalid, given with --connect or --resolve, does not resolve"))
        #expect(unknown.status == 1)
        // A CDN host that does not resolve: the cause in words, never a Swift value.
        let cdn = try check([
            "https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):127.0.0.1", "--cacert", try caFile(),
            "--cdn-base", "https://cdn.invalid",
        ])
        let cdnFinding = try #require(cdn.finding("check.cdn"), "\(cdn.findings)")
        #expect(cdnFinding.message.contains("cdn.invalid does not resolve"), "\(cdnFinding.message)")
        #expect(!cdn.stdout.contains("unreachable(") && !cdn.stdout.contains("message:"))
    }

    @Test("One cause, one finding: a gzip body without Content-Encoding, a catch-all HTML page")
    func oneCauseOneFinding() throws {
        let gzip = try checkBroken("gzip-unlabelled")
        #expect(gzip.rules("error") == ["check.content-encoding"], "\(gzip.findings)")
        #expect(gzip.finding("check.content-encoding")?.message.contains("gzip-compressed but sent without Content-Encoding") == true)
        #expect(!gzip.stdout.contains("U+001F"))
        let mislabelled = try checkBroken("gzip-mislabelled")
        #expect(mislabelled.rules("error") == ["check.content-encoding"], "\(mislabelled.findings)")
        let message = mislabelled.finding("check.content-encoding")?.message ?? ""
        #expect(message.contains("says Content-Encoding: gzip, but the body is not gzip-compressed: it starts with \"{\""), "\(message)")
        #expect(message.contains("remove the Content-Encoding header") && !message.contains("zlib error"))
        let catchAll = try checkBroken("catch-all")
        #expect(catchAll.rules("error") == ["check.content-type"], "\(catchAll.findings)")
        #expect(catchAll.status == 1)
    }

    @Test("--insecure waives trust only: a name that does not cover the host stays an error; the dev CA is named")
    func insecureWaivesTrustOnly() throws {
        // Signed by a CA the check does not trust, for another name.
        let wrongName = try BrokenServer(mode: "good", certificate: CheckCertificates.wrongName)
        let result = try check([
            "https://example.com:\(wrongName.port)", "--resolve", "example.com:\(wrongName.port):127.0.0.1", "--insecure",
        ])
        #expect(result.finding("check.certificate-name")?.severity == "error", "\(result.findings)")
        #expect(result.finding("check.certificate-untrusted")?.severity == "warning")
        #expect(result.findings.contains { $0.rule == "check.document" && $0.severity == "pass" }, "the check goes on")
        #expect(result.status == 1)
        let devAuthority = try DevCertificates.makeAuthority()
        let devLeaf = try DevCertificates.makeLeaf(hosts: ["example.com"], authority: devAuthority)
        let devServer = try BrokenServer(mode: "good", certificate: devLeaf)
        let caPath = devServer.directory + "/dev-ca.pem"
        try Data(devAuthority.certificate).write(to: URL(fileURLWithPath: caPath))
        let dev = try check([
            "https://example.com:\(devServer.port)", "--resolve", "example.com:\(devServer.port):127.0.0.1", "--cacert", caPath,
        ])
        #expect(dev.finding("tls.dev-certificate")?.severity == "warning", "\(dev.findings)")
        #expect(dev.finding("tls.dev-certificate")?.message.contains("developer mode") == true)
        // Without --cacert: one finding for one cause, and it says how to check the rest.
        let untrusted = try check(["https://example.com:\(devServer.port)", "--resolve", "example.com:\(devServer.port):127.0.0.1"])
        #expect(untrusted.finding("check.certificate-untrusted") == nil, "\(untrusted.findings)")
        #expect(untrusted.finding("tls.dev-certificate")?.severity == "error")
        #expect(untrusted.finding("tls.dev-certificate")?.message.contains("pass --cacert") == true)
        #expect(untrusted.findings.filter { $0.rule == "tls.dev-certificate" }.count == 1)
    }

    @Test("--strict: when warnings fail the run, the summary, the JSON and JUnit say failed; --plain-http-ok and --plain-http")
    func strictSaysFailed() throws {
        let server = try BrokenServer(mode: "octet-stream", certificate: CheckCertificates.good)
        let junit = server.directory + "/report.xml"
        let target = ["https://example.com:\(server.port)", "--resolve", "example.com:\(server.port):127.0.0.1", "--cacert", try caFile()]
        let strict = try check(target + ["--strict", "--junit", junit])
        #expect(strict.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(strict.stdout.utf8)) as? [String: Any])
        #expect(object["ok"] as? Bool == false)
        #expect((object["hosts"] as? [[String: Any]])?.first?["ok"] as? Bool == false)
        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.contains("failures=\"1\""), "\(xml)")
        let human = try runTool([TestPaths.serverExecutable, "check"] + target + ["--strict"])
        let text = String(decoding: human.stdout, as: UTF8.self)
        #expect(text.contains("1 host checked: 1 failed"), "\(text)")
        #expect(text.contains("FAILED"))
        let lenient = try check(target)
        #expect(lenient.status == 0)
        #expect((try JSONSerialization.jsonObject(with: Data(lenient.stdout.utf8)) as? [String: Any])?["ok"] as? Bool == true)

        // An origin behind a TLS-terminating load balancer, checked over HTTP on purpose.
        let origin = try ServerProcess(config: testConfig())
        defer { origin.stop() }
        // --app takes the config's app names as well as IDs.
        let plain = try check([
            "http://example.com", "--connect", "127.0.0.1:\(origin.port)", "--strict", "--plain-http-ok", "--config",
            origin.directory + "/config.json", "--app", "shop",
        ])
        #expect(plain.status == 0, "\(plain.stdout)")
        #expect(plain.findings.contains { $0.rule == "check.app" && $0.message.contains("ABCDE12345.com.example.shop is in applinks") })
        #expect(plain.findings.first { $0.rule == "check.plain-http" }?.severity == "info")
        let configRun = try runTool([
            TestPaths.serverExecutable, "check", "--json", "--config", origin.directory + "/config.json", "--plain-http", "--connect",
            "127.0.0.1:\(origin.port)", "--strict",
        ])
        #expect(configRun.status == 0, "\(String(decoding: configRun.stdout, as: UTF8.self))")
        let configReport = try #require(try JSONSerialization.jsonObject(with: Data(configRun.stdout)) as? [String: Any])
        let urls = (configReport["hosts"] as? [[String: Any]] ?? []).compactMap { $0["url"] as? String }
        #expect(urls == ["http://example.com", "http://www.example.com"], "\(urls)")
        let stderr = configRun.stderr
        #expect(stderr.contains("not checked: *.tenant.example.com"), "\(stderr)")
    }

    @Test("Apple's CDN: a stale copy is a warning naming the difference; Apple-Failure headers are an error")
    func cdn() throws {
        let origin = try BrokenServer(mode: "good", certificate: CheckCertificates.good)
        for (mode, rule, severity) in [("cdn-stale", "check.cdn-stale", "warning"), ("cdn-failure", "check.cdn-failure", "error")] {
            let fake = try BrokenServer(mode: mode, certificate: CheckCertificates.cdn)
            let result = try check([
                "https://example.com:\(origin.port)", "--resolve", "example.com:\(origin.port):127.0.0.1", "--cacert", try caFile(),
                "--cdn-base", "https://cdn.test:\(fake.port)", "--resolve", "cdn.test:\(fake.port):127.0.0.1",
            ])
            let finding = try #require(result.finding(rule), "\(mode): \(result.findings.map(\.rule))")
            #expect(finding.severity == severity)
            if mode == "cdn-stale" {
                #expect(finding.evidence.contains("/old/*"))
                // It knows the two differ, not which is newer.
                #expect(finding.message.contains("a different document than the origin") && !finding.message.contains("older"))
            }
            if mode == "cdn-failure" { #expect(finding.evidence.contains("Apple-Failure-Reason: SSL error")) }
        }
    }

    @Test("--config --connect against a server serving an older config: a mismatch naming the first difference")
    func staleDeployment() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let newer = testConfig().replacingOccurrences(of: "/section-7/*", with: "/section-7-renamed/*")
        try newer.write(toFile: server.directory + "/newer.json", atomically: true, encoding: .utf8)
        let result = try check([
            "http://example.com", "--config", server.directory + "/newer.json", "--connect", "127.0.0.1:\(server.port)",
        ])
        let finding = try #require(result.finding("check.config-mismatch"))
        #expect(finding.severity == "error")
        #expect(finding.evidence.contains("section-7-renamed"))
        #expect(result.status == 1)
    }

    @Test("Usage errors exit 2: no target, --cacert with --insecure, a bad --resolve")
    func usage() throws {
        #expect(try runTool([TestPaths.serverExecutable, "check"]).status == 2)
        #expect(try runTool([TestPaths.serverExecutable, "check", "example.com", "--cacert", "a.pem", "--insecure"]).status == 2)
        #expect(try runTool([TestPaths.serverExecutable, "check", "example.com", "--resolve", "example.com"]).status == 2)
        #expect(try runTool([TestPaths.serverExecutable, "check", "ftp://example.com"]).status == 2)
    }
}

@Suite("check --android: assetlinks.json as Google's verifier sees it", .serialized)
struct CheckAndroidTests {
    let base = CheckTests()

    @Test("A redirect, lower-case fingerprints and a missing package are errors; a good list passes with the package granted")
    func android() throws {
        let redirect = try base.checkBroken("assetlinks-redirect", extra: ["--android"])
        #expect(redirect.status == 1)
        #expect(redirect.finding("check.assetlinks-redirect")?.message.contains("does not follow redirects") == true, "\(redirect.stdout)")
        let lower = try base.checkBroken("assetlinks-lowercase", extra: ["--app", "com.example.shop"])
        #expect(lower.status == 1)
        #expect(lower.finding("assetlinks.fingerprint")?.message.contains("lower-case hex") == true, "\(lower.stdout)")
        // One malformed statement: an error for it, and the other app still verifies (Google skips only that one).
        let mixed = try base.checkBroken("assetlinks-one-malformed", extra: ["--app", "com.example.shop", "--app", "com.example.beta"])
        #expect(mixed.status == 1)
        #expect(
            mixed.findings.contains {
                $0.rule == "check.assetlinks-app" && $0.severity == "pass" && $0.message.contains("com.example.shop")
            },
            "\(mixed.stdout)"
        )
        #expect(mixed.findings.contains { $0.message.contains("skips the 1 statement with errors and still reads the other 1") })
        #expect(
            mixed.findings.contains { $0.message.contains("com.example.beta's statement has errors (above), so the verifier skips it") }
        )
        let good = try base.checkBroken("assetlinks-good", extra: ["--app", "com.example.shop", "--app", "com.example.missing"])
        #expect(
            good.findings.contains { $0.rule == "check.assetlinks-app" && $0.severity == "pass" && $0.message.contains("com.example.shop") }
        )
        #expect(good.finding("check.assetlinks-app")?.message.contains("com.example.missing is not in the statement list") == true)
        #expect(good.status == 1)
        // Without --android or a package, assetlinks.json is not fetched at all.
        let apple = try base.checkBroken("assetlinks-redirect")
        #expect(!apple.findings.contains { $0.rule.hasPrefix("check.assetlinks") })
    }

    @Test("With --config, a site's Android apps make check fetch assetlinks.json and compare it with what the config generates")
    func againstConfig() throws {
        let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
        let config = #"""
            {"version": 1, "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]}}},
             "sites": [{"hosts": ["example.com"], "webcredentials": {"apps": ["shop"]}, "android": ["shop"]},
                       {"hosts": ["www.example.com"], "android": ["shop"]}],
             "server": {"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "accessLog": false,
                        "certificates": [{"hosts": ["example.com", "www.example.com"], "certificate": "cert.pem", "key": "key.pem"}]}}
            """#
        let server = try ServerProcess(
            config: config,
            files: [
                "cert.pem": String(decoding: CheckCertificates.good.certificate, as: UTF8.self),
                "key.pem": String(decoding: CheckCertificates.good.key, as: UTF8.self),
            ]
        )
        defer { server.stop() }
        let result = try base.check([
            "--config", server.directory + "/config.json", "--connect", "127.0.0.1:\(server.port)", "--cacert", try base.caFile(),
        ])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.hosts == ["example.com", "www.example.com"])
        let passes = result.findings.filter { $0.severity == "pass" }.map(\.rule)
        #expect(passes.filter { $0 == "check.assetlinks-config-mismatch" }.count == 2)
        #expect(passes.filter { $0 == "check.assetlinks" }.count == 2)
        // The Android-only host is checked for Android only.
        #expect(passes.filter { $0 == "check.config-mismatch" }.count == 1)
    }
}
