import Foundation
import Glibc
import TestSupport
import Testing

/// The server obtaining, serving and renewing certificates from a real ACME CA (Pebble), end to end.
@Suite("ACME against Pebble", .serialized, .enabled(if: Pebble.installed, "pebble is not installed (apt-get install pebble)"))
struct ACMEPebbleTests {
    @Test("Three hosts by HTTP-01, three by TLS-ALPN-01 and a wildcard by DNS-01 through a hook; curl verifies each")
    func challenges() throws {
        let pebble = try Pebble()
        let root = { try pebble.rootFile() }
        // HTTP-01
        do {
            let server = try ServerProcess(
                config: acmeConfig(
                    pebble,
                    sites: sites([["a.test", "b.test"], ["c.test"]]),
                    storage: "storage",
                    acme: #""challenges": ["http-01"]"#
                )
            )
            defer { server.stop() }
            #expect(
                waitUntil(60) { server.stderr.components(separatedBy: "obtained a certificate for").count - 1 == 3 },
                "\(server.stderr)"
            )
            let rootPath = try root()
            for host in ["a.test", "b.test", "c.test"] {
                #expect(httpsStatus(host, port: pebble.tlsPort, root: rootPath) == 200, "\(host)")
            }
            #expect(server.stderr.contains("ordered a certificate for a.test"))
            // Nothing else under the challenge path, and never over TLS.
            let other = try runTool([
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                "http://127.0.0.1:\(pebble.httpPort)/.well-known/acme-challenge/unknown-token",
            ])
            #expect(String(decoding: other.stdout, as: UTF8.self) == "404")
            let key = try FileManager.default.attributesOfItem(
                atPath: server.directory + "/storage/certificates/\(pebble.storageFolder)/a.test/certificate.pem"
            )
            #expect((key[.posixPermissions] as? Int) == 0o600)
            #expect(
                !FileManager.default.fileExists(
                    atPath: server.directory + "/storage/certificates/\(pebble.storageFolder)/a.test/error.json"
                )
            )
            // The operator's view, from the config and the storage.
            let listed = try runTool([TestPaths.serverExecutable, "certificates", "--config", server.directory + "/config.json"])
            let table = String(decoding: listed.stdout, as: UTF8.self)
            #expect(listed.status == 0, "\(table) \(listed.stderr)")
            for host in ["a.test", "b.test", "c.test"] {
                #expect(
                    table.split(separator: "\n").contains { $0.hasPrefix(host) && $0.contains(" acme ") && $0.contains("Pebble") },
                    "\(table)"
                )
            }
        }
        // TLS-ALPN-01, and a wildcard site by DNS-01 through a hook named relative to the config (the
        // server's working directory is elsewhere).
        let hook =
            "../" + URL(fileURLWithPath: pebble.directory).lastPathComponent + "/"
            + URL(fileURLWithPath: try pebble.writeDNSHook())
            .lastPathComponent
        let server = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["d.test", "e.test", "f.test"], ["*.wild.test"]]),
                storage: "storage",
                acme: #""challenges": ["tls-alpn-01"], "dnsHook": "\#(hook)""#
            )
        )
        defer { server.stop() }
        #expect(waitUntil(60) { server.stderr.components(separatedBy: "obtained a certificate for").count - 1 == 4 }, "\(server.stderr)")
        let rootPath = try root()
        for host in ["d.test", "e.test", "f.test", "one.wild.test", "two.wild.test"] {
            #expect(httpsStatus(host, port: pebble.tlsPort, root: rootPath) == 200, "\(host)")
        }
        #expect(server.stderr.contains("obtained a certificate for *.wild.test"))
        // A name the config does not serve gets no certificate at all.
        #expect(httpsStatus("stranger.test", port: pebble.tlsPort, root: rootPath) == nil)
    }

    @Test("Renewal information (RFC 9773) is asked again when its Retry-After passes; a window the CA moves earlier renews inside it")
    func renewalInformation() throws {
        let pebble = try Pebble()
        let proxy = try RenewalInfoProxy(pebble)
        let config = acmeConfig(pebble, sites: sites([["ari.test"]]), storage: "storage", acme: #""challenges": ["http-01"]"#)
            .replacingOccurrences(of: pebble.directoryURL, with: proxy.directoryURL)
        let server = try ServerProcess(config: config)
        defer { server.stop() }
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for ari.test") }, "\(server.stderr)")
        #expect(proxy.asked == 1, "asked at issuance")
        let metaPath = server.directory + "/storage/certificates/localhost-\(proxy.port)-dir/ari.test/meta.json"
        let meta = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: metaPath))) as? [String: Any])
        let identifier = try #require(meta["renewalID"] as? String)
        let renewAt = try #require(meta["renewAt"] as? Int)
        let now = Int(Date().timeIntervalSince1970)
        #expect(renewAt > now + 29 * 86_400, "inside the window the CA suggested, 30 days out")
        #expect(abs((meta["renewalInfoAt"] as? Int ?? 0) - (now + 30)) <= 5, "asked again after the Retry-After of 30 s")
        // The CA moves this certificate's window to now; the renewed certificate gets a window far out.
        try proxy.setWindow(start: Date().addingTimeInterval(-60), end: Date(), retryAfter: 3_600, certificate: identifier)
        #expect(
            waitUntil(75) { server.stderr.contains("the CA's renewal information moved the renewal of ari.test") },
            "\(server.stderr.suffix(2000))"
        )
        #expect(proxy.asked >= 2)
        #expect(
            waitUntil(60) { server.stderr.components(separatedBy: "obtained a certificate for ari.test").count - 1 == 2 },
            "\(server.stderr.suffix(2000))"
        )
        #expect(server.stderr.contains("renewing the certificate for ari.test"))
        #expect(pebble.orderCount == 2, "one renewal, no storm: \(pebble.orderCount)")
    }

    @Test("On demand: the first handshake waits for its certificate and succeeds; a refused name and a failed order do not keep it waiting")
    func firstHandshakeWaits() throws {
        let pebble = try Pebble()
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let server = try onDemandServer(pebble, sites: [["*.wait.test"]], ask: asked)
        defer { server.stop() }
        let rootPath = try pebble.rootFile()
        // The very first handshake for each name: no certificate exists when it starts.
        for host in ["first.wait.test", "second.wait.test"] {
            let started = monotonicSeconds()
            #expect(httpsStatus(host, port: pebble.tlsPort, root: rootPath) == 200, "\(host): \(server.stderr.suffix(2000))")
            #expect(monotonicSeconds() - started < 5.5, "within the wait's bound")
        }
        #expect(pebble.orderCount == 2)
        // Refused by the decision: answered at once, nothing waited for.
        var started = monotonicSeconds()
        #expect(httpsStatus("stranger.example", port: pebble.tlsPort, root: rootPath) == nil)
        #expect(monotonicSeconds() - started < 1.5, "a refused name never waits")
        // The CA gone: the order fails, and the handshake waiting for it is told at once, not at the bound.
        pebble.stopCA()
        started = monotonicSeconds()
        #expect(httpsStatus("third.wait.test", port: pebble.tlsPort, root: rootPath) == nil)
        let waited = monotonicSeconds() - started
        #expect(waited < 4.5, "waited \(waited) s for an order that failed")
        #expect(server.stderr.contains("could not obtain a certificate for third.wait.test"), "\(server.stderr.suffix(2000))")
    }

    @Test("On demand: 50 new hosts get one order each, all served within a bound; an SNI outside the config orders nothing")
    func onDemand() throws {
        let pebble = try Pebble()
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let server = try onDemandServer(pebble, sites: [["*.customers.test"]], ask: asked)
        defer { server.stop() }
        let hosts = (0..<50).map { "shop\($0).customers.test" }
        let started = monotonicSeconds()
        // Three handshakes per host, the first ones before any certificate exists.
        for _ in 0..<3 {
            for host in hosts { touchHandshake(host, port: pebble.tlsPort) }
        }
        touchHandshake("stranger.example", port: pebble.tlsPort)
        #expect(
            waitUntil(90) { server.stderr.components(separatedBy: "obtained a certificate for").count - 1 == 50 },
            "\(server.stderr.suffix(3000))"
        )
        let rootPath = try pebble.rootFile()
        var served = 0
        for host in hosts where httpsStatus(host, port: pebble.tlsPort, root: rootPath) == 200 { served += 1 }
        #expect(served == 50)
        #expect(monotonicSeconds() - started < 90)
        #expect(pebble.orderCount == 50, "orders at pebble: \(pebble.orderCount)")
        #expect(!server.stderr.contains("certificate for stranger"))
    }

    @Test(
        "On demand: stranger SNIs in every spelling order nothing and write nothing; a served name in any spelling is one order, one entry"
    )
    func strangers() throws {
        let pebble = try Pebble()
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let server = try onDemandServer(pebble, sites: [["exact.test"], ["*.cust.test"]], ask: asked)
        defer { server.stop() }
        let strangers =
            Array(repeating: "stranger.test", count: 10) + [
                "stranger.test.", "STRANGER.TEST", "*.evil.cust.test", "*.cust.test", "*.exact.test", "exact.test..", "a..cust.test",
                "-x.cust.test", "x_y.cust.test",
            ]
        // Spaced over more than the 5 s a lookup is remembered, so the second handshake of each is a new decision.
        for (index, name) in strangers.enumerated() {
            handshakeNaming(name, port: pebble.tlsPort)
            if index == 9 { Thread.sleep(forTimeInterval: 5.5) }
        }
        handshakeNaming("stranger.test", port: pebble.tlsPort)
        Thread.sleep(forTimeInterval: 2)
        #expect(pebble.orderCount == 0, "orders at pebble: \(pebble.orderCount)")
        let certificates = server.directory + "/storage/certificates/" + pebble.storageFolder
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: certificates)) ?? []).isEmpty, "\(certificates)")
        #expect(!server.stderr.contains("certificate for stranger"), "\(server.stderr)")
        // Eleven failed handshakes for one name, one log line naming it.
        #expect(server.stderr.components(separatedBy: "TLS handshake for stranger.test from").count - 1 == 1, "\(server.stderr)")
        // The console and /status show certificates; reading them never starts an order (item 12).
        for path in ["/console", "/console?q=exact", "/console/host/exact.test", "/console/host/a.cust.test", "/status"] {
            let page = try runTool(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.adminPort)\(path)"])
            #expect(String(decoding: page.stdout, as: UTF8.self) == "200", "\(path)")
        }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(pebble.orderCount == 0, "a console GET ordered: \(server.stderr)")
        #expect(!server.stderr.contains("ordered a certificate"), "\(server.stderr)")
        // A served name, spelled three ways: one order, one storage entry in the normal spelling.
        for name in ["Exact.Test.", "EXACT.TEST", "exact.test"] { handshakeNaming(name, port: pebble.tlsPort) }
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for exact.test") }, "\(server.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: certificates).sorted() == ["exact.test"])
        #expect(pebble.orderCount == 1)
        #expect(httpsStatus("exact.test", port: pebble.tlsPort, root: try pebble.rootFile()) == 200)
    }

    @Test(
        "On demand: 1,000 made-up subdomains under a wildcard, ask allowing all: orders stay within ordersPerHour, the rest wait, counted; a config host's renewals are not delayed"
    )
    func floodWithinRateLimit() throws {
        // Certificates live 24 s: the config host is renewed every 16 s or so, during the flood.
        let pebble = try Pebble(validity: 24)
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let server = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["*.flood.test"], ["renewed.test"]]),
                storage: "storage",
                acme: #""onDemand": {"ask": "\#(asked.url)"}, "ordersPerHour": 5"#
            )
        )
        defer { server.stop() }
        func obtained(_ host: String) -> Int { server.stderr.components(separatedBy: "obtained a certificate for \(host) ").count - 1 }
        #expect(waitUntil(30) { obtained("renewed.test") == 1 }, "\(server.stderr)")
        let group = DispatchGroup()
        let port = pebble.tlsPort
        let floodStarted = monotonicSeconds()
        for part in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for index in stride(from: part, to: 1_000, by: 4) { handshakeNaming("n\(index).flood.test", port: port) }
            }
        }
        // While the flood waits behind the rate limits, the config host is renewed on time, twice: each new
        // certificate issued (its expiry less its 24 s) within a bound of the moment the one before planned
        // its renewal. Judged per renewal, not by wall time overall, so a slow machine delays both alike.
        #expect(waitUntil(120) { obtained("renewed.test") >= 3 }, "\(server.stderr.suffix(3000))")
        let renewalsDuringFlood = monotonicSeconds() - floodStarted
        let timeFormat = ISO8601DateFormatter()
        let plans = server.stderr.split(separator: "\n").filter { $0.contains("obtained a certificate for renewed.test ") }.compactMap {
            line -> (validUntil: Date, renewAround: Date)? in
            guard let until = line.range(of: "valid until "), let around = line.range(of: "renewing around ") else { return nil }
            guard let validUntil = timeFormat.date(from: String(line[until.upperBound...].prefix(20))),
                let renewAround = timeFormat.date(from: String(line[around.upperBound...].prefix(20)))
            else { return nil }
            return (validUntil, renewAround)
        }
        #expect(plans.count >= 3, "\(plans)")
        for (earlier, later) in zip(plans, plans.dropFirst()) {
            let lateness = later.validUntil.timeIntervalSince(earlier.renewAround) - 24
            #expect(lateness <= 15, "renewed \(lateness) s after its planned moment")
        }
        #expect(group.wait(timeout: .now() + 240) == .success)
        Thread.sleep(forTimeInterval: 3)
        let flooded = Set(
            server.stderr.split(separator: "\n").compactMap { line -> Substring? in
                guard let range = line.range(of: "obtained a certificate for n") else { return nil }
                return line[range.upperBound...].prefix { $0 != " " }
            }
        )
        // renewed.test's first order was one of the five.
        #expect(flooded.count == 4, "first orders within ordersPerHour: \(flooded.count) (renewals took \(renewalsDuringFlood) s)")
        #expect((metric(server, "aasa_acme_orders_queued") ?? 0) >= 990, "the rest wait their turn")
        #expect((metric(server, "aasa_acme_orders_rate_limited_total") ?? 0) >= 1)
        #expect((metric(server, "aasa_acme_orders_dropped_total") ?? -1) == 0)
        #expect(!server.stderr.contains("could not obtain a certificate for renewed.test"), "\(server.stderr.suffix(3000))")
    }

    @Test("On demand for a wildcard site without ask is refused by validation (acme.on-demand-wildcard); with ask it is valid")
    func wildcardNeedsAsk() throws {
        let pebble = try Pebble()
        try withTemporaryDirectory { directory in
            let config = directory + "/config.json"
            try write(
                acmeConfig(pebble, sites: sites([["*.cust.test"], ["exact.test"]]), storage: "storage", acme: #""onDemand": true"#),
                to: config
            )
            let refused = try runTool([TestPaths.serverExecutable, "validate", "--config", config])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("onDemand covers *.cust.test without onDemand.ask"), "\(refused.stderr)")
            #expect(refused.stderr.contains("[acme.on-demand-wildcard]"))
            #expect(!refused.stderr.contains("exact.test"), "an exact host is one name: no ask needed")
            let start = try runTool([TestPaths.serverExecutable, "serve", "--config", config], timeout: 10)
            #expect(start.status == 1 && start.stderr.contains("[acme.on-demand-wildcard]"), "\(start.stderr)")
            try write(
                acmeConfig(
                    pebble,
                    sites: sites([["*.cust.test"]]),
                    storage: "storage",
                    acme: #""onDemand": {"ask": "http://127.0.0.1:9/allowed"}"#
                ),
                to: config
            )
            let allowed = try runTool([TestPaths.serverExecutable, "validate", "--config", config])
            #expect(allowed.status == 0, "\(allowed.stderr)")
        }
    }

    @Test(
        "A CA outage is transient: with retryAfterFailure at 10 minutes, a host ordered while the CA is down is obtained seconds after it is back"
    )
    func transientOutage() throws {
        let pebble = try Pebble()
        pebble.stopCA()
        let server = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["outage.test"]]), storage: "storage", acme: #""retryAfterFailure": 600"#)
        )
        defer { server.stop() }
        #expect(
            waitUntil(30) { server.stderr.contains("could not obtain a certificate for outage.test: the CA did not answer") },
            "\(server.stderr)"
        )
        #expect(server.stderr.contains("next attempt in 5 s"), "\(server.stderr)")
        try pebble.start()
        let back = monotonicSeconds()
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for outage.test") }, "\(server.stderr.suffix(2000))")
        #expect(monotonicSeconds() - back < 60, "not the 10 minutes a refusal would wait")
    }

    @Test("certificates retry HOST: after a refusal backing off for 10 minutes, an order now, once the cause is fixed")
    func retryNow() throws {
        let pebble = try Pebble()
        // The CA's validation is sent elsewhere: the order is refused, not transient.
        try pebble.setAddress("retry.test", "127.0.0.9")
        let server = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["retry.test"]]), storage: "storage", acme: #""retryAfterFailure": 600"#)
        )
        defer { server.stop() }
        #expect(
            waitUntil(30) { server.stderr.contains("could not obtain a certificate for retry.test: the CA refused") },
            "\(server.stderr)"
        )
        #expect(server.stderr.contains("next attempt in 10 min"))
        #expect(metric(server, "aasa_acme_orders_backing_off") == 1)
        #expect(metric(server, "aasa_acme_orders_waiting_on_lock") == 0)
        try pebble.setAddress("retry.test", nil)
        let admin = "127.0.0.1:\(server.adminPort)"
        let retried = try runTool([TestPaths.serverExecutable, "certificates", "retry", "retry.test", "--admin", admin])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(String(decoding: retried.stdout, as: UTF8.self).contains("retry.test: an order for retry.test is"))
        #expect(waitUntil(30) { server.stderr.contains("obtained a certificate for retry.test") }, "\(server.stderr.suffix(2000))")
        // A name the config does not serve is refused by the same decision as any order.
        let stranger = try runTool([TestPaths.serverExecutable, "certificates", "retry", "stranger.test", "--admin", admin])
        #expect(
            stranger.status == 1 && stranger.stderr.contains("stranger.test: 404 stranger.test: the config serves no such host"),
            "\(stranger.stderr)"
        )
        let get = try runTool(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://\(admin)/certificates/retry/retry.test"])
        #expect(String(decoding: get.stdout, as: UTF8.self) == "405")
    }

    @Test("Switching CAs (staging to production): the new CA's certificate is ordered and served, never the old one's")
    func switchingCAs() throws {
        let staging = try Pebble()
        let production = try Pebble()
        try withTemporaryDirectory { storage in
            do {
                let server = try ServerProcess(config: acmeConfig(staging, sites: sites([["switch.test"]]), storage: storage))
                defer { server.stop() }
                #expect(waitUntil(30) { server.stderr.contains("obtained a certificate for switch.test") }, "\(server.stderr)")
            }
            // An earlier version's layout (no CA folder) is adopted by the CA the config names.
            let legacy = storage + "/certificates/switch.test"
            try FileManager.default.moveItem(atPath: storage + "/certificates/\(staging.storageFolder)/switch.test", toPath: legacy)
            do {
                let server = try ServerProcess(config: acmeConfig(staging, sites: sites([["switch.test"]]), storage: storage))
                defer { server.stop() }
                #expect(waitUntil(10) { server.stderr.contains("moved 1 stored certificate of an earlier version") }, "\(server.stderr)")
                #expect(httpsStatus("switch.test", port: staging.tlsPort, root: try staging.rootFile()) == 200)
                #expect(staging.orderCount == 1, "adopted, not ordered again")
            }
            let server = try ServerProcess(config: acmeConfig(production, sites: sites([["switch.test"]]), storage: storage))
            defer { server.stop() }
            #expect(waitUntil(30) { server.stderr.contains("obtained a certificate for switch.test") }, "\(server.stderr)")
            #expect(production.orderCount == 1)
            #expect(
                httpsStatus("switch.test", port: production.tlsPort, root: try production.rootFile()) == 200,
                "the production CA's certificate"
            )
            #expect(httpsStatus("switch.test", port: production.tlsPort, root: try staging.rootFile()) == nil, "never the staging one")
        }
    }

    @Test(
        "deploy/haproxy/acme-passthrough.cfg: two replicas behind HAProxy in TCP mode, one storage: one order per host, every host served",
        arguments: ["http-01", "tls-alpn-01"]
    )
    func replicasBehindTCPProxy(challenge: String) throws {
        let pebble = try Pebble()
        try withTemporaryDirectory { storage in
            let hosts = (0..<6).map { "lb\($0).test" }
            var replicas: [ServerProcess] = []
            var ports: [(plain: Int, tls: Int)] = []
            for _ in 0..<2 {
                let plain = try freeLoopbackPort()
                let tls = try freeLoopbackPort()
                let config = acmeConfig(
                    pebble,
                    sites: sites(hosts.map { [$0] }),
                    storage: storage,
                    acme: #""challenges": ["\#(challenge)"]"#,
                    plainPort: plain,
                    tlsPort: tls
                )
                .replacingOccurrences(
                    of: #""127.0.0.1:\#(plain)""#,
                    with: #"{"address": "127.0.0.1", "port": \#(plain), "proxyProtocol": true}"#
                )
                .replacingOccurrences(of: #""tls": true}"#, with: #""tls": true, "proxyProtocol": true}"#)
                .replacingOccurrences(of: #""admin": "127.0.0.1:0","#, with: #""admin": "127.0.0.1:0", "healthPath": "/healthz","#)
                replicas.append(try ServerProcess(config: config))
                ports.append((plain, tls))
            }
            defer { for replica in replicas { replica.stop() } }
            let haproxy = try HAProxyProcess(
                config: "acme-passthrough.cfg",
                environment: [
                    "HTTP_BIND": "127.0.0.1:\(pebble.httpPort)", "HTTPS_BIND": "127.0.0.1:\(pebble.tlsPort)", "MAXCONN": "1000",
                    "REPLICA_A_HTTP": "127.0.0.1:\(ports[0].plain)", "REPLICA_A_HTTPS": "127.0.0.1:\(ports[0].tls)",
                    "REPLICA_A_HEALTH_PORT": "\(ports[0].plain)", "REPLICA_B_HTTP": "127.0.0.1:\(ports[1].plain)",
                    "REPLICA_B_HTTPS": "127.0.0.1:\(ports[1].tls)", "REPLICA_B_HEALTH_PORT": "\(ports[1].plain)",
                ]
            )
            defer { withExtendedLifetime(haproxy) {} }
            func obtained() -> Int {
                replicas.map { $0.stderr.components(separatedBy: "obtained a certificate for").count - 1 }.reduce(0, +)
            }
            #expect(waitUntil(90) { obtained() == hosts.count }, "\(replicas.map { $0.stderr.suffix(1500) })")
            #expect(pebble.orderCount == hosts.count, "one order per host: \(pebble.orderCount)")
            let root = try pebble.rootFile()
            // Round robin: two requests per host reach both replicas, each serving what either stored.
            for host in hosts {
                for _ in 0..<2 { #expect(httpsStatus(host, port: pebble.tlsPort, root: root) == 200, "\(host)") }
            }
        }
    }

    @Test(
        "hosts \"none\" with on-demand customers beside a wildcard of our own: the wildcard is obtained at start by DNS-01, customers at their first handshake"
    )
    func customersBesideOwnWildcard() throws {
        let pebble = try Pebble()
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let hook = try pebble.writeDNSHook()
        let server = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["*.links.test"], ["customer.test"]]),
                storage: "storage",
                acme: #""hosts": "none", "onDemand": {"ask": "\#(asked.url)"}, "dnsHook": "\#(hook)""#
            )
        )
        defer { server.stop() }
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for *.links.test") }, "\(server.stderr)")
        #expect(pebble.orderCount == 1, "customer.test waits for its first handshake")
        touchHandshake("customer.test", port: pebble.tlsPort)
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for customer.test") }, "\(server.stderr)")
        let root = try pebble.rootFile()
        #expect(httpsStatus("go.links.test", port: pebble.tlsPort, root: root) == 200)
        #expect(httpsStatus("customer.test", port: pebble.tlsPort, root: root) == 200)
    }

    @Test("On demand with an ask URL that refuses: no order")
    func askRefuses() throws {
        let pebble = try Pebble()
        // The asked service: another aasa-server whose /nope answers 404 (its /healthz would allow).
        let asked = try ServerProcess(
            config: testConfig(server: #"{"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "healthPath": "/healthz"}"#)
        )
        defer { asked.stop() }
        let server = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["*.customers.test"]]),
                storage: "storage",
                acme: #""hosts": "none", "onDemand": {"ask": "http://127.0.0.1:\#(asked.port)/nope"}"#
            )
        )
        defer { server.stop() }
        touchHandshake("refused.customers.test", port: pebble.tlsPort)
        #expect(waitUntil(20) { server.stderr.contains("the ask URL refused refused.customers.test (404)") }, "\(server.stderr)")
        #expect(pebble.orderCount == 0)
    }

    @Test("Renewal of short-lived certificates while requests keep coming: no request fails")
    func renewalUnderLoad() throws {
        let pebble = try Pebble(validity: 24)
        let server = try ServerProcess(config: acmeConfig(pebble, sites: sites([["short.test"]]), storage: "storage"))
        defer { server.stop() }
        #expect(waitUntil(30) { server.stderr.contains("obtained a certificate for short.test") }, "\(server.stderr)")
        let rootPath = try pebble.rootFile()
        var failures = 0
        var requests = 0
        let deadline = monotonicSeconds() + 40
        while monotonicSeconds() < deadline && server.stderr.components(separatedBy: "obtained a certificate for short.test").count < 3 {
            requests += 1
            if httpsStatus("short.test", port: pebble.tlsPort, root: rootPath) != 200 { failures += 1 }
        }
        #expect(server.stderr.contains("renewing the certificate for short.test"))
        #expect(server.stderr.components(separatedBy: "obtained a certificate for short.test").count >= 3, "\(server.stderr)")
        #expect(requests > 20)
        #expect(failures == 0, "\(failures) of \(requests) requests failed")
    }

    @Test("Faults: bad nonces, the CA stopped mid-order, a failing challenge, read-only storage — the server keeps serving and recovers")
    func faults() throws {
        let pebble = try Pebble(environment: ["PEBBLE_WFE_NONCEREJECT": "40"])
        // A DNS hook that says when it starts and takes two seconds: a window in the middle of an order.
        let marker = pebble.directory + "/hook-started"
        let hook = pebble.directory + "/slow-hook.sh"
        try Data("#!/bin/sh\nif [ \"$1\" = present ]; then touch \(marker); sleep 2; fi\nexec \(try pebble.writeDNSHook()) \"$@\"\n".utf8)
            .write(to: URL(fileURLWithPath: hook))
        chmod(hook, 0o755)
        let withHook = #""dnsHook": "\#(hook)""#
        let server = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["one.test"], ["two.test"]]), storage: "storage", acme: withHook)
        )
        #expect(waitUntil(60) { server.stderr.components(separatedBy: "obtained a certificate for").count - 1 == 2 }, "\(server.stderr)")
        // Pebble rejected some nonces; each was retried with the fresh one its answer carried.
        #expect((metric(server, "aasa_acme_bad_nonces_total") ?? 0) > 0)
        #expect(metric(server, "aasa_acme_orders_succeeded_total") == 2)
        let expiry = metric(server, #"aasa_certificate_expiry_timestamp_seconds{host="one.test"}"#) ?? 0
        #expect(expiry > Int(Date().timeIntervalSince1970) + 86_400)

        // The CA goes away in the middle of an order (while the DNS hook publishes the record): that order
        // fails; the other hosts are still served, and so is plain HTTP.
        let config = server.directory + "/config.json"
        /// The config with these sites (same CA, storage and hook), then a reload.
        func reconfigure(sites hosts: [[String]]) throws {
            try Data(acmeConfig(pebble, sites: sites(hosts), storage: "storage", acme: withHook).utf8).write(
                to: URL(fileURLWithPath: config)
            )
            server.signal(SIGHUP)
        }
        try reconfigure(sites: [["one.test"], ["two.test"], ["*.three.test"]])
        #expect(waitUntil(30) { FileManager.default.fileExists(atPath: marker) }, "\(server.stderr)")
        pebble.stopCA()
        #expect(
            waitUntil(30) { server.stderr.contains("could not obtain a certificate for *.three.test: the CA did not answer") },
            "\(server.stderr)"
        )
        var rootPath = try? pebble.rootFile()
        #expect(rootPath == nil)
        let plain = try runTool([
            "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: one.test",
            "http://127.0.0.1:\(pebble.httpPort)/.well-known/apple-app-site-association",
        ])
        #expect(String(decoding: plain.stdout, as: UTF8.self) == "200")
        let served = try runTool([
            "curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", "--resolve", "one.test:\(pebble.tlsPort):127.0.0.1",
            "https://one.test:\(pebble.tlsPort)/.well-known/apple-app-site-association",
        ])
        #expect(String(decoding: served.stdout, as: UTF8.self) == "200")
        // It comes back (with no memory of the account): the host is obtained on a later attempt.
        try pebble.start()
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for *.three.test") }, "\(server.stderr.suffix(3000))")
        rootPath = try pebble.rootFile()
        #expect(httpsStatus("www.three.test", port: pebble.tlsPort, root: rootPath!) == 200)

        // A challenge that fails: the mock DNS sends the CA elsewhere. Logged per attempt, then fixed.
        try pebble.setAddress("four.test", "127.0.0.9")
        try reconfigure(sites: [["one.test"], ["two.test"], ["*.three.test"], ["four.test"]])
        #expect(
            waitUntil(30) { server.stderr.contains("could not obtain a certificate for four.test: the CA refused") },
            "\(server.stderr.suffix(3000))"
        )
        let pending = try runTool([TestPaths.serverExecutable, "certificates", "--config", config, "--json"])
        let report = String(decoding: pending.stdout, as: UTF8.self)
        #expect(pending.status == 1)
        #expect(report.contains(#""host": "four.test",\#n      "source": "pending""#), "\(report)")
        #expect(report.contains("the CA refused"), "\(report)")
        try pebble.setAddress("four.test", nil)
        #expect(waitUntil(60) { server.stderr.contains("obtained a certificate for four.test") }, "\(server.stderr.suffix(3000))")

        // Read-only storage (immutable directory; root ignores permissions): the order fails, nothing is lost.
        let certificates = server.directory + "/storage/certificates/" + pebble.storageFolder
        let immutable = try runTool(["chattr", "+i", certificates])
        if immutable.status == 0 {
            defer { _ = try? runTool(["chattr", "-i", certificates]) }
            try reconfigure(sites: [["one.test"], ["two.test"], ["*.three.test"], ["four.test"], ["five.test"]])
            #expect(
                waitUntil(30) {
                    server.stderr.contains("could not obtain a certificate for five.test: the certificate was issued but cannot be stored")
                },
                "\(server.stderr.suffix(3000))"
            )
            let ordered = pebble.orderCount
            #expect(httpsStatus("www.three.test", port: pebble.tlsPort, root: rootPath!) == 200)
            #expect(httpsStatus("five.test", port: pebble.tlsPort, root: rootPath!) == 200, "served from memory meanwhile")
            _ = try runTool(["chattr", "-i", certificates])
            #expect(
                waitUntil(60) { server.stderr.contains("stored the certificate for five.test that was kept in memory (no new order)") },
                "\(server.stderr.suffix(3000))"
            )
            #expect(pebble.orderCount == ordered, "stored, not ordered again")
        } else {
            print("skipping the read-only storage check: chattr is not available here (\(immutable.stderr))")
        }
        server.stop()
    }

    @Test("A truncated certificate in storage is reported, never served, and obtained again")
    func damagedStorage() throws {
        let pebble = try Pebble()
        let first = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["damaged.test"]]), storage: "/tmp/aasa-acme-damaged-\(getpid())")
        )
        defer { try? FileManager.default.removeItem(atPath: "/tmp/aasa-acme-damaged-\(getpid())") }
        #expect(waitUntil(30) { first.stderr.contains("obtained a certificate for damaged.test") }, "\(first.stderr)")
        first.stop()
        let path = "/tmp/aasa-acme-damaged-\(getpid())/certificates/\(pebble.storageFolder)/damaged.test/certificate.pem"
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Cut in the middle of the chain, with the renewal time still ahead: only the damage can cause an order.
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: path))
        let orders = pebble.orderCount
        let second = try ServerProcess(
            config: acmeConfig(pebble, sites: sites([["damaged.test"]]), storage: "/tmp/aasa-acme-damaged-\(getpid())")
        )
        defer { second.stop() }
        touchHandshake("damaged.test", port: pebble.tlsPort)
        #expect(waitUntil(30) { second.stderr.contains("the stored certificate for damaged.test is damaged") }, "\(second.stderr)")
        #expect(waitUntil(30) { second.stderr.contains("obtained a certificate for damaged.test") }, "\(second.stderr)")
        #expect(pebble.orderCount == orders + 1)
        #expect(httpsStatus("damaged.test", port: pebble.tlsPort, root: try pebble.rootFile()) == 200)
    }

    @Test("Two servers sharing one storage directory, asked for the same 20 new hosts at once: one order per host, both serve all")
    func sharedStorage() throws {
        let pebble = try Pebble()
        let storage = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-acme-shared-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: storage) }
        let asked = try AllowingAsk()
        defer { asked.server.stop() }
        let onDemand = #""hosts": "none", "onDemand": {"ask": "\#(asked.url)"}"#
        // Only the first listens where Pebble validates: it answers the other's HTTP-01 challenges from storage.
        let first = try ServerProcess(config: acmeConfig(pebble, sites: sites([["*.shared.test"]]), storage: storage, acme: onDemand))
        defer { first.stop() }
        let secondTLS = try freeLoopbackPort()
        let second = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["*.shared.test"]]),
                storage: storage,
                acme: onDemand + #", "challenges": ["http-01"]"#,
                plainPort: try freeLoopbackPort(),
                tlsPort: secondTLS
            )
        )
        defer { second.stop() }
        let hosts = (0..<20).map { "tenant\($0).shared.test" }
        let group = DispatchGroup()
        for (index, port) in [pebble.tlsPort, secondTLS].enumerated() {
            DispatchQueue.global().async(group: group) {
                for host in index == 0 ? hosts : hosts.reversed() { touchHandshake(host, port: port) }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let rootPath = try pebble.rootFile()
        #expect(
            waitUntil(120) {
                hosts.allSatisfy {
                    httpsStatus($0, port: pebble.tlsPort, root: rootPath) == 200 && httpsStatus($0, port: secondTLS, root: rootPath) == 200
                }
            },
            "first: \(first.stderr.suffix(2000)) second: \(second.stderr.suffix(2000))"
        )
        #expect(pebble.orderCount == 20, "orders at pebble: \(pebble.orderCount)")
        let ordered = (first.stderr + second.stderr).components(separatedBy: "ordered a certificate for").count - 1
        #expect(ordered == 20)
    }

    @Test("External Account Binding: a CA that requires it registers the account with the key id and HMAC key; RSA certificate keys")
    func externalAccountBinding() throws {
        let hmacKey = "zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W"
        let pebble = try Pebble(externalAccountKeys: ["kid-aasa": hmacKey])
        let refused = try ServerProcess(config: acmeConfig(pebble, sites: sites([["eab.test"]]), storage: "storage"))
        #expect(waitUntil(20) { refused.stderr.contains("this CA requires External Account Binding") }, "\(refused.stderr)")
        refused.stop()
        let server = try ServerProcess(
            config: acmeConfig(
                pebble,
                sites: sites([["eab.test"]]),
                storage: "storage",
                acme: #""externalAccount": {"keyId": "kid-aasa", "hmacKeyFile": "eab.key"}, "keyType": "rsa-2048""#
            ),
            files: ["eab.key": hmacKey + "\n"]
        )
        defer { server.stop() }
        #expect(waitUntil(30) { server.stderr.contains("obtained a certificate for eab.test") }, "\(server.stderr)")
        // keyType rsa-2048: the certificate's key is RSA.
        let text = try runTool([
            "openssl", "x509", "-noout", "-text", "-in",
            server.directory + "/storage/certificates/\(pebble.storageFolder)/eab.test/certificate.pem",
        ])
        #expect(String(decoding: text.stdout, as: UTF8.self).contains("rsaEncryption"))
    }
}
