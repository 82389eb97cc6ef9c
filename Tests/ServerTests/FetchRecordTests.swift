import Foundation
import Glibc
import TestSupport
import Testing

/// The fetch record end to end: the real binary answers fetchers by User-Agent, records which version
/// each got, keeps the records in its state directory across restarts, and `status` answers from a
/// running server or from state directories (several replicas' merged).
@Suite("Fetch records: who fetched which version, and when", .serialized)
struct FetchRecordTests {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"
    static let wellKnown = "/.well-known/apple-app-site-association"
    static let cdn = "AASA-Bot/1.0.0"
    static let device = "swcd (unknown version) CFNetwork/1496.0.7 Darwin/23.5.0"
    static let google = "GoogleAssociationService"

    /// `server`: extra members of the server section. By default loopback counts as Apple's and Google's
    /// network, so the recording itself can be tested from 127.0.0.1.
    static func config(
        state: String,
        productPath: String = "/product/*",
        server: String = #""fetcherNetworks": {"apple": ["127.0.0.0/8"], "google": ["127.0.0.0/8"]}"#,
        listen: String = #"["127.0.0.1:0"]"#
    ) -> String {
        #"""
        {"version": 1,
         "apps": {"shop": {"apple": "ABCDE12345.com.example.shop", "android": {"package": "com.example.shop", "sha256": ["\#(fingerprint)"]}}},
         "sites": [{"hosts": ["example.com", "www.example.com"], "applinks": {"details": [{"apps": ["shop"], "components": [{"/": "\#(productPath)"}]}]},
                    "android": ["shop"]},
                   {"hosts": ["other.example.org"], "webcredentials": {"apps": ["shop"]}}],
         "server": {"listen": \#(listen), "admin": "127.0.0.1:0", "accessLog": false, "stateDirectory": "\#(state)",
                    "reload": {"watch": false}\#(server.isEmpty ? "" : ", " + server)}}
        """#
    }

    /// A PROXY protocol v2 header from `client` (IPv4) to 127.0.0.1:443.
    static func proxyHeader(_ client: [UInt8]) -> [UInt8] {
        [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x21, 0x11, 0x00, 0x0C] + client
            + [127, 0, 0, 1, 0x9C, 0x40, 0x01, 0xBB]
    }

    func fetch(_ port: Int, proxiedFrom client: [UInt8]? = nil, forwardedFor: String? = nil, userAgent: String = cdn) throws -> Int? {
        let connection = try RawClient(port: port)
        let path = userAgent == Self.google ? "/.well-known/assetlinks.json" : Self.wellKnown
        var request = "GET \(path) HTTP/1.1\r\nHost: example.com\r\nUser-Agent: \(userAgent)\r\n"
        if let forwardedFor { request += "X-Forwarded-For: \(forwardedFor)\r\n" }
        connection.send((client.map(Self.proxyHeader) ?? []) + Array((request + "Connection: close\r\n\r\n").utf8))
        return connection.readResponses(1).first?.status
    }

    func fetches(_ admin: [String]) -> [[String: Any]] {
        ((try? statusJSON(admin))?["example.com"]?["fetches"] as? [[String: Any]]) ?? []
    }

    @Test(
        "only Apple's network is Apple's CDN: AASA-Bot from loopback is unverifiable, from elsewhere a claim, from 17.x (PROXY v2) Apple's"
    )
    func appleNetworkOnly() throws {
        try withTemporaryDirectory { state in
            let server = try ServerProcess(
                config: Self.config(
                    state: state,
                    server: "",
                    listen: #"["127.0.0.1:0", {"address": "127.0.0.1", "port": 0, "proxyProtocol": true}]"#
                )
            )
            defer { server.stop() }
            let admin = ["--admin", "127.0.0.1:\(server.adminPort)"]
            #expect(try fetch(server.port) == 200)
            #expect(try fetch(server.port, userAgent: Self.google) == 200)
            #expect(waitUntil(5) { fetches(admin).count == 2 })
            var words = try status(admin + ["example.com"])
            #expect(!words.out.contains("Apple's CDN last fetched"), "\(words.out)")
            #expect(words.out.contains("Apple's CDN has not fetched apple-app-site-association yet"), "\(words.out)")
            #expect(words.out.contains("a client claiming to be Apple's CDN fetched apple-app-site-association at "))
            #expect(words.out.contains("from 127.0.0.1, an address of this machine or a private network"))
            #expect(words.out.contains(#"set "proxyProtocol": true on the listener"#), "it says which setting makes it checkable")
            #expect(fetches(admin).map { $0["origin"] as? String } == ["unverifiable", "unverifiable"])

            // Through the PROXY listener: a public address outside 17/8 is a claim, 17.x is Apple's CDN.
            #expect(try fetch(server.proxyPort, proxiedFrom: [203, 0, 113, 5]) == 200)
            #expect(waitUntil(5) { fetches(admin).count == 3 })
            words = try status(admin + ["example.com"])
            #expect(words.out.contains("from 203.0.113.5, outside Apple's network"), "\(words.out)")
            #expect(!words.out.contains("Apple's CDN last fetched"))
            #expect(try fetch(server.proxyPort, proxiedFrom: [17, 58, 1, 2]) == 200)
            #expect(waitUntil(5) { fetches(admin).count == 4 })
            words = try status(admin + ["example.com"])
            #expect(words.out.contains("Apple's CDN last fetched at "), "\(words.out)")
            #expect(words.out.contains("got the current version"))
            #expect(!words.out.contains("a client claiming to be Apple's CDN"), "the claims are older than Apple's fetch")
            #expect(fetches(admin).last?["client"] as? String == "17.58.1.2")
            let metrics = String(
                decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(server.adminPort)/metrics"]).stdout,
                as: UTF8.self
            )
            #expect(metrics.contains(#"aasa_bot_fetches_total{host="example.com"} 1"#), "\(metrics)")
            #expect(metrics.contains("aasa_bot_verified_fetches_total 1"))
            #expect(metrics.contains("aasa_bot_unverified_fetches_total 2"))
            #expect(metrics.contains("aasa_google_unverified_fetches_total 1"))

            // check sends AASA-Bot too, and marks its requests: nothing is recorded for it.
            let checked = try runTool([
                TestPaths.serverExecutable, "check", "--connect", "127.0.0.1:\(server.port)", "http://example.com",
            ])
            #expect(!checked.stdout.isEmpty)
            Thread.sleep(forTimeInterval: 1.5)
            #expect(fetches(admin).count == 4, "check is not a fetcher")
        }
    }

    /// The well-known file fetched once for each host, as Apple's CDN, on one connection.
    static func fetchAsCDN(_ client: RawClient, _ hosts: [String]) {
        for host in hosts {
            client.send("GET \(wellKnown) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: \(cdn)\r\n\r\n")
            #expect(client.readResponses(1).first?.status == 200, "\(host)")
        }
    }

    @Test("under a wildcard site the records keep at most fetchHosts hosts; the rest are dropped, counted and logged")
    func boundedUnderWildcard() throws {
        try withTemporaryDirectory { state in
            let config = #"""
                {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                 "sites": [{"hosts": ["*.tenant.example.com"], "webcredentials": {"apps": ["shop"]}}],
                 "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false, "stateDirectory": "\#(state)",
                            "fetchHosts": 50, "fetcherNetworks": {"apple": ["127.0.0.0/8"]}}}
                """#
            let server = try ServerProcess(config: config)
            defer { server.stop() }
            Self.fetchAsCDN(try RawClient(port: server.port), (0..<200).map { "n\($0).tenant.example.com" })
            #expect(
                waitUntil(5) { (metric(server, #"aasa_fetch_record_hosts_dropped_total{bound="fetchHosts"}"#) ?? 0) >= 150 },
                "\(server.stderr)"
            )
            let hosts = try statusJSON(["--admin", "127.0.0.1:\(server.adminPort)"])
            #expect(hosts.count <= 50 && hosts.count >= 40, "\(hosts.count)")
            #expect(hosts["n199.tenant.example.com"] != nil, "the newest are kept")
            // The count is in the ledger before the line is written: wait for the line.
            #expect(waitUntil(5) { server.stderr.contains("dropped so far to keep at most server.fetchHosts = 50") }, "\(server.stderr)")
        }
    }

    @Test(
        "a flood of subdomains under one wildcard stays within fetchHostsPerWildcard; the other sites' records stay, also after a restart"
    )
    func boundedPerWildcard() throws {
        try withTemporaryDirectory { state in
            let config = #"""
                {"version": 1, "apps": {"shop": "ABCDE12345.com.example.shop"},
                 "sites": [{"hosts": ["*.flood.example.com"], "webcredentials": {"apps": ["shop"]}},
                           {"hosts": ["*.quiet.example.com", "shop.example.com"], "webcredentials": {"apps": ["shop"]}}],
                 "server": {"listen": ["127.0.0.1:0"], "admin": "127.0.0.1:0", "accessLog": false, "stateDirectory": "\#(state)",
                            "fetchHosts": 1000, "fetchHostsPerWildcard": 30, "fetcherNetworks": {"apple": ["127.0.0.0/8"]}}}
                """#
            var server = try ServerProcess(config: config)
            defer { server.stop() }
            let client = try RawClient(port: server.port)
            // The other sites are fetched first: the oldest records, which an overall bound would drop first.
            Self.fetchAsCDN(client, ["shop.example.com"] + (0..<20).map { "q\($0).quiet.example.com" })
            Thread.sleep(forTimeInterval: 1.2)
            Self.fetchAsCDN(client, (0..<300).map { "f\($0).flood.example.com" })
            #expect(
                waitUntil(5) { (metric(server, #"aasa_fetch_record_hosts_dropped_total{bound="fetchHostsPerWildcard"}"#) ?? 0) >= 270 },
                "\(server.stderr)"
            )
            #expect(metric(server, #"aasa_fetch_record_hosts_dropped_total{bound="fetchHosts"}"#) == 0)
            var hosts = try statusJSON(["--admin", "127.0.0.1:\(server.adminPort)"])
            let flood = hosts.keys.filter { $0.hasSuffix(".flood.example.com") }
            #expect(flood.count <= 30 && flood.count >= 20, "\(flood.count)")
            #expect(hosts["f299.flood.example.com"] != nil, "the newest are kept")
            #expect(
                hosts["shop.example.com"] != nil && (0..<20).allSatisfy { hosts["q\($0).quiet.example.com"] != nil },
                "\(hosts.keys.sorted())"
            )
            #expect(
                waitUntil(5) { server.stderr.contains("to keep at most server.fetchHostsPerWildcard = 30 under one wildcard site") },
                "\(server.stderr)"
            )
            // Read back from the state directory with a smaller bound: the files do not say which wildcard
            // served a host, the config in force does.
            server.stop()
            server = try ServerProcess(
                config: config.replacingOccurrences(of: #""fetchHostsPerWildcard": 30"#, with: #""fetchHostsPerWildcard": 10"#)
            )
            hosts = try statusJSON(["--admin", "127.0.0.1:\(server.adminPort)"])
            #expect(hosts.keys.filter { $0.hasSuffix(".flood.example.com") }.count == 10, "\(hosts.keys.sorted())")
            #expect(hosts.keys.filter { $0.hasSuffix(".quiet.example.com") }.count == 10, "\(hosts.keys.sorted())")
            #expect(hosts["shop.example.com"] != nil, "an exact host is under no wildcard's bound")
        }
    }

    @Test("the state directory folds the files of replicas gone for an hour into a running one's, keeps live ones, loses no record")
    func compaction() throws {
        try withTemporaryDirectory { state in
            let line =
                #"{"type":"fetch","time":1796148392977,"host":"example.com","fetcher":"apple-device","path":"/.well-known/apple-app-site-association","status":200,"bytes":335,"version":"v-gone","client":"192.0.2.1","origin":"device"}"#
            let liveLine = line.replacingOccurrences(of: "v-gone", with: "v-live").replacingOccurrences(
                of: "1796148392977",
                with: "1796148393977"
            )
            try (line + "\n").write(toFile: state + "/fetches-old-pod-1.jsonl", atomically: true, encoding: .utf8)
            try (line + "\n").write(toFile: state + "/fetches-old-pod-1.jsonl.1", atomically: true, encoding: .utf8)
            try "".write(toFile: state + "/fetches-old-pod-1.alive", atomically: true, encoding: .utf8)
            try (liveLine + "\n").write(toFile: state + "/fetches-live-pod-2.jsonl", atomically: true, encoding: .utf8)
            try "".write(toFile: state + "/fetches-live-pod-2.alive", atomically: true, encoding: .utf8)
            let twoHoursAgo = time(nil) - 7_200
            for name in ["fetches-old-pod-1.jsonl", "fetches-old-pod-1.jsonl.1", "fetches-old-pod-1.alive"] {
                var times = [timespec(tv_sec: twoHoursAgo, tv_nsec: 0), timespec(tv_sec: twoHoursAgo, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, state + "/" + name, &times, 0) == 0)
            }
            let server = try ServerProcess(config: Self.config(state: state))
            defer { server.stop() }
            #expect(
                server.stderr.contains("fetch records: merged the records of 1 replica gone for over an hour (old-pod-1)"),
                "\(server.stderr)"
            )
            let names = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
            #expect(!names.contains { $0.hasPrefix("fetches-old-pod-1") }, "\(names)")
            #expect(names.contains("fetches-live-pod-2.jsonl") && names.contains("fetches-live-pod-2.alive"))
            let own = try #require(names.first { $0.hasSuffix(".jsonl") && $0 != "fetches-live-pod-2.jsonl" })
            #expect(
                try String(contentsOfFile: state + "/" + own, encoding: .utf8).contains("v-gone"),
                "the gone replica's records moved here"
            )
            #expect(names.contains(String(own.dropLast(".jsonl".count)) + ".alive"))
            let words = try statusJSON(["--state", state])
            let fetches = (words["example.com"]?["fetches"] as? [[String: Any]])?.compactMap { $0["version"] as? String } ?? []
            #expect(fetches.contains("v-gone") && fetches.contains("v-live"), "\(fetches)")
        }
    }

    @Test("status HOST tells a host the config does not serve from one no fetcher has asked for yet")
    func servedOrNot() throws {
        try withTemporaryDirectory { state in
            let server = try ServerProcess(config: Self.config(state: state))
            defer { server.stop() }
            let admin = ["--admin", "127.0.0.1:\(server.adminPort)"]
            let words = try status(admin + ["www.example.com", "nobody.example.net"])
            #expect(words.status == 0, "\(words.err)")
            let sections = words.out.components(separatedBy: "nobody.example.net\n")
            #expect(sections.count == 2)
            #expect(sections[0].contains("served, and no known fetcher has asked for it yet"), "\(words.out)")
            #expect(sections[0].contains("apple-app-site-association: version "), "the version served now")
            #expect(sections[1].contains("the config does not serve nobody.example.net"), "\(words.out)")
            #expect(!sections[1].contains("has not fetched"))
            let json = try status(admin + ["nobody.example.net", "--json"])
            #expect(json.out.contains(#""served": false"#), "\(json.out)")
        }
    }

    @Test("behind a trusted HTTP proxy the address it appended decides, never the client's own X-Forwarded-For entries")
    func forwardedFor() throws {
        try withTemporaryDirectory { state in
            let server = try ServerProcess(config: Self.config(state: state, server: #""trustForwardedHeaders": true"#))
            defer { server.stop() }
            let admin = ["--admin", "127.0.0.1:\(server.adminPort)"]
            #expect(try fetch(server.port, forwardedFor: "17.1.1.1, 198.51.100.20") == 200)
            #expect(waitUntil(5) { fetches(admin).count == 1 })
            #expect(fetches(admin).first?["origin"] as? String == "claimed")
            #expect(fetches(admin).first?["client"] as? String == "198.51.100.20")
            #expect(try fetch(server.port, forwardedFor: "198.51.100.20, 17.2.3.4") == 200)
            #expect(waitUntil(5) { fetches(admin).count == 2 })
            #expect(fetches(admin).last?["origin"] as? String == "verified")
        }
    }

    func get(_ server: ServerProcess, _ path: String, host: String = "example.com", userAgent: String) throws -> HTTPResponse {
        let client = try RawClient(port: server.port)
        client.send("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: \(userAgent)\r\nConnection: close\r\n\r\n")
        return try #require(client.readResponses(1).first)
    }

    func version(_ response: HTTPResponse) -> String {
        (response.header("ETag") ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\"")).replacingOccurrences(of: "-gz", with: "")
    }

    func status(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let result = try runTool([TestPaths.serverExecutable, "status"] + arguments, timeout: 10)
        return (result.status, String(decoding: result.stdout, as: UTF8.self), result.stderr)
    }

    func statusJSON(_ arguments: [String]) throws -> [String: [String: Any]] {
        let result = try status(arguments + ["--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any]
        let hosts = try #require(object?["hosts"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: hosts.map { ($0["host"] as? String ?? "", $0) })
    }

    func reload(_ server: ServerProcess) throws {
        let answer = try runTool(["curl", "-s", "-X", "POST", "http://127.0.0.1:\(server.adminPort)/reload"])
        #expect(
            String(decoding: answer.stdout, as: UTF8.self).contains("\"reloaded\""),
            "\(String(decoding: answer.stdout, as: UTF8.self))"
        )
    }

    @Test("each fetcher's fetch is recorded with the version it got, across a reload that changes the document")
    func versionsAcrossReload() throws {
        try withTemporaryDirectory { state in
            let server = try ServerProcess(config: Self.config(state: state))
            defer { server.stop() }
            let admin = ["--admin", "127.0.0.1:\(server.adminPort)"]
            let before = try get(server, Self.wellKnown, userAgent: Self.cdn)
            #expect(before.status == 200)
            let assetLinks = try get(server, "/.well-known/assetlinks.json", userAgent: Self.google)
            #expect(assetLinks.status == 200)
            // A browser, and a fetcher asking for a host nobody serves, are not recorded.
            _ = try get(server, Self.wellKnown, userAgent: "Mozilla/5.0")
            _ = try get(server, Self.wellKnown, host: "unknown.example.net", userAgent: Self.cdn)
            #expect(waitUntil(5) { ((try? statusJSON(admin))?["example.com"]?["fetches"] as? [Any])?.count == 2 })

            try Self.config(state: state, productPath: "/item/*").write(
                toFile: server.directory + "/config.json",
                atomically: true,
                encoding: .utf8
            )
            try reload(server)
            let after = try get(server, "/apple-app-site-association", userAgent: Self.device)
            #expect(version(after) != version(before))

            #expect(waitUntil(5) { ((try? statusJSON(admin))?["example.com"]?["fetches"] as? [Any])?.count == 3 })
            let hosts = try statusJSON(admin)
            #expect(Set(hosts.keys) == ["example.com"], "only fetched hosts the config serves are recorded")
            let host = try #require(hosts["example.com"])
            let fetchers = try #require(host["fetchers"] as? [String: [String: Any]])
            let cdnLast = try #require(fetchers["apple-cdn"]?["last"] as? [String: Any])
            #expect(cdnLast["version"] as? String == version(before))
            #expect(fetchers["apple-cdn"]?["gotCurrent"] as? Bool == false)
            #expect((fetchers["apple-device"]?["last"] as? [String: Any])?["version"] as? String == version(after))
            #expect(fetchers["apple-device"]?["gotCurrent"] as? Bool == true)
            #expect((fetchers["google-verifier"]?["last"] as? [String: Any])?["version"] as? String == version(assetLinks))
            #expect(fetchers["google-verifier"]?["gotCurrent"] as? Bool == true, "the reload did not change assetlinks.json")
            let versions = try #require(host["versions"] as? [[String: Any]])
            #expect(
                versions.filter { $0["document"] as? String == "aasa" }.compactMap { $0["version"] as? String } == [
                    version(before), version(after),
                ]
            )
            let fetches = try #require(host["fetches"] as? [[String: Any]])
            #expect(fetches.map { $0["status"] as? Int } == [200, 200, 200])
            #expect(fetches.allSatisfy { $0["client"] as? String == "127.0.0.1" })
            #expect(fetches.last?["path"] as? String == "/apple-app-site-association")

            // In words: which fetcher has the current version, and what explains a stale CDN.
            let words = try status(admin + ["example.com"])
            #expect(words.status == 0, "\(words.err)")
            #expect(words.out.contains("Apple's CDN last fetched at "))
            #expect(words.out.contains("and got an earlier version (\(version(before))); the current one, served since "))
            #expect(words.out.contains("has not been fetched by it yet"))
            #expect(words.out.contains("An Apple device in developer mode last fetched at "))
            #expect(words.out.contains("got the current version"))
            #expect(words.out.contains("the server sends Cache-Control: public, max-age=3600"))

            // The admin listener answers per host, also for a host that nobody fetched; 404 for one it does not serve.
            let one = try runTool(["curl", "-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(server.adminPort)/status/www.example.com"])
            let oneText = String(decoding: one.stdout, as: UTF8.self)
            #expect(oneText.hasSuffix("\n200") && oneText.contains(#""host":"www.example.com""#))
            let none = try runTool([
                "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(server.adminPort)/status/nobody.example.net",
            ])
            #expect(String(decoding: none.stdout, as: UTF8.self) == "404")
        }
    }

    @Test("records survive a restart; two servers' state directories are merged; a truncated record file is skipped")
    func restartAndReplicas() throws {
        try withTemporaryDirectory { root in
            let first = root + "/replica-a"
            let second = root + "/replica-b"
            var etag = ""
            do {
                let server = try ServerProcess(config: Self.config(state: first))
                etag = version(try get(server, Self.wellKnown, userAgent: Self.cdn))
                #expect(
                    waitUntil(5) {
                        ((try? String(
                            contentsOfFile: first + "/"
                                + (FileManager.default.contentsOfDirectory(atPath: first).first { $0.hasSuffix(".jsonl") } ?? ""),
                            encoding: .utf8
                        )) ?? "").contains("apple-cdn")
                    }
                )
                server.stop()
            }
            // Restarted on the same directory: the fetch from before is there.
            let restarted = try ServerProcess(config: Self.config(state: first))
            defer { restarted.stop() }
            #expect(restarted.stderr.contains("1 host read back"))
            let afterRestart = try statusJSON(["--admin", "127.0.0.1:\(restarted.adminPort)"])
            let cdn = ((afterRestart["example.com"]?["fetchers"] as? [String: [String: Any]])?["apple-cdn"]?["last"] as? [String: Any])
            #expect(cdn?["version"] as? String == etag)

            // A second replica with its own directory sees another fetch.
            let other = try ServerProcess(config: Self.config(state: second))
            _ = try get(other, "/.well-known/assetlinks.json", host: "www.example.com", userAgent: Self.google)
            #expect(
                waitUntil(5) {
                    (try? FileManager.default.contentsOfDirectory(atPath: second).contains { $0.hasPrefix("fetches-") }) == true
                }
            )
            #expect(waitUntil(5) { ((try? statusJSON(["--state", second]))?["www.example.com"]) != nil })
            other.stop()
            // A record file cut off mid-line, and one that is not records at all.
            try #"{"type":"fetch","time":17961483"#.write(toFile: second + "/fetches-crashed-1.jsonl", atomically: true, encoding: .utf8)
            try "not a record\n".write(toFile: second + "/fetches-junk-2.jsonl", atomically: true, encoding: .utf8)

            let merged = try status(["--state", first, "--state", second, "--json"])
            #expect(merged.status == 0)
            #expect(merged.err.contains("fetches-crashed-1.jsonl: skipped 1 damaged record line"))
            #expect(merged.err.contains("fetches-junk-2.jsonl: skipped 1 damaged record line"))
            let hosts = try statusJSON(["--state", first, "--state", second])
            #expect(Set(hosts.keys) == ["example.com", "www.example.com"])
            // And a server starting on the damaged directory starts, and says what it skipped.
            let survivor = try ServerProcess(config: Self.config(state: second))
            defer { survivor.stop() }
            #expect(survivor.stderr.contains("skipped 1 damaged record line"))
        }
    }
}
