import Foundation
import TestSupport
import Testing

/// Replicas sharing one real PostgreSQL server (Debian's, an initdb cluster of the test's own): a link
/// created through either replica, or by `aasa-server links` on the database, answers on every replica
/// within a second; the database may go away and come back without a click on a known link failing or a
/// count being lost, and a replica may start before it.
@Suite("Stored short links on PostgreSQL, two replicas")
struct PostgresReplicaTests {
    static let password = "pg-secret-\(UUID().uuidString.prefix(8))"

    static func config(_ cluster: PostgresCluster, database: String) -> String {
        StoredLinkServingTests.apiConfig.replacingOccurrences(
            of: #""stateDirectory": "state""#,
            with: #""linkStore": {"postgres": "\#(cluster.connectionString(database: database))", "passwordFile": "pg-password"}"#
        )
    }

    static func replica(_ config: String) throws -> ServerProcess {
        try ServerProcess(config: config, files: ["admin.token": StoredLinkServingTests.token + "\n", "pg-password": password + "\n"])
    }

    /// Seconds until `path` answers `expected` on the replica (nil after `timeout`).
    static func secondsUntil(_ path: String, _ expected: String, on replica: ServerProcess, timeout: Double = 3) -> Double? {
        let start = monotonicSeconds()
        let answered = waitUntil(timeout) { (try? StoredLinkServingTests.click(path, port: replica.port)) == expected }
        return answered ? monotonicSeconds() - start : nil
    }

    @Test(
        "A link created on one replica, by the API or the command line, answers on the other within a second; so do a disable and a delete"
    )
    func replicasAgree() throws {
        let cluster = try PostgresCluster(password: Self.password)
        let config = Self.config(cluster, database: "links")
        try cluster.sql("CREATE DATABASE links")
        let first = try Self.replica(config)
        defer { first.stop() }
        let second = try Self.replica(config)
        defer { second.stop() }

        let created = try StoredLinkServingTests.api(
            "POST",
            "/v1/links",
            port: first.adminPort,
            body: #"{"domain": "go.example.com", "suffix": "spring", "parameters": {"link": "https://example.com/spring"}}"#
        )
        #expect(created.status == 201, "\(created) \(first.stderr)")
        let viaAPI = Self.secondsUntil("/spring", "302 https://example.com/spring", on: second)
        #expect(viaAPI.map { $0 < 1 } == true, "the other replica answered after \(viaAPI.map { "\($0) s" } ?? "never")")

        let command = try StoredLinkServingTests.links(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/summer", "--alias", "summer"],
            second.directory
        )
        #expect(command.status == 0, "\(command)")
        for replica in [first, second] {
            let seconds = Self.secondsUntil("/summer", "302 https://example.com/summer", on: replica)
            #expect(seconds.map { $0 < 1 } == true, "answered after \(seconds.map { "\($0) s" } ?? "never")")
        }

        let disabled = try StoredLinkServingTests.api("POST", "/v1/links/go.example.com/spring/disable", port: second.adminPort)
        #expect(disabled.status == 200, "\(disabled)")
        let gone = waitUntil(1) { (try? StoredLinkServingTests.click("/spring", port: first.port))?.hasPrefix("410") == true }
        #expect(gone, "the disable reached the other replica within a second")
        #expect(try StoredLinkServingTests.links(["delete", "go.example.com/summer"], first.directory).status == 0)
        #expect(waitUntil(1) { (try? StoredLinkServingTests.click("/summer", port: second.port))?.hasPrefix("404") == true })

        let listed = try StoredLinkServingTests.links(["list"], first.directory)
        #expect(listed.out.contains("https://go.example.com/spring") && !listed.out.contains("summer"), "\(listed)")
        for replica in [first, second] {
            #expect(!replica.stderr.contains(Self.password), "the password is in the log")
        }
    }

    @Test("PostgreSQL stops: known links keep answering, creating a link is 503 in words, clicks wait and are all written when it returns")
    func outage() throws {
        let cluster = try PostgresCluster(password: Self.password)
        try cluster.sql("CREATE DATABASE links")
        let config = Self.config(cluster, database: "links")
        let server = try Self.replica(config)
        defer { server.stop() }
        let created = try StoredLinkServingTests.links(
            ["create", "--domain", "go.example.com", "--link", "https://example.com/s", "--alias", "s"],
            server.directory
        )
        #expect(created.status == 0, "\(created)")
        #expect(Self.secondsUntil("/s", "302 https://example.com/s", on: server) != nil, "\(server.stderr)")
        let desktopClicks = 3

        cluster.stop()
        for _ in 0..<desktopClicks {
            #expect(
                try StoredLinkServingTests.click("/s", port: server.port) == "302 https://example.com/s",
                "a known link keeps answering"
            )
        }
        let refused = try StoredLinkServingTests.api(
            "POST",
            "/v1/links",
            port: server.adminPort,
            body: #"{"domain": "go.example.com", "suffix": "new", "parameters": {"link": "https://example.com/new"}}"#
        )
        #expect(refused.status == 503 && refused.body.contains("Link store unavailable") && refused.body.contains("retry"), "\(refused)")
        // A replica started while the database is away serves what it can, and its links once it returns.
        let late = try Self.replica(config)
        defer { late.stop() }
        #expect(try StoredLinkServingTests.click("/s", port: late.port).hasPrefix("404"))
        // The clicks wait beyond one write interval (5 s) while the database is away.
        usleep(5_500_000)

        try cluster.start()
        #expect(
            Self.secondsUntil("/s", "302 https://example.com/s", on: late, timeout: 5) != nil,
            "\((try? StoredLinkServingTests.click("/s", port: late.port)) ?? "") \(late.stderr)"
        )
        var again: (status: Int, body: String) = (0, "")
        #expect(
            waitUntil(5) {
                again =
                    (try? StoredLinkServingTests.api(
                        "POST",
                        "/v1/links",
                        port: server.adminPort,
                        body: #"{"domain": "go.example.com", "suffix": "new", "parameters": {"link": "https://example.com/new"}}"#
                    )) ?? (0, "")
                return again.status == 201
            },
            "\(again)"
        )
        #expect(Self.secondsUntil("/new", "302 https://example.com/new", on: late) != nil)
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        #expect(
            server.stderr.contains("the links loaded so far keep answering") && server.stderr.contains("readable again"),
            "\(server.stderr)"
        )
        let stats = try StoredLinkServingTests.links(["stats", "go.example.com/s", "--days", "1"], late.directory)
        let total = stats.out.split(separator: "\n").last.map { $0.split(separator: " ").joined(separator: " ") }
        // One desktop click found the link answering before the outage; the late replica's click was a 404.
        #expect(total == "total 0 0 0 \(desktopClicks + 1) 0 0 0", "\(stats.out)")
    }
}
