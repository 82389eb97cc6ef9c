import Foundation
import LinkStore
import Links
import TestSupport
import Testing

/// The SQLite link store on real files: the schema created and versioned, links created, changed and
/// read back exactly, every change counted by revision and recorded, text that looks like SQL stored as
/// text, and a file from a newer server refused.
@Suite("Link store: SQLite")
struct LinkDatabaseTests {
    static func link(_ suffix: String, _ deep: String = "https://example.com/spring", domain: String = "go.example.com") -> StoredLink {
        StoredLink(domain: domain, suffix: suffix, parameters: ["link": deep, "st": "Spring sale"])
    }

    /// A new store with links at `suffixes`, created at 10, 11, … .
    static func withLinks(_ suffixes: [String], _ body: (LinkDatabase) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let database = try LinkDatabase(path: directory + "/links.sqlite")
            for (index, suffix) in suffixes.enumerated() { try database.create(link(suffix), now: 10 + Int64(index)) }
            try body(database)
        }
    }

    @Test("Created links read back exactly; a taken path is a conflict naming the link; the file is private (0600)")
    func createAndRead() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/links.sqlite"
            let database = try LinkDatabase(path: path)
            let created = try database.create(Self.link("spring"), now: 1_700_000_000)
            #expect(created.state == .active && created.created == 1_700_000_000 && created.revision == 1)
            #expect(try database.link(domain: "go.example.com", suffix: "spring") == created)
            #expect(try database.link(domain: "go.example.com", suffix: "Spring") == nil, "suffixes are case-sensitive, as paths are")
            #expect(throws: LinkStoreError.conflict(created)) {
                try database.create(Self.link("spring", "https://example.com/other"), now: 1)
            }
            #expect(try database.link(domain: "go.example.com", suffix: "spring")?.parameters["link"] == "https://example.com/spring")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "unguessable suffixes are secrets")
            // Another connection (the server's) sees the same data.
            #expect(try LinkDatabase(path: path, create: false).list() == [created])
        }
    }

    @Test("Disable, enable, update and delete: each bumps the revision, is recorded, and a deleted path can be taken again")
    func changes() throws {
        try Self.withLinks(["a", "b"]) { database in
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

    @Test("A domain's kill switch: on and off, said once when it changes, seen by another connection; the links are kept")
    func domainSwitch() throws {
        try withTemporaryDirectory { directory in
            let database = try LinkDatabase(path: directory + "/links.sqlite")
            let link = try database.create(Self.link("a"), now: 10)
            #expect(try database.disabledDomains().isEmpty)
            #expect(try database.setDomain("go.example.com", disabled: true, now: 20))
            #expect(try !database.setDomain("go.example.com", disabled: true, now: 30), "already off: the first time is kept")
            #expect(try LinkDatabase(path: directory + "/links.sqlite", create: false).disabledDomains() == ["go.example.com": 20])
            #expect(try database.list() == [link], "the links are not touched")
            #expect(try database.setDomain("go.example.com", disabled: false, now: 40))
            #expect(try !database.setDomain("go.example.com", disabled: false, now: 50))
            #expect(try database.disabledDomains().isEmpty)
        }
    }

    @Test("Claims: the key is made once and shared; a code is claimed once; a switched-off link has none; old claims are forgotten")
    func claims() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/links.sqlite"
            let database = try LinkDatabase(path: path)
            let key = try database.claimKey()
            #expect(key.count == 32 && Set(key).count > 8)
            #expect(try LinkDatabase(path: path, create: false).claimKey() == key, "every server of the store signs alike")
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

    @Test("The retention limit deletes the counts of days before the first kept one, every link's, and nothing after")
    func retention() throws {
        try Self.withLinks(["a", "b"]) { database in
            for (day, suffix) in [("2026-10-01", "a"), ("2026-11-30", "b"), ("2026-12-01", "a"), ("2026-12-04", "b")] {
                _ = try database.addClicks(
                    [
                        LinkDatabase.ClickCount(
                            domain: "go.example.com",
                            suffix: suffix,
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

    @Test("Quotes, semicolons and SQL in every field are stored as text and read back unchanged")
    func sqlMetacharacters() throws {
        try withTemporaryDirectory { directory in
            let database = try LinkDatabase(path: directory + "/links.sqlite")
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

    @Test("A file whose schema is newer than this server knows is refused with the versions, not read")
    func newerSchema() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/links.sqlite"
            _ = try LinkDatabase(path: path)
            let set = try runTool(["sqlite3", path, "PRAGMA user_version = 99"])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(throws: LinkStoreError.newerSchema(path: path, found: 99, known: LinkDatabase.schemaVersion)) {
                try LinkDatabase(path: path)
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

    @Test("Clicks add up per day, class, outcome and HEAD; a deleted link's clicks are counted as dropped; read from a day on")
    func clicks() throws {
        try withTemporaryDirectory { directory in
            let database = try LinkDatabase(path: directory + "/links.sqlite")
            try database.create(Self.link("a"), now: 1)
            func click(_ suffix: String, _ visitor: String, _ count: Int, head: Bool = false) -> LinkDatabase.ClickCount {
                LinkDatabase.ClickCount(
                    domain: "go.example.com",
                    suffix: suffix,
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
}
