import AASA
import FetchRecords
import Testing

@Suite("Fetch records (pure): fetchers, bounded histories, record lines, sentences")
struct FetchRecordsTests {
    func fetch(_ time: Int, _ fetcher: Fetcher = .appleCDN, version: String = "v1", host: String = "example.com") -> FetchRecord {
        FetchRecord(
            time: time,
            host: host,
            fetcher: fetcher,
            path: fetcher == .googleVerifier ? "/.well-known/assetlinks.json" : "/.well-known/apple-app-site-association",
            status: 200,
            bytes: 100,
            version: version,
            client: "192.0.2.7"
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

    static func node(_ status: HostStatus) -> JSONNode {
        JSONParser.parse(JSONWriter.bytes(status.json)).root!
    }
}
