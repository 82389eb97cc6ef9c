import Foundation
import Glibc
import TLS
import TestSupport
import Testing

@Suite("serve over TLS", .serialized)
struct TLSTests {
    func start(_ pki: TestPKI) throws -> ServerProcess {
        let config = testConfig(
            server: TestPKI.serverSection,
            extraSites: #", {"hosts": ["other.example.org"], "webcredentials": {"apps": ["shop"]}}"#
        )
        let server = try ServerProcess(config: config, files: pki.files)
        #expect(server.stderr.contains("listening on https://127.0.0.1:\(server.proxyPort)"))
        return server
    }

    func curl(
        _ server: ServerProcess,
        host: String,
        path: String = "/.well-known/apple-app-site-association",
        _ extra: [String] = []
    ) throws -> (status: Int32, text: String) {
        let result = try runTool(
            ["curl", "-s", "-D", "-", "--cacert", server.directory + "/ca.pem", "--resolve", "\(host):\(server.proxyPort):127.0.0.1"]
                + extra + ["https://\(host):\(server.proxyPort)\(path)"]
        )
        return (result.status, String(decoding: result.stdout, as: UTF8.self) + result.stderr)
    }

    func sClient(_ server: ServerProcess, _ arguments: [String], input: String = "") throws -> String {
        let script =
            "(printf '\(input)'; sleep 1) | openssl s_client -connect 127.0.0.1:\(server.proxyPort) " + arguments.joined(separator: " ")
            + " 2>&1"
        let result = try runTool(["sh", "-c", script], timeout: 10)
        return String(decoding: result.stdout, as: UTF8.self)
    }

    @Test("curl with the CA over TLS 1.2 and 1.3: verified, 200 application/json, same bytes as plain HTTP")
    func curlVersions() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        let plain = try RawClient(port: server.port)
        plain.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let expected = try #require(plain.readResponses(1).first).bodyText
        for version in [["--tlsv1.3"], ["--tlsv1.2", "--tls-max", "1.2"]] {
            let (status, text) = try curl(server, host: "www.example.com", version)
            #expect(status == 0, "\(text)")
            #expect(text.hasPrefix("HTTP/1.1 200 OK"))
            #expect(text.lowercased().contains("content-type: application/json"))
            #expect(text.hasSuffix(expected))
        }
    }

    @Test("SNI picks the certificate (exact, wildcard); no SNI or an unknown name gets the first; Host still picks the document")
    func sni() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        let shopSerial = try #require(CertificateInspector.summary(pki.shop.certificate)).serialHex.lowercased()
        let otherSerial = try #require(CertificateInspector.summary(pki.other.certificate)).serialHex.lowercased()
        func serial(_ arguments: [String]) throws -> String {
            let output = try sClient(server, arguments + ["-showcerts"])
            let pem =
                output.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first.map {
                    "-----BEGIN CERTIFICATE-----" + $0.components(separatedBy: "-----END CERTIFICATE-----")[0]
                        + "-----END CERTIFICATE-----\n"
                } ?? ""
            return CertificateInspector.summary(Array(pem.utf8))?.serialHex.lowercased() ?? "none: \(output)"
        }
        #expect(try serial(["-servername", "other.example.org"]) == otherSerial)
        #expect(try serial(["-servername", "www.example.com"]) == shopSerial)
        #expect(try serial(["-servername", "a.tenant.example.com"]) == shopSerial)
        #expect(try serial(["-servername", "unknown.example.net"]) == shopSerial)
        #expect(try serial(["-noservername"]) == shopSerial)
        // The certificate follows SNI, the document follows Host.
        let (status, text) = try curl(server, host: "other.example.org")
        #expect(status == 0)
        #expect(text.contains("webcredentials"))
        #expect(!text.contains("applinks"))
    }

    @Test("TLS 1.0 and 1.1 are refused; ALPN selects http/1.1; renegotiation is refused")
    func protocolPolicy() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        for old in ["-tls1", "-tls1_1"] {
            let output = try sClient(server, [old, "-servername", "example.com"])
            #expect(output.contains("Cipher is (NONE)") || output.contains("alert"), "\(old): \(output)")
            #expect(!output.contains("TLSv1.1, Cipher is") && !output.contains("TLSv1, Cipher is"))
        }
        let alpn = try sClient(server, ["-servername", "example.com", "-alpn", "h2,http/1.1"])
        #expect(alpn.contains("ALPN protocol: http/1.1"))
        #expect(alpn.contains("TLSv1.3"))
        let renegotiation = try sClient(server, ["-tls1_2", "-servername", "example.com", "-msg"], input: "R\\n")
        #expect(renegotiation.contains("RENEGOTIATING"))
        #expect(renegotiation.contains("no_renegotiation"))
        // Only ECDHE + AEAD suites under TLS 1.2.
        let weak = try sClient(server, ["-tls1_2", "-cipher", "AES128-SHA256", "-servername", "example.com"])
        #expect(weak.contains("Cipher is (NONE)") || weak.contains("alert"))
    }

    @Test(
        "Plain HTTP on the TLS port is closed; TLS on the plain port gets 400; neither disturbs a good client; failures are logged by name, once a minute"
    )
    func wrongProtocol() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        let plainOnTLS = try RawClient(port: server.proxyPort)
        plainOnTLS.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let (bytes, closed) = plainOnTLS.read(timeout: 3)
        #expect(closed)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("200 OK"))
        // The reason reaches the operator's log, not just a silent close.
        let prefix = "TLS handshake without a server name (SNI) from 127.0.0.1 failed: "
        #expect(waitUntil(3) { server.stderr.contains(prefix) }, "\(server.stderr)")
        let logged = server.stderr.split(separator: "\n").first { $0.contains(prefix) }.map(String.init) ?? ""
        #expect(logged.count > prefix.count + "aasa-server: ".count, "the reason follows: \(logged)")
        // The same name failing again and again is one line a minute, naming the name.
        for _ in 0..<10 {
            _ = try runTool(
                [
                    "openssl", "s_client", "-connect", "127.0.0.1:\(server.proxyPort)", "-tls1_2", "-cipher", "AES128-SHA256",
                    "-servername", "old-client.example.com",
                ],
                timeout: 5
            )
        }
        #expect(waitUntil(3) { server.stderr.contains("TLS handshake for old-client.example.com from 127.0.0.1 failed: ") })
        #expect(server.stderr.components(separatedBy: "for old-client.example.com").count - 1 == 1, "\(server.stderr)")
        let tlsOnPlain = try runTool(["sh", "-c", "echo | openssl s_client -connect 127.0.0.1:\(server.port) 2>&1"], timeout: 10)
        #expect(tlsOnPlain.status != 0 || String(decoding: tlsOnPlain.stdout, as: UTF8.self).contains("Cipher is (NONE)"))
        let (status, text) = try curl(server, host: "example.com")
        #expect(status == 0 && text.hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test("Pipelined requests in TLS records that arrive together are all answered (input OpenSSL holds is not waited for)")
    func pipelinedRecords() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        // Eight records in one TCP write: the server reads them in one go, and every record past the
        // first must be processed without a socket event announcing it.
        let result = try runTool(
            ["python3", TestPaths.repositoryRoot + "/Tests/TLSTests/Fixtures/tls-records.py", "\(server.proxyPort)", "8", "3"],
            timeout: 10
        )
        #expect(String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "8", "\(result.stderr)")
    }

    @Test("The HTTP rules hold over TLS: keep-alive reuse, HEAD parity, 404/405, gzip")
    func httpOverTLS() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        let base = "https://example.com:\(server.proxyPort)"
        let result = try runTool([
            "curl", "-s", "-w", "%{http_code} %{num_connects}\\n", "--cacert", server.directory + "/ca.pem",
            "--resolve", "example.com:\(server.proxyPort):127.0.0.1",
            base + "/.well-known/apple-app-site-association", "-o", "/dev/null", base + "/apple-app-site-association", "-o", "/dev/null",
            base + "/nope", "-o", "/dev/null", "--next", "-s", "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\\n",
            "--cacert", server.directory + "/ca.pem", "--resolve", "example.com:\(server.proxyPort):127.0.0.1",
            "-X", "POST", base + "/apple-app-site-association",
        ])
        let lines = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n")
        #expect(lines == ["200 1", "200 0", "404 0", "405 0"], "one connection reused for all")
        let head = try curl(server, host: "example.com", ["-I"])
        let get = try curl(server, host: "example.com")
        let headNames = head.text.split(separator: "\r\n").compactMap { $0.split(separator: ":").first }.filter {
            $0 != "date" && $0 != "Date"
        }
        for name in headNames where !name.hasPrefix("HTTP/") {
            #expect(get.text.contains(String(name)), "\(name)")
        }
        let gzip = try curl(server, host: "example.com", ["--compressed"])
        #expect(gzip.text.lowercased().contains("content-encoding: gzip"))
        #expect(gzip.text.contains("\"applinks\""))
    }

    @Test("A returning connection keeps its TLS buffers, lets them go after a second idle, and is answered throughout")
    func keptBuffersAcrossIdle() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        // Two requests back to back (the second makes the connection keep its buffers), an idle of 1.5 s
        // (the loop's sweep lets them go after one), then two more on the same connection.
        let request = "GET /.well-known/apple-app-site-association HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n"
        let last = "GET /.well-known/apple-app-site-association HTTP/1.1\\r\\nHost: example.com\\r\\nConnection: close\\r\\n\\r\\n"
        let script =
            "(printf '\(request)\(request)'; sleep 1.5; printf '\(request)\(last)'; sleep 1) | openssl s_client -quiet "
            + "-connect 127.0.0.1:\(server.proxyPort) -servername example.com 2>/dev/null"
        let result = try runTool(["sh", "-c", script], timeout: 15)
        let text = String(decoding: result.stdout, as: UTF8.self)
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 4, "\(text.prefix(600))")
        #expect(text.components(separatedBy: "\"applinks\"").count - 1 == 4)
    }

    @Test("Bad certificates at load: wrong key, expired, SAN mismatch, missing file — the named error, exit 1")
    func loadErrors() throws {
        let pki = try TestPKI()
        let expired = try DevCertificates.makeLeaf(
            hosts: ["example.com"],
            authority: pki.authority,
            validFromOffset: -90 * 86_400,
            validDays: 30
        )
        let cases: [(String, [String: String], String)] = [
            (#"{"hosts": ["example.com"], "certificate": "shop.pem", "key": "other-key.pem"}"#, pki.files, "tls.key-mismatch"),
            (
                #"{"hosts": ["example.com"], "certificate": "expired.pem", "key": "expired-key.pem"}"#,
                pki.files.merging([
                    "expired.pem": String(decoding: expired.certificate, as: UTF8.self),
                    "expired-key.pem": String(decoding: expired.key, as: UTF8.self),
                ]) { a, _ in a }, "tls.expired"
            ),
            (#"{"hosts": ["shop.example.net"], "certificate": "shop.pem", "key": "shop-key.pem"}"#, pki.files, "tls.san-mismatch"),
            (#"{"hosts": ["example.com"], "certificate": "missing.pem", "key": "shop-key.pem"}"#, pki.files, "file.unreadable"),
            (#"{"hosts": ["example.com"], "certificate": "ca.pem", "key": "shop-key.pem"}"#, pki.files, "tls.key-mismatch"),
        ]
        for (entry, files, rule) in cases {
            let server = try ServerProcess(
                config: testConfig(
                    server: #"{"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "certificates": [\#(entry)]}"#
                ),
                files: files,
                waitForReady: false
            )
            defer { server.stop() }
            #expect(server.waitForExit(10) == 1, "\(rule)")
            #expect(server.stderr.contains("[\(rule)]"), "\(rule): \(server.stderr)")
            #expect(server.stderr.contains(".pem"), "the finding names the file")
            #expect(!server.stderr.contains("listening on"))
        }
        // A chain listed out of order.
        let chainFiles = pki.files.merging([
            "bad-chain.pem": String(decoding: pki.authority.certificate + pki.shop.certificate, as: UTF8.self)
        ]) { a, _ in a }
        let chain = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "certificates": [{"hosts": ["example.com"], "certificate": "bad-chain.pem", "key": "shop-key.pem"}]}"#
            ),
            files: chainFiles,
            waitForReady: false
        )
        defer { chain.stop() }
        #expect(chain.waitForExit(10) == 1)
        #expect(chain.stderr.contains("[tls.key-mismatch]") || chain.stderr.contains("[tls.chain-order]"))
    }

    @Test("A certificate expiring within 14 days is a warning, and the server still starts")
    func expiringSoon() throws {
        let pki = try TestPKI()
        let soon = try DevCertificates.makeLeaf(
            hosts: ["example.com", "www.example.com", "*.tenant.example.com"],
            authority: pki.authority,
            validFromOffset: -86_400,
            validDays: 7
        )
        let files = pki.files.merging([
            "soon.pem": String(decoding: soon.certificate, as: UTF8.self), "soon-key.pem": String(decoding: soon.key, as: UTF8.self),
        ]) { a, _ in a }
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": [{"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "certificates": [{"hosts": ["example.com"], "certificate": "soon.pem", "key": "soon-key.pem"}]}"#
            ),
            files: files
        )
        defer { server.stop() }
        #expect(server.stderr.contains("warning: the certificate expires on"))
        #expect(server.stderr.contains("[tls.expiring]"))
    }

    @Test("Sessions resume from the server-side cache over TLS 1.2 and 1.3 (no long-lived ticket keys)")
    func resumption() throws {
        let pki = try TestPKI()
        let server = try start(pki)
        defer { server.stop() }
        for version in ["-tls1_2", "-tls1_3"] {
            let session = server.directory + "/session\(version).pem"
            let first = try sClient(server, [version, "-servername", "example.com", "-sess_out", session], input: "")
            #expect(first.contains("New, TLSv1."), "\(first)")
            let second = try sClient(server, [version, "-servername", "example.com", "-sess_in", session], input: "")
            #expect(second.contains("Reused, TLSv1."), "\(version): \(second)")
        }
        // TLS 1.3: one ticket per handshake, full or resumed (each is a cache entry and a write of its own).
        let session = server.directory + "/session-msg.pem"
        let full = try sClient(server, ["-tls1_3", "-servername", "example.com", "-msg", "-sess_out", session], input: "")
        #expect(full.components(separatedBy: "NewSessionTicket").count - 1 == 1, "\(full)")
        let resumed = try sClient(server, ["-tls1_3", "-servername", "example.com", "-msg", "-sess_in", session], input: "")
        #expect(resumed.contains("Reused, TLSv1.3"), "\(resumed)")
        #expect(resumed.components(separatedBy: "NewSessionTicket").count - 1 == 1, "\(resumed)")
    }

    @Test("RSA certificates work as well as ECDSA")
    func rsaCertificate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-rsa-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try runTool([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem",
            "-days", "30", "-subj", "/CN=example.com", "-addext",
            "subjectAltName=DNS:example.com,DNS:www.example.com,DNS:*.tenant.example.com",
        ])
        #expect(made.status == 0, "\(made.stderr)")
        let files = [
            "rsa.pem": try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8),
            "rsa-key.pem": try String(contentsOfFile: directory + "/key.pem", encoding: .utf8),
        ]
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "certificates": [{"hosts": ["example.com"], "certificate": "rsa.pem", "key": "rsa-key.pem"}]}"#
            ),
            files: files
        )
        defer { server.stop() }
        for version in [["--tlsv1.3"], ["--tlsv1.2", "--tls-max", "1.2"]] {
            let result = try runTool(
                [
                    "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", server.directory + "/rsa.pem",
                    "--resolve", "example.com:\(server.proxyPort):127.0.0.1",
                ] + version
                    + ["https://example.com:\(server.proxyPort)/.well-known/apple-app-site-association"]
            )
            #expect(String(decoding: result.stdout, as: UTF8.self) == "200", "\(version) \(result.stderr)")
        }
    }

    @Test("A client that opens a TLS connection and never finishes the handshake is closed at the header deadline")
    func handshakeDeadline() throws {
        let pki = try TestPKI()
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "timeouts": {"header": 1}, "certificates": [{"hosts": ["example.com"], "certificate": "shop.pem", "key": "shop-key.pem"}]}"#
            ),
            files: pki.files
        )
        defer { server.stop() }
        let started = monotonicSeconds()
        let stalled = try RawClient(port: server.proxyPort)
        stalled.send([0x16, 0x03, 0x01])  // the first bytes of a ClientHello record, then nothing
        let (_, closed) = stalled.read(timeout: 4)
        #expect(closed)
        #expect(monotonicSeconds() - started < 2.5)
        let (status, text) = try curl(server, host: "example.com")
        #expect(status == 0 && text.hasPrefix("HTTP/1.1 200 OK"), "others are unaffected")
    }
}
