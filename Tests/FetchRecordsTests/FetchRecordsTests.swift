import AASA
import FetchRecords
import Support
import Testing

@Suite("Fetch records (pure): fetchers, bounded histories, record lines, sentences")
struct FetchRecordsTests {
    func fetch(
        _ time: Int,
        _ fetcher: Fetcher = .appleCDN,
        version: String = "v1",
        host: String = "example.com",
        origin: FetchOrigin = .verified
    ) -> FetchRecord {
        FetchRecord(
            time: time,
            host: host,
            fetcher: fetcher,
            path: fetcher == .googleVerifier ? "/.well-known/assetlinks.json" : "/.well-known/apple-app-site-association",
            status: 200,
            bytes: 100,
            version: version,
            client: "192.0.2.7",
            origin: fetcher == .appleDevice ? .device : origin
        )
    }

    @Test("User-Agents are told apart by prefix; browsers and look-alikes are nobody")
    func classify() {
        #expect(Fetcher.classify("AASA-Bot/1.0.0") == .appleCDN)
        #expect(Fetcher.classify("swcd (unknown version) CFNetwork/1496.0.7 Darwin/23.5.0") == .appleDevice)
        #expect(Fetcher.classify("GoogleAssociationService") == .googleVerifier)
        #expect(Fetcher.classify("Mozilla/5.0 AASA-Bot/1.0.0") == nil)
        #expect(Fetcher.classify("AASA-Bo") == nil)
        #expect(Fetcher.classify("") == nil)
    }

    @Test("a host keeps its last N versions and fetches, in time order, without repeats")
    func bounded() {
        var ledger = FetchLedger(limit: 3)
        for time in [5, 1, 4, 2, 3] { ledger.add(fetch(time * 1000)) }
        #expect(ledger.hosts["example.com"]?.fetches.map(\.time) == [3000, 4000, 5000])
        let repeated = ledger.add(fetch(5000))
        #expect(!repeated, "the same fetch twice (two replicas' files) is one")
        for (index, version) in ["a", "b", "b", "c", "d"].enumerated() {
            ledger.add(VersionRecord(host: "example.com", document: .aasa, version: version, since: index))
        }
        #expect(ledger.hosts["example.com"]?.versions.map(\.version) == ["b", "c", "d"])
        let unfetched = ledger.add(VersionRecord(host: "new.example.com", document: .aasa, version: "x", since: 0), always: false)
        #expect(!unfetched)
        #expect(ledger.hosts["new.example.com"] == nil, "nothing is kept for a host nobody fetched")
    }

    @Test("at most maxHosts hosts: those fetched longest ago go first, counted")
    func boundedHosts() {
        var ledger = FetchLedger(limit: 5, maxHosts: 100)
        for index in 0..<1_000 { ledger.add(fetch(index * 1000, host: "n\(index).tenant.test")) }
        #expect(ledger.hosts.count <= 100)
        #expect(ledger.droppedHosts == 1_000 - ledger.hosts.count)
        #expect(ledger.hosts["n999.tenant.test"] != nil && ledger.hosts["n0.tenant.test"] == nil, "the newest stay")
        // A host already recorded never makes room.
        let before = ledger.droppedHosts
        ledger.add(fetch(2_000_000, host: "n999.tenant.test"))
        #expect(ledger.droppedHosts == before)
    }

    @Test("at most maxHostsPerWildcard hosts under one wildcard: its oldest go, other wildcards and exact hosts stay")
    func boundedPerWildcard() {
        var ledger = FetchLedger(limit: 5, maxHosts: 10_000, maxHostsPerWildcard: 100)
        ledger.add(fetch(0, host: "shop.test"))
        for index in 0..<50 { ledger.add(fetch(index, host: "q\(index).quiet.test"), wildcard: "*.quiet.test") }
        for index in 0..<1_000 { ledger.add(fetch(100 + index, host: "f\(index).flood.test"), wildcard: "*.flood.test") }
        let flood = ledger.hosts.values.filter { $0.wildcard == "*.flood.test" }.count
        #expect(flood <= 100 && flood >= 99, "\(flood)")
        #expect(ledger.droppedUnderWildcards == 1_000 - flood && ledger.droppedHosts == 0)
        #expect(ledger.hosts["f999.flood.test"] != nil && ledger.hosts["f0.flood.test"] == nil, "the newest stay")
        #expect(ledger.hosts["shop.test"] != nil && ledger.hosts.keys.filter { $0.hasSuffix(".quiet.test") }.count == 50)
        // The config changes: quiet.test's hosts are now one wildcard's with the flood's, and are trimmed with them.
        ledger.regroup { $0.hasSuffix(".test") && $0 != "shop.test" ? "*.test" : nil }
        #expect(ledger.hosts.count == 101, "100 under *.test and shop.test: \(ledger.hosts.count)")
        #expect(ledger.hosts.keys.filter { $0.hasSuffix(".quiet.test") }.isEmpty, "the oldest of the merged wildcard went")
        // A merge keeps each host's wildcard.
        var other = FetchLedger(limit: 5, maxHostsPerWildcard: 100)
        other.merge(ledger)
        #expect(other.hosts["f999.flood.test"]?.wildcard == "*.test")
    }

    @Test("merging replicas' ledgers keeps every distinct fetch once")
    func merge() {
        var a = FetchLedger(limit: 10)
        var b = FetchLedger(limit: 10)
        a.add(fetch(1000))
        a.add(fetch(3000))
        b.add(fetch(3000))
        b.add(fetch(2000, .appleDevice))
        a.merge(b)
        #expect(a.hosts["example.com"]?.fetches.map(\.time) == [1000, 2000, 3000])
    }

    @Test("record lines round-trip; a cut-off or foreign line is counted as damaged, never fatal")
    func lines() {
        let records: [RecordLine.Entry] = [
            .version(VersionRecord(host: "example.com", document: .assetLinks, version: "0123", since: 42)),
            .fetch(fetch(1_796_000_000_000, .googleVerifier, version: "0123")),
        ]
        var bytes = records.flatMap(RecordLine.line)
        bytes += Array(#"{"type":"fetch","time":1"#.utf8) + [0x0A] + Array("garbage\n".utf8) + Array(#"{"type":"song"}"#.utf8)
        let parsed = RecordLine.parseAll(bytes)
        #expect(parsed.entries == records)
        #expect(parsed.damaged == 3)
    }

    @Test("sentences say which fetcher has the current version and what explains a stale CDN")
    func sentences() {
        var ledger = FetchLedger(limit: 10)
        ledger.add(VersionRecord(host: "example.com", document: .aasa, version: "old", since: 0))
        ledger.add(fetch(60_000, version: "old"))
        ledger.add(VersionRecord(host: "example.com", document: .aasa, version: "new", since: 3_600_000))
        ledger.add(fetch(3_700_000, .appleDevice, version: "new"))
        let history = ledger.hosts["example.com"]!
        let status = HostStatus(
            host: "example.com",
            current: [.aasa: VersionRecord(host: "example.com", document: .aasa, version: "new", since: 3_600_000)],
            cacheControl: "max-age=3600",
            history: history
        )
        let text = status.sentences(now: 3_600_000 + 7_200_000)
        #expect(text.contains("apple-app-site-association: version new, served since 1970-01-01 01:00:00 UTC (2 h ago)"))
        #expect(
            text.contains(
                "Apple's CDN last fetched at 1970-01-01 00:01:00 UTC and got an earlier version (old); the current one, served since "
                    + "1970-01-01 01:00:00 UTC, has not been fetched by it yet"
            )
        )
        #expect(text.contains("An Apple device in developer mode last fetched at 1970-01-01 01:01:40 UTC and got the current version"))
        #expect(text.contains { $0.hasPrefix("the server sends Cache-Control: max-age=3600; the document changed 2 h ago.") })
        #expect(!text.contains { $0.contains("Google") }, "no assetlinks.json is served and Google never came")
        let parsed = HostStatus.parse(FetchRecordsTests.node(status))
        #expect(parsed?.history == status.history && parsed?.current == status.current)
    }

    @Test("address blocks: IPv4, IPv6, mapped and bracketed addresses; host bits set or junk refused")
    func networks() throws {
        let apple = try #require(IPNetwork("17.0.0.0/8"))
        for inside in ["17.0.0.1", "17.255.255.255", "::ffff:17.1.2.3", "[::ffff:17.1.2.3]"] {
            #expect(apple.contains(inside), "\(inside)")
        }
        for outside in ["16.255.255.255", "18.0.0.0", "170.0.0.1", "::1", "junk", "", "17.0.0", "17.0.0.256", "017.0.0.1"] {
            #expect(!apple.contains(outside), "\(outside)")
        }
        let six = try #require(IPNetwork("2620:149::/32"))
        #expect(six.contains("2620:149:a:b::1") && six.contains("[2620:0149::]") && !six.contains("2620:14a::1"))
        #expect(try #require(IPNetwork("0.0.0.0/0")).contains("203.0.113.9"))
        #expect(try #require(IPNetwork("::/0")).contains("::1"))
        for bad in ["17.1.0.0/8", "17.0.0.0/33", "17.0.0.0/-1", "17.0.0.0/+8", "2620:149::1/32", "1:2:3:4:5:6:7:8:9", "1::2::3", "x/8"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
        for address in ["127.0.0.1", "10.1.2.3", "172.31.0.1", "192.168.1.1", "100.64.0.1", "::1", "fd00::1", "fe80::1%eth0"] {
            #expect(IPNetwork.isInternal(address), "\(address)")
        }
        for external in ["17.1.2.3", "172.32.0.1", "8.8.8.8", "2001:db8::1"] { #expect(!IPNetwork.isInternal(external), "\(external)") }
        #expect(IPNetwork.sameAddress("::ffff:66.249.66.1", "66.249.66.1") && !IPNetwork.sameAddress("66.249.66.1", "66.249.66.2"))
        let full = try #require(IPAddress("1:2:3:4:5:6:7:8"))
        #expect(full.high == 0x0001_0002_0003_0004 && full.low == 0x0005_0006_0007_0008)
        #expect(IPAddress("2001:db8:0:0:0:0:0:1") == IPAddress("2001:DB8::1"))
        #expect(IPAddress("1:2:3:4:5:6:1.2.3.4")?.low == 0x0005_0006_0102_0304)
        #expect(IPAddress("::") == IPAddress(high: 0, low: 0) && IPAddress("1::")?.high == 0x0001_0000_0000_0000)
        #expect(IPAddress("::1.2.3.4")?.low == 0x0102_0304 && IPAddress("1.2.3.4")?.isIPv4 == true)
        for bad in ["1:", ":1", "1:::2", "12345::", "1:2:3:4:5:6:7:8:9", "1::2:3:4:5:6:7:8", "g::1", "1.2.3.4:5", "::1.2.3", "[::1", ""] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("a fetch counts as the fetcher's only from its network; a proxy's address is unverifiable; a device is a device")
    func origins() {
        let networks = FetcherNetworks(google: ["66.249.64.0/19"].compactMap(IPNetwork.init))
        #expect(networks.origin(of: .appleCDN, from: "17.1.2.3", source: .peer) == .verified)
        #expect(networks.origin(of: .appleCDN, from: "17.1.2.3", source: .proxyProtocol) == .verified)
        #expect(networks.origin(of: .appleCDN, from: "203.0.113.5", source: .peer) == .claimed)
        #expect(networks.origin(of: .appleCDN, from: "127.0.0.1", source: .peer) == .unverifiable)
        #expect(networks.origin(of: .appleCDN, from: "10.0.0.4", source: .peer) == .unverifiable)
        #expect(
            networks.origin(of: .appleCDN, from: "10.0.0.4", source: .forwardedFor) == .claimed,
            "the trusted proxy saw a private client"
        )
        #expect(networks.origin(of: .googleVerifier, from: "66.249.66.1", source: .peer) == .verified)
        #expect(networks.origin(of: .googleVerifier, from: "17.1.2.3", source: .peer) == .claimed)
        #expect(networks.origin(of: .appleDevice, from: "192.168.1.20", source: .peer) == .device)
        #expect(FetcherNetworks().google.isEmpty && FetcherNetworks().apple.map(\.description) == ["17.0.0.0/8"])
    }

    @Test("forward-confirmed reverse DNS: Google's domain and the same address back, or nothing")
    func reverseDNS() {
        let ptr = [
            "66.249.66.1": "crawl-66-249-66-1.googlebot.com", "203.0.113.9": "crawl.googlebot.com.evil.test",
            "198.51.100.3": "x.google.com",
        ]
        let forward = ["crawl-66-249-66-1.googlebot.com": ["66.249.66.1"], "x.google.com": ["198.51.100.4"]]
        func confirms(_ address: String) -> Bool {
            ReverseDNSCheck.confirms(address, reverse: { ptr[$0] }, forward: { forward[$0] ?? [] })
        }
        #expect(confirms("66.249.66.1"))
        #expect(!confirms("203.0.113.9"), "a name that only contains googlebot.com")
        #expect(!confirms("198.51.100.3"), "the name resolves to another address")
        #expect(!confirms("192.0.2.1"), "no PTR record")
    }

    @Test("claims are said as claims, with the setting that would make them checkable; they never stand for the fetcher")
    func claims() {
        var ledger = FetchLedger(limit: 10)
        ledger.add(fetch(1_000, origin: .verified))
        ledger.add(fetch(2_000, origin: .unverifiable))
        ledger.add(fetch(3_000, .googleVerifier, origin: .claimed))
        let history = ledger.hosts["example.com"]!
        #expect(history.lastFetch(by: .appleCDN)?.time == 1_000)
        #expect(history.lastClaim(by: .appleCDN)?.time == 2_000)
        #expect(history.lastFetch(by: .googleVerifier) == nil)
        let text = HostStatus(host: "example.com", history: history).sentences(now: 10_000)
        #expect(text.contains { $0.hasPrefix("Apple's CDN last fetched at 1970-01-01 00:00:01 UTC") })
        #expect(text.contains { $0.contains("a client claiming to be Apple's CDN") && $0.contains("\"trustForwardedHeaders\": true") })
        #expect(text.contains { $0.contains("a client claiming to be Google's verifier") && $0.contains("outside Google's network") })
        // Lines written before origins were recorded: the User-Agent's word only.
        let old =
            #"{"type":"fetch","time":5,"host":"example.com","fetcher":"apple-cdn","path":"/x","status":200,"bytes":1,"version":"v","client":"17.1.1.1"}"#
        guard case .fetch(let parsed)? = RecordLine.parse(Array(old.utf8)[...]) else {
            Issue.record("an old line no longer parses")
            return
        }
        #expect(parsed.origin == .claimed)
    }

    static func node(_ status: HostStatus) -> JSONNode {
        JSONParser.parse(JSONWriter.bytes(status.json)).root!
    }
}
