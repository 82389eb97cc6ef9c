import Foundation
import Glibc
import TestSupport
import Testing

@Suite("serve: operations", .serialized)
struct OperationsTests {
    static let request = "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: example.com\r\n\r\n"

    func curl(_ url: String, _ extra: [String] = []) throws -> (status: Int, body: String) {
        let result = try runTool(["curl", "-s", "-o", "-", "-w", "\n%{http_code}"] + extra + [url])
        let text = String(decoding: result.stdout, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    @Test("A client that sends Expect: 100-continue gets 100 Continue and its answer at once, not after a timeout")
    func expectContinue() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let started = monotonicSeconds()
        // curl waits up to --expect100-timeout for the interim answer before it sends the body.
        let result = try curl(
            "http://127.0.0.1:\(server.port)/.well-known/apple-app-site-association",
            ["-X", "POST", "-H", "Host: example.com", "-H", "Expect: 100-continue", "--expect100-timeout", "20", "--data", "x=1"]
        )
        #expect(result.status == 405, "\(result)")
        #expect(monotonicSeconds() - started < 5)
    }

    @Test("Admin listener: /healthz, /readyz and Prometheus /metrics with requests by host, path class and status")
    func admin() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(
            Self.request + "GET /nope HTTP/1.1\r\nHost: example.com\r\n\r\n"
                + "GET /apple-app-site-association HTTP/1.1\r\nHost: example.com\r\nUser-Agent: AASA-Bot/1.0.0\r\n\r\n"
                + "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: WWW.example.com:443\r\n\r\n"
                + "GET /nope HTTP/1.1\r\nHost: nobody.example.net\r\n\r\n"
        )
        #expect(client.readResponses(5).count == 5)
        let admin = "http://127.0.0.1:\(server.adminPort)"
        #expect(try curl(admin + "/healthz").status == 200)
        let ready = try curl(admin + "/readyz")
        #expect(ready.status == 200)
        #expect(ready.body.contains("\"generation\":1"))
        let metrics = try curl(admin + "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body.contains(#"aasa_requests_total{host="example.com",path="aasa",status="200"} 2"#))
        // The label is the config's host that matched: www counted as www, a 404 on a known host under it.
        #expect(metrics.body.contains(#"aasa_requests_total{host="www.example.com",path="aasa",status="200"} 1"#), "\(metrics.body)")
        #expect(metrics.body.contains(#"aasa_requests_total{host="example.com",path="other",status="404"} 1"#))
        #expect(metrics.body.contains(#"aasa_requests_total{host="unknown",path="other",status="404"} 1"#))
        // AASA-Bot from 127.0.0.1 is not Apple's network: a claim, counted apart, never per site as Apple's.
        #expect(!metrics.body.contains(#"aasa_bot_fetches_total{host="example.com"}"#))
        #expect(!metrics.body.contains("aasa_bot_last_fetch_timestamp_seconds{host="))
        #expect(metrics.body.contains("aasa_bot_verified_fetches_total 0"))
        #expect(metrics.body.contains("aasa_bot_unverified_fetches_total 1"))
        #expect(metrics.body.contains("aasa_google_verified_fetches_total 0"), "present before the first fetch")
        #expect(metrics.body.contains("aasa_open_connections 1"))
        #expect(metrics.body.contains("aasa_config_generation 1"))
        #expect(metrics.body.contains("aasa_reload_success_total 0"))
        #expect(metrics.body.contains("# TYPE aasa_response_bytes_total counter"))
        #expect(try curl(admin + "/other").status == 404)
        // The main listener does not expose the admin paths.
        #expect(try curl("http://127.0.0.1:\(server.port)/metrics").status == 404)
    }

    @Test(
        "Admin listener against browsers and strangers: foreign Host, any Origin and form POSTs are refused; reload still works for tools"
    )
    func adminSecurity() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let reload = "http://127.0.0.1:\(server.adminPort)/reload"
        // DNS rebinding: the page's own name arrives as Host.
        let rebound = try curl(reload, ["-X", "POST", "-H", "Host: attacker.example"])
        #expect(rebound.status == 403)
        #expect(rebound.body.contains("DNS rebinding"))
        // A cross-site page: text/plain needs no preflight, but the browser adds Origin.
        let crossSite = try curl(reload, ["-X", "POST", "-H", "Origin: http://evil.example", "-H", "Content-Type: text/plain", "-d", "x"])
        #expect(crossSite.status == 403)
        let form = try curl(reload, ["-X", "POST", "-H", "Content-Type: application/x-www-form-urlencoded", "-d", "a=b"])
        #expect(form.status == 415)
        #expect(!server.stderr.contains("reloaded (POST /reload)"))
        let tool = try curl(reload, ["-X", "POST"])
        #expect(tool.status == 200)
        #expect(tool.body.contains(#""result":"reloaded""#))
        #expect(try curl("http://localhost:\(server.adminPort)/metrics").status == 200)
    }

    @Test("A non-loopback admin address needs adminExposed; exposed without a token it is read-only; with one, reload needs it")
    func adminExposure() throws {
        let refused = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "0.0.0.0:0"}"#),
            waitForReady: false
        )
        defer { refused.stop() }
        #expect(refused.waitForExit(10) == 1)
        #expect(refused.stderr.contains("[server.admin-exposed]"))
        #expect(refused.stderr.contains("reachable from other machines"))

        let readOnly = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "0.0.0.0:0", "adminExposed": true}"#)
        )
        defer { readOnly.stop() }
        #expect(readOnly.stderr.contains("exposed read-only"))
        let port = try #require(
            readOnly.stderr.split(separator: "\n").first { $0.contains("admin on http://0.0.0.0:") }
                .flatMap { Int($0.split(separator: ":")[3].prefix { $0.isNumber }) }
        )
        #expect(try curl("http://127.0.0.1:\(port)/metrics").status == 200)
        let denied = try curl("http://127.0.0.1:\(port)/reload", ["-X", "POST"])
        #expect(denied.status == 403)
        #expect(denied.body.contains("read-only"))
        // The pages that list every host and what fetched it are closed to whoever reaches the port.
        for path in ["/console", "/status", "/status/example.com"] {
            let closed = try curl("http://127.0.0.1:\(port)\(path)")
            #expect(closed.status == 403, "\(path)")
            #expect(closed.body.contains("set adminTokenFile"), "\(path): \(closed.body)")
        }

        let token = "s3cr3t-token-0123456789"
        let guarded = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "adminTokenFile": "admin.token"}"#),
            files: ["admin.token": token + "\n"]
        )
        defer { guarded.stop() }
        let admin = "http://127.0.0.1:\(guarded.adminPort)"
        #expect(try curl(admin + "/healthz").status == 200, "probes need no token")
        #expect(try curl(admin + "/metrics").status == 401)
        #expect(try curl(admin + "/reload", ["-X", "POST", "-H", "Authorization: Bearer nope-nope-nope-nope"]).status == 401)
        #expect(try curl(admin + "/metrics", ["-H", "Authorization: Bearer \(token)"]).status == 200)
        // status sends the token from a file; without it the listener answers 401 and status says so.
        let tokenFile = guarded.directory + "/admin.token"
        let withToken = try runTool([
            TestPaths.serverExecutable, "status", "--admin", "127.0.0.1:\(guarded.adminPort)", "--token-file", tokenFile,
        ])
        #expect(withToken.status == 0, "\(withToken.stderr)")
        let without = try runTool([TestPaths.serverExecutable, "status", "--admin", "127.0.0.1:\(guarded.adminPort)"])
        #expect(without.status == 1 && without.stderr.contains("answered /status with 401"), "\(without.stderr)")
        let missing = try runTool([TestPaths.serverExecutable, "status", "--token-file", guarded.directory + "/nope"])
        #expect(missing.status == 2 && missing.stderr.contains("--token-file"), "\(missing.stderr)")
        // With a token, a name is fine as Host.
        #expect(
            try curl(admin + "/reload", ["-X", "POST", "-H", "Host: admin.internal", "-H", "Authorization: Bearer \(token)"]).status == 200
        )

        let weak = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "adminTokenFile": "admin.token"}"#),
            files: ["admin.token": "short"],
            waitForReady: false
        )
        defer { weak.stop() }
        #expect(weak.waitForExit(10) == 1)
        #expect(weak.stderr.contains("[server.admin-token]"))
    }

    @Test("Access log: one JSON line per request on stdout with every field; off when accessLog is false")
    func accessLog() throws {
        let server = try ServerProcess(config: testConfig())
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET /apple-app-site-association?q=\"x\" HTTP/1.1\r\nHost: Example.com\r\nUser-Agent: tester \"1\"\r\n\r\n")
        #expect(client.readResponses(1).count == 1)
        #expect(waitUntil(3) { server.stdout.contains("\n") })
        let line = try #require(server.stdout.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time", "client", "host", "method", "path", "status", "bytes", "userAgent", "durationMicros"])
        #expect(object["client"] as? String == "127.0.0.1")
        #expect(object["host"] as? String == "Example.com")
        #expect(object["method"] as? String == "GET")
        #expect(object["path"] as? String == "/apple-app-site-association?q=\"x\"")
        #expect(object["status"] as? Int == 200)
        #expect(object["userAgent"] as? String == "tester \"1\"")
        #expect((object["bytes"] as? Int ?? 0) > 300)
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)

        let quiet = try ServerProcess(config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "accessLog": false}"#))
        defer { quiet.stop() }
        let other = try RawClient(port: quiet.port)
        other.send(Self.request)
        #expect(other.readResponses(1).count == 1)
        // Once the server has exited, everything it would ever have logged is in the file.
        quiet.signal(SIGTERM)
        #expect(quiet.waitForExit(5) == 0)
        #expect(quiet.stdout.isEmpty)
    }

    @Test("trustForwardedHeaders logs the first X-Forwarded-For address as the client")
    func forwardedFor() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "off", "trustForwardedHeaders": true}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: 203.0.113.9, 10.0.0.1\r\n\r\n")
        #expect(client.readResponses(1).count == 1)
        #expect(waitUntil(3) { server.stdout.contains("\"client\":\"203.0.113.9\"") })
    }

    @Test("PROXY protocol v1 and v2 listeners take the client address from the header; plain HTTP there is refused")
    func proxyProtocol() throws {
        let server = try ServerProcess(
            config: testConfig(
                server: #"{"listen": ["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "proxyProtocol": true}], "admin": "off"}"#
            )
        )
        defer { server.stop() }
        #expect(server.proxyPort > 0)
        let v1 = try RawClient(port: server.proxyPort)
        v1.send("PROXY TCP4 198.51.100.7 127.0.0.1 40000 443\r\n" + Self.request)
        #expect(v1.readResponses(1).first?.status == 200)
        var v2Header: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x0C]
        v2Header += [203, 0, 113, 5, 127, 0, 0, 1, 0x9C, 0x40, 0x01, 0xBB]
        let v2 = try RawClient(port: server.proxyPort)
        v2.send(v2Header + Array(Self.request.utf8))
        #expect(v2.readResponses(1).first?.status == 200)
        #expect(
            waitUntil(3) { server.stdout.contains("\"client\":\"198.51.100.7\"") && server.stdout.contains("\"client\":\"203.0.113.5\"") }
        )
        let plain = try RawClient(port: server.proxyPort)
        plain.send(Self.request)
        let (bytes, closed) = plain.read(timeout: 3)
        #expect(bytes.isEmpty && closed)
    }

    @Test("SIGTERM: stop accepting, /readyz 503, finish the in-flight request with Connection: close, exit 0")
    func gracefulDrain() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "timeouts": {"drain": 5}}"#)
        )
        defer { server.stop() }
        let inFlight = try RawClient(port: server.port)
        inFlight.send("GET /.well-known/apple-app-site-association HTTP/1.1\r\n")
        let idle = try RawClient(port: server.port)
        idle.send(Self.request)
        #expect(idle.readResponses(1).count == 1)
        #expect(server.waitForOpenConnections(2))
        server.signal(SIGTERM)
        #expect(waitUntil(3) { server.stderr.contains("draining") })
        let (_, idleClosed) = idle.read(timeout: 2)
        #expect(idleClosed, "idle connections are closed at once")
        let ready = try curl("http://127.0.0.1:\(server.adminPort)/readyz")
        #expect(ready.status == 503)
        #expect((try? RawClient(port: server.port)) == nil, "no longer accepting")
        inFlight.send("Host: example.com\r\n\r\n")
        let (bytes, closed) = inFlight.read(timeout: 3)
        let response = try #require(HTTPResponse.parseAll(bytes).first)
        #expect(response.status == 200)
        #expect(response.header("Connection") == "close")
        #expect(closed)
        #expect(server.waitForExit(5) == 0)
        #expect(server.stderr.contains("stopped"))
    }

    @Test("A stuck client cannot hold the drain past its timeout")
    func drainTimeout() throws {
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "timeouts": {"drain": 1, "header": 30}}"#)
        )
        defer { server.stop() }
        let stuck = try RawClient(port: server.port)
        stuck.send("GET / HTTP/1.1\r\n")
        #expect(server.waitForOpenConnections(1))
        let started = monotonicSeconds()
        server.signal(SIGTERM)
        #expect(server.waitForExit(5) == 0)
        #expect(monotonicSeconds() - started < 2.5)
        #expect(server.stderr.contains("drain timeout reached"))
    }

    @Test("SIGHUP reloads: a good config is served on existing connections; a bad one is rejected and the old one kept")
    func reload() throws {
        // File watching off: this test is about SIGHUP alone (ReloadTests covers watching).
        let server = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "reload": {"watch": false}}"#)
        )
        defer { server.stop() }
        let client = try RawClient(port: server.port)
        client.send(Self.request)
        let before = try #require(client.readResponses(1).first)
        let configPath = server.directory + "/config.json"
        try Data("{ broken".utf8).write(to: URL(fileURLWithPath: configPath))
        server.signal(SIGHUP)
        #expect(waitUntil(3) { server.stderr.contains("reload (SIGHUP) rejected") })
        client.send(Self.request)
        #expect(client.readResponses(1).first?.body == before.body)
        let changed = testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "reload": {"watch": false}}"#)
            .replacingOccurrences(of: "/admin/*", with: "/private/*")
        try Data(changed.utf8).write(to: URL(fileURLWithPath: configPath))
        server.signal(SIGHUP)
        #expect(waitUntil(3) { server.stderr.contains("reloaded (SIGHUP): generation 2") })
        client.send(Self.request)
        let after = try #require(client.readResponses(1).first)
        #expect(after.bodyText.contains("/private/*"))
        #expect(after.header("ETag") != before.header("ETag"))
        let metrics = try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"])
        let text = String(decoding: metrics.stdout, as: UTF8.self)
        #expect(text.contains("aasa_reload_success_total 1"))
        #expect(text.contains("aasa_reload_failure_total 1"))
        #expect(text.contains("aasa_config_generation 2"))
    }

    @Test("Start-up errors: one line naming the cause, exit 1, nothing left listening")
    func startupErrors() throws {
        let first = try ServerProcess(config: testConfig())
        defer { first.stop() }
        // The same port again (no SO_REUSEPORT sharing across processes by default: bind fails).
        let clash = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:\#(first.port)"], "admin": "127.0.0.1:\#(first.adminPort)"}"#),
            waitForReady: false
        )
        defer { clash.stop() }
        #expect(clash.waitForExit(10) == 1)
        let errorLines = clash.stderr.split(separator: "\n").filter { $0.contains("error") }
        #expect(errorLines.count == 1, "\(clash.stderr)")
        // The listener is named, with the setting that moves it.
        #expect(clash.stderr.contains("listener 127.0.0.1:\(first.port): address already in use"), "\(clash.stderr)")
        #expect(clash.stderr.contains("server.listen or --listen"))
        #expect(!clash.stderr.contains("listening on"))
        // The admin listener's clash names it and its setting.
        let adminClash = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:\#(first.adminPort)"}"#),
            waitForReady: false
        )
        defer { adminClash.stop() }
        #expect(adminClash.waitForExit(10) == 1)
        #expect(adminClash.stderr.contains("admin 127.0.0.1:\(first.adminPort): address already in use"), "\(adminClash.stderr)")
        #expect(adminClash.stderr.contains("server.admin or --admin"))

        let bad = try ServerProcess(
            config: #"{"version": 1, "sites": [{"hosts": ["a.com"], "webcredentials": {"apps": ["nope"]}}]}"#,
            waitForReady: false
        )
        defer { bad.stop() }
        #expect(bad.waitForExit(10) == 1)
        #expect(bad.stderr.contains("[app.unknown]"))
        #expect(bad.stderr.contains("not serving"))
    }

    @Test("--check-config validates and exits like nginx -t")
    func checkConfig() throws {
        let good = try ServerProcess(config: testConfig(), extraArguments: ["--check-config"], waitForReady: false)
        defer { good.stop() }
        #expect(good.waitForExit(10) == 0)
        #expect(good.stderr.contains("ok — 2 site(s), 3 host(s)"))
    }

    @Test("IPv6 loopback listener ([::1]:0) serves too")
    func ipv6() throws {
        let server = try ServerProcess(config: testConfig(server: #"{"listen": ["[::1]:0"], "admin": "off"}"#), waitForReady: false)
        defer { server.stop() }
        #expect(waitUntil(10) { server.stderr.contains("serving") })
        let line = try #require(server.stderr.split(separator: "\n").first { $0.contains("listening on http://[::1]:") })
        let port = String(line.split(separator: ":").last ?? "")
        let result = try runTool(["curl", "-s", "-H", "Host: example.com", "http://[::1]:\(port)/.well-known/apple-app-site-association"])
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("applinks"))
    }
}
