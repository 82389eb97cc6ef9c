import Database
import FetchRecords
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Server

/// Fetch records kept in a real PostgreSQL database (Debian's, an initdb cluster of the tests' own) by
/// replicas that share it: each reads the others' records and not its own, the table stays within the
/// records' bounds, records wait while the database is away, and two real servers see each other's fetches.
@Suite("Fetch records in PostgreSQL, shared by replicas")
struct FetchRecordDatabaseTests {
    /// What one replica's thread absorbed from the others.
    final class Absorbed: Sendable {
        let entries = Mutex<[RecordLine.Entry]>([])
        var count: Int { entries.withLock { $0.count } }
    }

    static func fetch(_ host: String, _ time: Int, fetcher: Fetcher = .appleCDN) -> RecordLine.Entry {
        .fetch(
            FetchRecord(
                time: time,
                host: host,
                fetcher: fetcher,
                path: "/.well-known/apple-app-site-association",
                status: 200,
                bytes: 120,
                version: "0123456789abcdef",
                client: "17.1.2.3",
                origin: .verified
            )
        )
    }

    static func started(
        _ connection: String,
        _ replica: String,
        history: Int = 20,
        maxHosts: Int = 100
    ) -> (
        FetchRecordDatabase, Absorbed
    ) {
        let database = FetchRecordDatabase(
            login: PostgresLogin(connection: connection, password: nil),
            replica: replica,
            history: history,
            maxHosts: maxHosts
        )
        let absorbed = Absorbed()
        database.start { entries in absorbed.entries.withLock { $0 += entries } }
        return (database, absorbed)
    }

    @Test("a replica reads every other replica's records, never its own back; one starting later reads what is there, within the bounds")
    func replicasShare() throws {
        let cluster = try PostgresCluster.shared.get()
        let name = "fetches_\(UUID().uuidString.prefix(8).lowercased())"
        let connection = try cluster.createDatabase(name)
        let (first, fromOthers) = Self.started(connection, "replica-a", history: 3, maxHosts: 2)
        let (second, fromFirst) = Self.started(connection, "replica-b", history: 3, maxHosts: 2)
        var written: [RecordLine.Entry] = [Self.fetch("old.example.com", 1_000), Self.fetch("z.example.com", 2_000)]
        written.append(.version(VersionRecord(host: "x.example.com", document: .aasa, version: "0123456789abcdef", since: 2_500)))
        for time in 3_000..<3_005 { written.append(Self.fetch("x.example.com", time)) }
        // Each replica trims the table to the bounds when it starts: both trims are behind us before the
        // records are written, or a late one would trim them (on a loaded CI machine it did).
        #expect(waitUntil(30) { first.completedRounds > 0 && second.completedRounds > 0 })
        first.add(written)
        #expect(waitUntil(5) { fromFirst.count == written.count }, "the other replica read \(fromFirst.count) of \(written.count)")
        #expect(fromFirst.entries.withLock { $0 } == written, "in the order written")
        usleep(1_200_000)
        #expect(fromOthers.count == 0, "a replica does not read its own records back")
        second.add([Self.fetch("x.example.com", 4_000, fetcher: .googleVerifier)])
        #expect(waitUntil(5) { fromOthers.count == 1 })
        first.stop()
        second.stop()
        #expect(try cluster.sql("SELECT count(*) FROM aasa_fetch_records", database: name) == "9")

        // A replica starting now first trims the table to the bounds: per host the last 3 fetches and
        // versions, and the 2 hosts fetched last (old.example.com goes).
        let (third, fromBoth) = Self.started(connection, "replica-c", history: 3, maxHosts: 2)
        defer { third.stop() }
        #expect(waitUntil(5) { fromBoth.count == 5 }, "read \(fromBoth.count)")
        let hosts = fromBoth.entries.withLock { entries in
            entries.map { entry -> String in
                switch entry {
                case .fetch(let fetch): return fetch.host
                case .version(let version): return version.host
                }
            }
        }
        #expect(hosts == ["z.example.com", "x.example.com", "x.example.com", "x.example.com", "x.example.com"])
        #expect(try cluster.sql("SELECT count(*) FROM aasa_fetch_records", database: name) == "5")
        #expect(
            try cluster.sql("SELECT string_agg(DISTINCT replica, ',' ORDER BY replica) FROM aasa_fetch_records", database: name)
                == "replica-a,replica-b"
        )
    }

    @Test("records made while PostgreSQL is away wait and are all written when it returns; then the others read them")
    func outage() throws {
        let cluster = try PostgresCluster()
        try cluster.sql("CREATE DATABASE fetches")
        let connection = cluster.connectionString(database: "fetches")
        let (writer, _) = Self.started(connection, "writer")
        defer { writer.stop() }
        writer.add([Self.fetch("before.example.com", 1_000)])
        #expect(waitUntil(5) { (try? cluster.sql("SELECT count(*) FROM aasa_fetch_records", database: "fetches")) == "1" })
        cluster.stop()
        let during = (0..<50).map { Self.fetch("during-\($0).example.com", 2_000 + $0) }
        writer.add(during)
        usleep(1_500_000)
        #expect(writer.backlog == (waiting: 50, dropped: 0), "\(writer.backlog)")
        try cluster.start()
        #expect(waitUntil(8) { (try? cluster.sql("SELECT count(*) FROM aasa_fetch_records", database: "fetches")) == "51" })
        #expect(writer.backlog.waiting == 0)
        let (reader, read) = Self.started(connection, "reader")
        defer { reader.stop() }
        #expect(waitUntil(5) { read.count == 51 })
    }

    @Test(
        "two servers on one PostgreSQL: a fetch from either shows in the other's status, and in a replica started later, with no state directory"
    )
    func serversShare() throws {
        let cluster = try PostgresCluster.shared.get()
        let connection = try cluster.createDatabase()
        let config = FetchRecordTests.config(state: "unused").replacingOccurrences(
            of: #""stateDirectory": "unused""#,
            with: #""linkStore": {"postgres": "\#(connection)"}"#
        )
        let first = try ServerProcess(config: config)
        defer { first.stop() }
        let second = try ServerProcess(config: config)
        defer { second.stop() }
        #expect(first.stderr.contains("fetch records in PostgreSQL (\(connection)), shared by every replica"), "\(first.stderr)")

        let records = FetchRecordTests()
        #expect(try records.fetch(first.port) == 200)
        #expect(try records.fetch(second.port, userAgent: FetchRecordTests.google) == 200)
        for replica in [first, second] {
            let admin = ["--admin", "127.0.0.1:\(replica.adminPort)"]
            var fetchers: [String] = []
            let both = waitUntil(5) {
                fetchers = records.fetches(admin).compactMap { $0["fetcher"] as? String }.sorted()
                return fetchers == ["apple-cdn", "google-verifier"]
            }
            #expect(both, "replica \(replica.port) sees \(fetchers)")
        }
        let words = try records.status(["--admin", "127.0.0.1:\(second.adminPort)", "example.com"])
        #expect(words.out.contains("Apple's CDN last fetched at ") && words.out.contains("got the current version"), "\(words.out)")

        // The console of the replica Apple did not fetch from counts the host as Apple's, current.
        let console = try runTool(["curl", "-s", "http://127.0.0.1:\(second.adminPort)/console"])
        #expect(
            String(decoding: console.stdout, as: UTF8.self).contains(
                "Apple's CDN has the current version for <strong class=\"ok\">1</strong>"
            )
        )

        let metrics = String(decoding: try runTool(["curl", "-s", "http://127.0.0.1:\(first.adminPort)/metrics"]).stdout, as: UTF8.self)
        #expect(metrics.contains("\naasa_fetch_records_waiting 0\n") && metrics.contains("\naasa_fetch_records_unwritten_total 0\n"))

        let late = try ServerProcess(config: config)
        defer { late.stop() }
        var lateFetchers: [String] = []
        #expect(
            waitUntil(5) {
                lateFetchers = records.fetches(["--admin", "127.0.0.1:\(late.adminPort)"]).compactMap { $0["fetcher"] as? String }.sorted()
                return lateFetchers == ["apple-cdn", "google-verifier"]
            },
            "a replica started later sees \(lateFetchers)"
        )
        #expect(!FileManager.default.fileExists(atPath: first.directory + "/unused"), "no state directory is made")
    }
}
