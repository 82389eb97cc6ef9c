import Database
import Foundation
import LinkStore
import Links
import Synchronization
import TestSupport
import Testing

/// The link store on both of its databases — SQLite files and a real PostgreSQL server — with the same
/// tests: the schema created and versioned, links created, changed and read back exactly, every change
/// counted by revision and recorded, text that looks like SQL stored as text, and a store from a newer
/// server refused.
@Suite("Link store: SQLite and PostgreSQL")
struct LinkDatabaseTests {
    enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite
        case postgres
        var testDescription: String { rawValue }
    }

    /// A new, empty store; `open` connects to it (again).
    struct Store {
        let location: LinkStoreLocation
        let path: String
        func open(create: Bool = true) throws -> LinkDatabase { try LinkDatabase(location, create: create) }
    }

    static func withStore<T>(_ backend: Backend, _ body: (Store) throws -> T) throws -> T {
        switch backend {
        case .sqlite:
            return try withTemporaryDirectory { directory in
                let path = directory + "/links.sqlite"
                return try body(Store(location: .sqlite(path: path), path: path))
            }
        case .postgres:
            let cluster = try PostgresCluster.shared.get()
            let name = "links_\(UUID().uuidString.prefix(8).lowercased())"
            let connection = try cluster.createDatabase(name)
            defer { _ = try? cluster.sql("DROP DATABASE \(name) WITH (FORCE)") }
            let location = LinkStoreLocation.postgres(.init(connection: connection, password: nil))
            return try body(Store(location: location, path: "postgresql://\(cluster.user)@127.0.0.1:\(cluster.port)/\(name)"))
        }
    }

    static func link(_ suffix: String, _ deep: String = "https://example.com/spring", domain: String = "go.example.com") -> StoredLink {
        StoredLink(domain: domain, suffix: suffix, parameters: ["link": deep, "st": "Spring sale"])
    }

    /// A new store with links at `suffixes`, created at 10, 11, … .
    static func withLinks(_ backend: Backend, _ suffixes: [String], _ body: (LinkDatabase) throws -> Void) throws {
        try withStore(backend) { store in
            let database = try store.open()
            for (index, suffix) in suffixes.enumerated() { try database.create(link(suffix), now: 10 + Int64(index)) }
            try body(database)
        }
    }

    @Test(
        "Created links read back exactly; a taken path is a conflict naming the link; the file is private (0600)",
        arguments: Backend.allCases
    )
    func createAndRead(backend: Backend) throws {
        try Self.withStore(backend) { store in
            let database = try store.open()
            let created = try database.create(Self.link("spring"), now: 1_700_000_000)
            #expect(created.state == .active && created.created == 1_700_000_000 && created.revision == 1)
            #expect(try database.link(domain: "go.example.com", suffix: "spring") == created)
            #expect(try database.link(domain: "go.example.com", suffix: "Spring") == nil, "suffixes are case-sensitive, as paths are")
            #expect(throws: LinkStoreError.conflict(created)) {
                try database.create(Self.link("spring", "https://example.com/other"), now: 1)
            }
            #expect(try database.link(domain: "go.example.com", suffix: "spring")?.parameters["link"] == "https://example.com/spring")
            if backend == .sqlite {
                let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "unguessable suffixes are secrets")
            }
            // Another connection (the server's) sees the same data.
            #expect(try store.open(create: false).list() == [created])
        }
    }

    @Test(
        "Disable, enable, update and delete: each bumps the revision, is recorded, and a deleted path can be taken again",
        arguments: Backend.allCases
    )
    func changes(backend: Backend) throws {
        try Self.withLinks(backend, ["a", "b"]) { database in
            #expect(try database.setState(domain: "go.example.com", suffix: "a", .disabled, now: 12).revision == 3)
            #expect(
                try database.update(domain: "go.example.com", suffix: "b", parameters: ["link": "https://example.com/b2"], now: 13).revision
                    == 4
            )
            #expect(try database.setState(domain: "go.example.com", suffix: "a", .deleted, now: 14).revision == 5)
            #expect(try database.list().map(\.suffix) == ["b"], "a deleted link is not listed")
            #expect(throws: LinkStoreError.notFound(domain: "go.example.com", suffix: "a")) {
                try database.setState(domain: "go.example.com", suffix: "a", .active, now: 15)
            }
            #expect(try database.latestRevision() == 5)
            let after3 = try database.changes(after: 3)
            #expect(after3.map { "\($0.suffix):\($0.state.rawValue):\($0.revision)" } == ["b:active:4", "a:deleted:5"])
            let again = try database.create(Self.link("a", "https://example.com/new"), now: 16)
            #expect(again.state == .active && again.revision == 6 && again.parameters["link"] == "https://example.com/new")
            let history = try database.history(domain: "go.example.com", suffix: "a").map(\.change)
            #expect(history == ["created", "disabled", "deleted", "created again"])
            #expect(try database.history(domain: "go.example.com", suffix: "b").last?.parameters == ["link": "https://example.com/b2"])
        }
    }

    @Test(
        "A domain's kill switch: on and off, said once when it changes, seen by another connection; the links are kept",
        arguments: Backend.allCases
    )
    func domainSwitch(backend: Backend) throws {
        try Self.withStore(backend) { store in
            let database = try store.open()
            let link = try database.create(Self.link("a"), now: 10)
            #expect(try database.disabledDomains().isEmpty)
            #expect(try database.setDomain("go.example.com", disabled: true, now: 20))
            #expect(try !database.setDomain("go.example.com", disabled: true, now: 30), "already off: the first time is kept")
            #expect(try store.open(create: false).disabledDomains() == ["go.example.com": 20])
            #expect(try database.list() == [link], "the links are not touched")
            #expect(try database.setDomain("go.example.com", disabled: false, now: 40))
            #expect(try !database.setDomain("go.example.com", disabled: false, now: 50))
            #expect(try database.disabledDomains().isEmpty)
        }
    }

    @Test(
        "Claims: the key is made once and shared; a code is claimed once; a switched-off link has none; old claims are forgotten",
        arguments: Backend.allCases
    )
    func claims(backend: Backend) throws {
        try Self.withStore(backend) { store in
            let database = try store.open()
            let key = try database.claimKey()
            #expect(key.count == 32 && Set(key).count > 8)
            #expect(try store.open(create: false).claimKey() == key, "every server of the store signs alike")
            let link = try database.create(Self.link("spring"), now: 10)
            let day: Int64 = 86_400
            #expect(
                try database.claim(code: "spring.a", domain: "go.example.com", suffix: "spring", now: 100, keepSeconds: 8 * day)
                    == .claimed(link)
            )
            #expect(
                try database.claim(code: "spring.a", domain: "go.example.com", suffix: "spring", now: 200, keepSeconds: 8 * day)
                    == .alreadyClaimed(at: 100)
            )
            #expect(try database.claim(code: "x.b", domain: "go.example.com", suffix: "x", now: 200, keepSeconds: 8 * day) == .noLink)
            try database.setState(domain: "go.example.com", suffix: "spring", .disabled, now: 300)
            #expect(
                try database.claim(code: "spring.c", domain: "go.example.com", suffix: "spring", now: 400, keepSeconds: 8 * day) == .noLink
            )
            try database.setState(domain: "go.example.com", suffix: "spring", .active, now: 500)
            // Nine days on, the first claim is forgotten (its code has long expired and is refused before this).
            if case .claimed = try database.claim(
                code: "spring.a",
                domain: "go.example.com",
                suffix: "spring",
                now: 100 + 9 * day,
                keepSeconds: 8 * day
            ) {
            } else {
                Issue.record("an expired claim's row is kept beyond keepSeconds")
            }
        }
    }

    @Test(
        "The retention limit deletes the counts of days before the first kept one, every link's, and nothing after",
        arguments: Backend.allCases
    )
    func retention(backend: Backend) throws {
        try Self.withLinks(backend, ["a", "b"]) { database in
            for (day, suffix) in [("2026-10-01", "a"), ("2026-11-30", "b"), ("2026-12-01", "a"), ("2026-12-04", "b")] {
                _ = try database.addClicks(
                    [
                        LinkDatabase.ClickCount(
                            link: try #require(try database.link(domain: "go.example.com", suffix: suffix)).id,
                            visitor: "iphone",
                            outcome: "landing",
                            head: false,
                            count: 2
                        )
                    ],
                    day: day
                )
            }
            #expect(try database.forgetClicks(before: "2026-12-01") == 2)
            #expect(try database.clicks(domain: "go.example.com", suffix: "a", from: "2000-01-01").map(\.day) == ["2026-12-01"])
            #expect(try database.clicks(domain: "go.example.com", suffix: "b", from: "2000-01-01").map(\.day) == ["2026-12-04"])
            #expect(try database.forgetClicks(before: "2026-12-01") == 0)
        }
    }

    @Test("Quotes, semicolons and SQL in every field are stored as text and read back unchanged", arguments: Backend.allCases)
    func sqlMetacharacters(backend: Backend) throws {
        try Self.withStore(backend) { store in
            let database = try store.open()
            let hostile = "x'); DROP TABLE links; --\"\\%_\u{0}é"
            let link = StoredLink(
                domain: "go'.example.com",
                suffix: "a'b;--",
                parameters: [hostile: hostile, "link": "https://e.com/?q=1' OR '1'='1"]
            )
            try database.create(link, now: 1)
            let read = try #require(try database.link(domain: "go'.example.com", suffix: "a'b;--"))
            #expect(read.parameters == link.parameters)
            #expect(try database.list(domain: "go'.example.com").count == 1)
            #expect(try database.list(domain: "' OR '1'='1").isEmpty)
        }
    }

    @Test("A store whose schema is newer than this server knows is refused with the versions, not read", arguments: Backend.allCases)
    func newerSchema(backend: Backend) throws {
        try Self.withStore(backend) { store in
            _ = try store.open()
            switch store.location {
            case .sqlite(let path):
                let set = try runTool(["sqlite3", path, "PRAGMA user_version = 99"])
                #expect(set.status == 0, "\(set.stderr)")
            case .postgres(let settings):
                let database = settings.connection.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst(7) ?? ""
                try PostgresCluster.shared.get().sql("UPDATE aasa_link_schema SET version = 99", database: String(database))
            }
            #expect(throws: LinkStoreError.newerSchema(path: store.path, found: 99, known: LinkDatabase.schemaVersion)) {
                try store.open()
            }
        }
    }

    @Test("A file that is not a database is an error naming it, and is left as it was")
    func notADatabase() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/links.sqlite"
            try write("these are my notes, not a database\n", to: path)
            do {
                _ = try LinkDatabase(path: path)
                Issue.record("a text file opened as a link store")
            } catch {
                #expect("\(error)".contains(path) && "\(error)".contains("not a database"), "\(error)")
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "these are my notes, not a database\n")
        }
    }

    @Test(
        "Clicks add up per day, class, outcome and HEAD; a deleted link's clicks are counted as dropped; read from a day on",
        arguments: Backend.allCases
    )
    func clicks(backend: Backend) throws {
        try Self.withStore(backend) { store in
            let database = try store.open()
            try database.create(Self.link("a"), now: 1)
            let stored = try #require(try database.link(domain: "go.example.com", suffix: "a"))
            #expect(stored.id > 0, "a stored link has the row id its clicks name")
            func click(_ suffix: String, _ visitor: String, _ count: Int, head: Bool = false) -> LinkDatabase.ClickCount {
                LinkDatabase.ClickCount(
                    // A link that never existed: an id no row has.
                    link: suffix == "a" ? stored.id : stored.id + 1_000,
                    visitor: visitor,
                    outcome: "web",
                    head: head,
                    count: count
                )
            }
            #expect(try database.addClicks([click("a", "desktop", 3), click("a", "desktop", 1, head: true)], day: "2026-12-03") == 0)
            #expect(try database.addClicks([click("a", "desktop", 2), click("gone", "desktop", 7)], day: "2026-12-04") == 7)
            #expect(try database.addClicks([click("a", "desktop", 5)], day: "2026-12-04") == 0)
            let all = try database.clicks(domain: "go.example.com", suffix: "a", from: "2026-12-01")
            #expect(
                all.map { "\($0.day) \($0.visitor) \($0.head) \($0.count)" } == [
                    "2026-12-03 desktop false 3", "2026-12-03 desktop true 1", "2026-12-04 desktop false 7",
                ]
            )
            #expect(try database.clicks(domain: "go.example.com", suffix: "a", from: "2026-12-04").count == 1)
        }
    }

    @Test("PostgreSQL: writers on many connections commit their revisions in order, so a reader asking what changed misses nothing")
    func revisionsInOrder() throws {
        try Self.withStore(.postgres) { store in
            _ = try store.open()
            let writers = 4
            let perWriter = 60
            let failures = Mutex<[String]>([])
            let done = Atomic<Int>(0)
            var threads: [Thread] = []
            for writer in 0..<writers {
                let thread = Thread {
                    defer { done.add(1, ordering: .releasing) }
                    do {
                        let database = try store.open()
                        for index in 0..<perWriter { try database.create(Self.link("w\(writer)-\(index)"), now: Int64(index)) }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                thread.start()
                threads.append(thread)
            }
            // The server's way of keeping current: what changed after the last revision seen, again and again.
            let reader = try store.open()
            var seen: [String: Int64] = [:]
            var revision: Int64 = 0
            let deadline = monotonicSeconds() + 60
            while monotonicSeconds() < deadline {
                let finished = done.load(ordering: .acquiring) == writers
                for link in try reader.changes(after: revision, limit: 7) {
                    #expect(link.revision > revision)
                    revision = link.revision
                    seen[link.suffix] = link.revision
                }
                if try finished && reader.changes(after: revision).isEmpty { break }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
            #expect(seen.count == writers * perWriter, "the reader saw \(seen.count) of \(writers * perWriter) links")
            #expect(Set(seen.values).count == seen.count, "every change has a revision of its own")
            #expect(try reader.latestRevision() == Int64(writers * perWriter))
        }
    }

    @Test("PostgreSQL: a listener is told of each committed change (a link, a domain switch) and of nothing else")
    func announcements() throws {
        try Self.withStore(.postgres) { store in
            let listener = try store.open()
            let socket = try #require(listener.listenForChanges())
            let writer = try store.open()
            #expect(try !listener.takeChangeSignals(), "nothing changed yet")
            try writer.create(Self.link("a"), now: 1)
            #expect(waitUntil(5) { (try? listener.takeChangeSignals()) == true }, "told of the new link")
            #expect(try !listener.takeChangeSignals(), "told once")
            _ = try writer.list()
            _ = try writer.setDomain("go.example.com", disabled: false, now: 2)
            usleep(200_000)
            #expect(try !listener.takeChangeSignals(), "reads and a switch that changed nothing are not changes")
            try writer.setDomain("go.example.com", disabled: true, now: 3)
            #expect(waitUntil(5) { (try? listener.takeChangeSignals()) == true }, "told of the kill switch")
            #expect(socket >= 0)
        }
        try withTemporaryDirectory { directory in
            let sqlite = try LinkDatabase(path: directory + "/links.sqlite")
            #expect(sqlite.listenForChanges() == nil, "SQLite's readers poll")
        }
    }

    @Test("PostgreSQL: text with a NUL is refused in words instead of cut short; a database without a store is not made one by a reader")
    func postgresRefusals() throws {
        try Self.withStore(.postgres) { store in
            #expect(throws: LinkStoreError.self) { try store.open(create: false) }
            let database = try store.open()
            do {
                try database.create(StoredLink(domain: "go.example.com", suffix: "a\u{0}b", parameters: ["link": "https://e.com/"]), now: 1)
                Issue.record("a suffix with a NUL was stored")
            } catch {
                #expect("\(error)".contains("NUL"), "\(error)")
            }
            #expect(try database.list().isEmpty)
        }
    }

    @Test("PostgreSQL with a password: refused without it and with a wrong one, in words that never hold it; accepted with it")
    func postgresPassword() throws {
        let password = "pw-\(UUID().uuidString)"
        let cluster = try PostgresCluster(password: password)
        let connection = try cluster.createDatabase()
        func open(_ password: String?) throws -> LinkDatabase {
            try LinkDatabase(.postgres(.init(connection: connection, password: password)))
        }
        for wrong in [nil, "not-" + password] {
            do {
                _ = try open(wrong)
                Issue.record("connected with password \(wrong ?? "none")")
            } catch {
                #expect("\(error)".contains("password"), "\(error)")
                #expect(!"\(error)".contains(password), "the message holds the password: \(error)")
            }
        }
        let database = try open(password)
        try database.create(Self.link("a"), now: 1)
        #expect(try open(password).list().map(\.suffix) == ["a"])
        #expect(database.path.hasPrefix("postgresql://aasa@127.0.0.1:\(cluster.port)/links_") && !database.path.contains(password))
    }
}
