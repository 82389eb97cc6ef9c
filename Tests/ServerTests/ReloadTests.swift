import Foundation
import Glibc
import Synchronization
import TLS
import TestSupport
import Testing

/// Replaces `path` the way deploy tools do: write a temporary file, then rename it over the target.
func atomicWrite(_ text: String, to path: String) throws {
    let temporary = path + ".tmp-\(UUID().uuidString)"
    try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
    guard rename(temporary, path) == 0 else { throw TestFailure("rename failed: errno \(errno)") }
}

/// Keep-alive clients that request the AASA document in a loop and record every outcome.
final class LoadClients: @unchecked Sendable {
    struct Tally {
        var responses = 0
        var failures: [String] = []
        var bodies: [String: Int] = [:]
    }

    let tally = Mutex(Tally())
    let running = Atomic<Bool>(true)
    private var threads: [Thread] = []

    init(port: Int, host: String, count: Int) {
        for _ in 0..<count {
            let thread = Thread { [self] in
                guard var client = try? RawClient(port: port) else {
                    self.tally.withLock { $0.failures.append("connect failed") }
                    return
                }
                let request = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\r\n"
                while self.running.load(ordering: .relaxed) {
                    client.send(request)
                    let (bytes, closed) = client.read(timeout: 5) { HTTPResponse.parseAll($0).count >= 1 }
                    let responses = HTTPResponse.parseAll(bytes)
                    self.tally.withLock { tally in
                        guard let response = responses.first, responses.count == 1, !closed else {
                            tally.failures.append("closed=\(closed) responses=\(responses.count)")
                            return
                        }
                        tally.responses += 1
                        if response.status != 200 { tally.failures.append("status \(response.status)") }
                        tally.bodies[response.bodyText, default: 0] += 1
                    }
                    if closed { return }
                    // After maxRequestsPerConnection the server says Connection: close; open a new one.
                    if responses.first?.header("Connection") == "close" {
                        _ = client.read(timeout: 2)
                        guard let fresh = try? RawClient(port: port) else {
                            self.tally.withLock { $0.failures.append("reconnect failed") }
                            return
                        }
                        client = fresh
                    }
                }
            }
            threads.append(thread)
            thread.start()
        }
    }

    func stop() {
        running.store(false, ordering: .relaxed)
        _ = waitUntil(10) { self.threads.allSatisfy(\.isFinished) }
    }
}

@Suite("Hot reload", .serialized)
struct ReloadTests {
    static let server = #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false}"#

    /// A config whose example.com document carries `marker`, so each version is recognisable.
    static func config(_ marker: String, includeExample: Bool = true, appID: String = "ABCDE12345.com.example.shop") -> String {
        let exampleSite =
            includeExample
            ? #"{"hosts": ["example.com"], "applinks": {"details": [{"apps": ["\#(appID)"], "components": [{"/": "/\#(marker)/*"}]}]}},"#
            : ""
        return #"""
            {"version": 1, "sites": [\#(exampleSite)
              {"hosts": ["other.example.org"], "webcredentials": {"apps": ["ABCDE12345.com.example.other"]}}],
             "server": \#(server)}
            """#
    }

    static func document(_ marker: String) -> String {
        #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/\#(marker)/*"}]}]}}"#
    }

    func fetch(_ server: ServerProcess, host: String = "example.com") throws -> String {
        let client = try RawClient(port: server.port)
        client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        return client.readResponses(1).first?.bodyText ?? ""
    }

    @Test(
        "Under load, 50 atomic replacements (valid, invalid JSON, failing validation, a host removed): zero failed requests, every body a valid document, new content within 2 s"
    )
    func reloadStorm() throws {
        let server = try ServerProcess(config: Self.config("v0"))
        defer { server.stop() }
        let path = server.directory + "/config.json"
        let load = LoadClients(port: server.port, host: "example.com", count: 2)
        var valid: Set<String> = [Self.document("v0"), #"{"applinks":{"details":[]}}"#]
        var latencies: [Double] = []
        for step in 1...50 {
            switch step % 5 {
            case 1, 3:
                let marker = "v\(step)"
                valid.insert(Self.document(marker))
                try atomicWrite(Self.config(marker), to: path)
                let written = monotonicSeconds()
                let seen = waitUntil(2) { (try? fetch(server)) == Self.document(marker) }
                #expect(seen, "step \(step): new content not served within 2 s")
                latencies.append(monotonicSeconds() - written)
            case 2, 4:
                let rejectedBefore = server.stderr.components(separatedBy: "rejected, still serving").count
                if step % 5 == 2 {
                    try atomicWrite("{ \"version\": 1, \"sites\": [", to: path)  // broken JSON
                } else {
                    try atomicWrite(Self.config("bad", appID: "not-an-app-id"), to: path)  // fails validation
                }
                #expect(
                    waitUntil(2) { server.stderr.components(separatedBy: "rejected, still serving").count > rejectedBefore },
                    "step \(step): the bad config was not rejected"
                )
            default:
                try atomicWrite(Self.config("gone", includeExample: false), to: path)  // example.com removed
                #expect(waitUntil(2) { (try? fetch(server)) == #"{"applinks":{"details":[]}}"# }, "step \(step)")
            }
            usleep(60_000)
        }
        load.stop()
        let tally = load.tally.withLock { $0 }
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(5))")
        #expect(tally.responses > 200, "the clients kept requesting (\(tally.responses))")
        let unexpected = tally.bodies.keys.filter { !valid.contains($0) }
        #expect(unexpected.isEmpty, "bodies that were never a valid document: \(unexpected.prefix(2))")
        #expect(!tally.bodies.keys.contains { $0.contains("/bad/*") })
        #expect(latencies.max() ?? 9 < 2)
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
        let text = String(decoding: metrics.stdout, as: UTF8.self)
        #expect(text.contains("aasa_reload_failure_total"))
        #expect(!text.contains("aasa_reload_success_total 0"))
        #expect(server.stderr.contains("rejected, still serving generation"))
        #expect(server.stderr.contains("hosts removed: example.com"))
    }

    @Test("Kubernetes ConfigMap: the ..data symlink swapped to a new timestamped directory is picked up")
    func kubernetesSwap() throws {
        let mount = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-k8s-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: mount + "/..2026_11_30_01", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mount) }
        try Data(Self.config("k1").utf8).write(to: URL(fileURLWithPath: mount + "/..2026_11_30_01/config.json"))
        symlink("..2026_11_30_01", mount + "/..data")
        symlink("..data/config.json", mount + "/config.json")
        let kube = try ServerProcess(config: "{}", command: ["serve", "--config", mount + "/config.json"])
        defer { kube.stop() }
        #expect(try fetch(kube) == Self.document("k1"))
        // The kubelet's swap: a new timestamped directory, a ..data_tmp symlink to it, renamed over ..data.
        try FileManager.default.createDirectory(atPath: mount + "/..2026_11_30_02", withIntermediateDirectories: true)
        try Data(Self.config("k2").utf8).write(to: URL(fileURLWithPath: mount + "/..2026_11_30_02/config.json"))
        symlink("..2026_11_30_02", mount + "/..data_tmp")
        #expect(rename(mount + "/..data_tmp", mount + "/..data") == 0)
        #expect(waitUntil(3) { (try? fetch(kube)) == Self.document("k2") })
    }

    @Test("In-place truncate-and-write, then delete and re-create: the bad moment is rejected, the next good file is served")
    func inPlaceAndRecreate() throws {
        let server = try ServerProcess(config: Self.config("v0"))
        defer { server.stop() }
        let path = server.directory + "/config.json"
        try Data(Self.config("edit1").utf8).write(to: URL(fileURLWithPath: path))  // truncate + write in place
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("edit1") })
        unlink(path)
        #expect(waitUntil(3) { server.stderr.contains("cannot read") })
        #expect(try fetch(server) == Self.document("edit1"), "a deleted config keeps the last good one serving")
        let ready = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/readyz"])
        #expect(String(decoding: ready.stdout, as: UTF8.self).contains("\"lastReloadFailed\":true"))
        try Data(Self.config("back").utf8).write(to: URL(fileURLWithPath: path))
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("back") })
    }

    @Test("A hosted file changing is picked up too")
    func hostedFileChange() throws {
        let config = #"{"version": 1, "sites": [{"hosts": ["example.com"], "file": "aasa/doc.json"}], "server": \#(Self.server)}"#
        let server = try ServerProcess(config: config, files: ["aasa/doc.json": Self.document("f1")])
        defer { server.stop() }
        #expect(try fetch(server) == Self.document("f1"))
        try atomicWrite(Self.document("f2"), to: server.directory + "/aasa/doc.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("f2") })
    }

    @Test("Certificate rotation: replacing the PEM files serves the new certificate (new serial) without a restart")
    func certificateRotation() throws {
        let pki = try TestPKI()
        let server = try ServerProcess(
            config: testConfig(
                server:
                    #"{"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "tls": true}], "admin": "off", "certificates": [{"hosts": ["example.com"], "certificate": "shop.pem", "key": "shop-key.pem"}]}"#
            ),
            files: pki.files
        )
        defer { server.stop() }
        func servedSerial() throws -> String {
            let result = try runTool(
                [
                    "sh", "-c",
                    "echo | openssl s_client -connect 127.0.0.1:\(server.proxyPort) -servername example.com 2>/dev/null | openssl x509 -noout -serial",
                ],
                timeout: 10
            )
            return String(decoding: result.stdout, as: UTF8.self).replacingOccurrences(of: "serial=", with: "").trimmingCharacters(
                in: .whitespacesAndNewlines
            ).lowercased()
        }
        let before = try servedSerial()
        #expect(before == CertificateInspector.summary(pki.shop.certificate)?.serialHex.lowercased())
        let renewed = try DevCertificates.makeLeaf(
            hosts: ["example.com", "www.example.com", "*.tenant.example.com"],
            authority: pki.authority
        )
        // certbot-style: key then certificate, each replaced atomically.
        try atomicWrite(String(decoding: renewed.key, as: UTF8.self), to: server.directory + "/shop-key.pem")
        try atomicWrite(String(decoding: renewed.certificate, as: UTF8.self), to: server.directory + "/shop.pem")
        let expected = CertificateInspector.summary(renewed.certificate)?.serialHex.lowercased()
        #expect(waitUntil(5) { (try? servedSerial()) == expected })
        #expect(server.stderr.contains("certificates replaced"))
    }

    @Test("POST /reload on the admin listener answers with the outcome as JSON; GET is 405")
    func adminReload() throws {
        let server = try ServerProcess(
            config: Self.config("v0").replacingOccurrences(
                of: #""accessLog": false"#,
                with: #""accessLog": false, "reload": {"watch": false}"#
            )
        )
        defer { server.stop() }
        let admin = "http://127.0.0.1:\(server.adminPort)/reload"
        try Data(
            Self.config("p1").replacingOccurrences(of: #""accessLog": false"#, with: #""accessLog": false, "reload": {"watch": false}"#)
                .utf8
        )
        .write(to: URL(fileURLWithPath: server.directory + "/config.json"))
        let ok = try runTool(["curl", "-s", "-X", "POST", "-w", "\n%{http_code}", admin])
        let okText = String(decoding: ok.stdout, as: UTF8.self)
        #expect(okText.hasSuffix("\n200"))
        #expect(okText.contains(#""result":"reloaded","generation":2"#))
        #expect(okText.contains("hosts changed: example.com"))
        #expect(try fetch(server) == Self.document("p1"))
        try Data("{".utf8).write(to: URL(fileURLWithPath: server.directory + "/config.json"))
        let bad = try runTool(["curl", "-s", "-X", "POST", "-w", "\n%{http_code}", admin])
        let badText = String(decoding: bad.stdout, as: UTF8.self)
        #expect(badText.hasSuffix("\n422"))
        #expect(badText.contains(#""result":"rejected","generation":2"#))
        #expect(badText.contains("json.truncated"))
        let get = try runTool(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", admin])
        #expect(String(decoding: get.stdout, as: UTF8.self) == "405")
        let metrics = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"]).stdout, as: UTF8.self)
        #expect(metrics.contains("aasa_reload_success_total 1"))
        #expect(metrics.contains("aasa_reload_failure_total 1"))
        #expect(metrics.contains("aasa_reload_last_success 0"))
        #expect(metrics.contains("aasa_config_generation 2"))
        #expect(!metrics.contains("aasa_reload_last_attempt_timestamp_seconds 0.000"))
    }

    @Test("The request after a reload is published, on a connection that was idle, is answered from the new config")
    func nextRequestAfterReload() throws {
        // Each loop keeps its snapshot from request to request and compares generations on every request.
        // A file change wakes no loop: one asleep in epoll_wait when the reload is published must still
        // answer the next request from the new config, not from the snapshot it held (it looks again only
        // every 100 ms when idle, so a request sent as soon as the reload is logged tells the two apart).
        let server = try ServerProcess(config: Self.config("v0"))
        defer { server.stop() }
        let path = server.directory + "/config.json"
        let clients = try (0..<4).map { _ in try RawClient(port: server.port) }
        let request = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"
        for client in clients {
            client.send(request)
            #expect(client.readResponses(1).first?.bodyText == Self.document("v0"))
        }
        for round in 1...12 {
            try atomicWrite(Self.config("r\(round)"), to: path)
            let logged = "reloaded (file change): generation \(round + 1) "
            let deadline = monotonicSeconds() + 5
            while !server.stderr.contains(logged) && monotonicSeconds() < deadline { usleep(500) }
            #expect(server.stderr.contains(logged), "round \(round): no reload logged")
            for (index, client) in clients.enumerated() {
                client.send(request)
                let body = client.readResponses(1).first?.bodyText
                #expect(body == Self.document("r\(round)"), "round \(round), connection \(index): \(body ?? "no answer")")
            }
        }
    }

    @Test("A reload of a 300-site config rebuilds only what changed: the other sites keep their ETag and Last-Modified")
    func incrementalReload() throws {
        let noWatch = #""accessLog": false, "reload": {"watch": false}"#
        func site(_ number: Int, _ path: String = "product") -> String {
            #"{"hosts": ["shop\#(number).example.com"], "applinks": {"formats": ["modern", "legacy"], "details": [{"apps": ["ABCDE12345.com.example.app"], "components": [{"/": "/\#(path)/\#(number)/*"}, {"/": "/cart", "?": {"id": "?*"}}]}]}}"#
        }
        func config(_ sites: [String]) -> String {
            #"{"version": 1, "sites": [\#n"# + sites.joined(separator: ",\n") + "],\n \"server\": "
                + Self.server.replacingOccurrences(of: #""accessLog": false"#, with: noWatch) + "}"
        }
        let server = try ServerProcess(config: config((0..<300).map { site($0) }))
        defer { server.stop() }
        func get(_ host: String) throws -> HTTPResponse {
            let client = try RawClient(port: server.port)
            client.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            return try #require(client.readResponses(1).first)
        }
        let keptBefore = try get("shop5.example.com")
        let editedBefore = try get("shop150.example.com")
        // Last-Modified has one-second resolution: a rebuilt site would show a later one.
        Thread.sleep(forTimeInterval: 1.2)
        // A site inserted first moves every other site down a line and an index; site 150 is edited.
        let edited =
            [#"{"hosts": ["new.example.com"], "webcredentials": {"apps": ["ABCDE12345.com.example.new"]}}"#]
            + (0..<300).map { $0 == 150 ? site($0, "item") : site($0) }
        try atomicWrite(config(edited), to: server.directory + "/config.json")
        let outcome = String(
            decoding: try runTool(["curl", "-s", "-X", "POST", "http://127.0.0.1:\(server.adminPort)/reload"]).stdout,
            as: UTF8.self
        )
        #expect(outcome.contains(#""result":"reloaded""#), "\(outcome)")
        #expect(outcome.contains("hosts added: new.example.com; hosts changed: shop150.example.com"), "\(outcome)")
        let keptAfter = try get("shop5.example.com")
        #expect(keptAfter.body == keptBefore.body)
        #expect(keptAfter.header("ETag") == keptBefore.header("ETag"))
        #expect(keptAfter.header("Last-Modified") == keptBefore.header("Last-Modified"))
        let editedAfter = try get("shop150.example.com")
        #expect(editedAfter.bodyText.contains("/item/150/*"))
        #expect(editedAfter.header("ETag") != editedBefore.header("ETag"))
        #expect(editedAfter.header("Last-Modified") != editedBefore.header("Last-Modified"))
        #expect(try get("new.example.com").bodyText.contains("ABCDE12345.com.example.new"))
        // Every site still serves what a fresh load of the file gives.
        let fresh = try runTool([
            TestPaths.serverExecutable, "generate", "--config", server.directory + "/config.json", "--host", "shop299.example.com",
        ])
        #expect(try get("shop299.example.com").body == Array(fresh.stdout).filter { $0 != 0x0A })
    }

    @Test("Polling (\"watch\": \"poll\", for mounts without inotify) picks up a change within the interval")
    func polling() throws {
        let polled = Self.config("p0").replacingOccurrences(
            of: #""accessLog": false"#,
            with: #""accessLog": false, "reload": {"watch": "poll", "pollSeconds": 0.3}"#
        )
        let server = try ServerProcess(config: polled)
        defer { server.stop() }
        #expect(server.stderr.contains("polling the config files every 0.3 s"))
        try atomicWrite(polled.replacingOccurrences(of: "/p0/*", with: "/p1/*"), to: server.directory + "/config.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("p1") })
    }

    @Test("A change that needs new sockets is not half-applied: the rest is, and one line says what needs a restart")
    func restartNeeded() throws {
        let server = try ServerProcess(config: Self.config("v0"))
        defer { server.stop() }
        let moved = Self.config("moved").replacingOccurrences(
            of: #""listen": ["127.0.0.1:0"]"#,
            with: #""listen": ["127.0.0.1:0", "[::1]:0"]"#
        )
        try atomicWrite(moved, to: server.directory + "/config.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("moved") })
        // The line may reach the pipe just after the new document is served.
        #expect(waitUntil(3) { server.stderr.contains("needs a restart to apply: server.listen") })
    }

    @Test("Command-line overrides are not changes: serve --listen/--admin over other config values reloads without a restart note")
    func overridesAreNotChanges() throws {
        // The config says 0.0.0.0:1 and admin off; the command line moves both to loopback ephemeral ports.
        let configured = Self.config("o0").replacingOccurrences(
            of: Self.server,
            with: #"{"listen": ["0.0.0.0:1"], "admin": "off", "accessLog": false}"#
        )
        let server = try ServerProcess(config: configured, extraArguments: ["--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"])
        defer { server.stop() }
        try atomicWrite(configured.replacingOccurrences(of: "/o0/*", with: "/o1/*"), to: server.directory + "/config.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("o1") })
        #expect(server.stderr.contains("reloaded (file change)"))
        #expect(!server.stderr.contains("needs a restart"), "\(server.stderr)")
    }

    @Test("A logFormat change is applied at once and never also reported as needing a restart")
    func logFormatApplies() throws {
        let server = try ServerProcess(config: Self.config("f0"))
        defer { server.stop() }
        let json = Self.config("f1").replacingOccurrences(of: #""accessLog": false"#, with: #""accessLog": false, "logFormat": "json""#)
        try atomicWrite(json, to: server.directory + "/config.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("f1") })
        #expect(waitUntil(3) { server.stderr.contains(#""msg":"reloaded (file change)"#) }, "\(server.stderr)")
        #expect(!server.stderr.contains("needs a restart"), "\(server.stderr)")
    }

    @Test("serve --listen replaces every listener of the config, TLS ones included; --listen-tls adds a TLS one")
    func listenReplacesEveryListener() throws {
        let authority = try DevCertificates.makeAuthority(commonName: "listen test CA")
        let leaf = try DevCertificates.makeLeaf(hosts: ["example.com", "other.example.org"], authority: authority)
        // The config's TLS listener is on a port something else holds: were it bound, serve would fail.
        let blocker = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(blocker) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(try freeLoopbackPort()).bigEndian)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(blocker, $0, length) } }
        _ = listen(blocker, 1)
        let busy = Int(UInt16(bigEndian: address.sin_port))
        let configured = Self.config("l0").replacingOccurrences(
            of: Self.server,
            with:
                #"{"listen": [{"address": "127.0.0.1", "port": \#(busy), "tls": true}], "admin": "off", "accessLog": false, "certificates": [{"hosts": ["example.com", "other.example.org"], "certificate": "cert.pem", "key": "key.pem"}]}"#
        )
        let files = ["cert.pem": String(decoding: leaf.certificate, as: UTF8.self), "key.pem": String(decoding: leaf.key, as: UTF8.self)]
        let plain = try ServerProcess(config: configured, files: files, extraArguments: ["--listen", "127.0.0.1:0"])
        defer { plain.stop() }
        #expect(plain.stderr.components(separatedBy: "listening on").count == 2, "\(plain.stderr)")
        #expect(plain.stderr.contains("listening on http://127.0.0.1:"))
        #expect(try fetch(plain) == Self.document("l0"))
        let secure = try ServerProcess(config: configured, files: files, extraArguments: ["--listen-tls", "127.0.0.1:0"])
        defer { secure.stop() }
        #expect(secure.stderr.contains("listening on https://127.0.0.1:"), "\(secure.stderr)")
        #expect(!secure.stderr.contains("listening on http://"))
    }

    @Test("Watch settings apply on reload: watching turned on by a SIGHUP-loaded config picks up the next edit by itself")
    func watchSettingsApply() throws {
        let unwatched = Self.config("w0").replacingOccurrences(
            of: #""accessLog": false"#,
            with: #""accessLog": false, "reload": {"watch": false}"#
        )
        let server = try ServerProcess(config: unwatched)
        defer { server.stop() }
        let polled = Self.config("w1").replacingOccurrences(
            of: #""accessLog": false"#,
            with: #""accessLog": false, "reload": {"watch": "poll", "pollSeconds": 0.2}"#
        )
        try atomicWrite(polled, to: server.directory + "/config.json")
        usleep(300_000)
        #expect(try fetch(server) == Self.document("w0"), "not watched yet")
        server.signal(SIGHUP)
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("w1") })
        #expect(server.stderr.contains("polling the config files every 0.2 s"))
        #expect(!server.stderr.contains("needs a restart"))
        try atomicWrite(polled.replacingOccurrences(of: "/w1/*", with: "/w2/*"), to: server.directory + "/config.json")
        #expect(waitUntil(3) { (try? fetch(server)) == Self.document("w2") }, "the edit is picked up without a signal")
    }

    @Test("The admin listener reads and judges bodies like the main one: a 70 KB POST /reload is 413 and reloads nothing")
    func adminBodyLimit() throws {
        let server = try ServerProcess(config: Self.config("b0"))
        defer { server.stop() }
        let client = try RawClient(port: server.adminPort)
        let body = String(repeating: "x", count: 70 * 1024)
        client.send("POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        let responses = client.readResponses(1)
        #expect(responses.first?.status == 413)
        #expect(responses.first?.header("Connection") == "close")
        // A small body is read and the reload answered; it is the only reload that ran (the refused
        // request came first, so its reload would have been logged before this one).
        let small = try RawClient(port: server.adminPort)
        small.send("POST /reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
        #expect(small.readResponses(1).first?.status == 200)
        #expect(waitUntil(3) { server.stderr.contains("reloaded (POST /reload)") })
        #expect(server.stderr.components(separatedBy: "reloaded (POST /reload)").count == 2, "one reload ran")
    }
}
