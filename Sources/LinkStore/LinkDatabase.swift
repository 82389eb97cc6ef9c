public import Database
public import Links
internal import Posix
internal import Support

/// Why the link store could not do what was asked.
public enum LinkStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case database(DatabaseError)
    /// The path is taken: the link that holds it.
    case conflict(StoredLink)
    case notFound(domain: String, suffix: String)
    /// The file was written by a newer aasa-server: reading it with this one could lose what it added.
    case newerSchema(path: String, found: Int64, known: Int64)
    /// The config names a store that cannot be used as written (a password file that cannot be read).
    case configuration(String)

    public var description: String {
        switch self {
        case .database(let error): return error.description
        case .conflict(let link):
            return
                "\(link.shortLink) already exists (\(link.state.rawValue), created \(CivilTime(unixSeconds: Int(link.created)).isoSecond)Z)"
        case .notFound(let domain, let suffix): return "no link https://\(domain)/\(suffix)"
        case .configuration(let message): return message
        case .newerSchema(let path, let found, let known):
            return
                "\(path) has link store schema version \(found); this aasa-server knows versions up to \(known) — run a newer aasa-server"
        }
    }
}

/// The short links of every link domain, in one SQLite file (WAL, so the server reads while the command
/// line writes) or in a PostgreSQL database that replicas share. Versioned schema: migrations run at open, in a transaction; a file from a newer server is
/// refused, not read. Every change bumps one revision counter, so the server keeps its table current by
/// asking for what changed after the revision it saw. Updates are recorded in `link_changes`, never
/// silent. One connection per user, not shared between threads.
public final class LinkDatabase {
    /// Each entry takes the schema from the previous version to the next, in either database's spelling;
    /// the schema version is how many have run. Never edit one that has shipped: add the next.
    static func migrations(_ sql: SQLDialect) -> [String] {
        [
            """
            CREATE TABLE links (
                id \(sql.identityKey),
                domain TEXT NOT NULL,
                suffix TEXT NOT NULL,
                parameters TEXT NOT NULL,
                state TEXT NOT NULL CHECK (state IN ('active', 'disabled', 'deleted')),
                created \(sql.integer) NOT NULL,
                updated \(sql.integer) NOT NULL,
                revision \(sql.integer) NOT NULL,
                UNIQUE (domain, suffix)
            );
            CREATE INDEX links_by_revision ON links (revision);
            CREATE TABLE link_changes (
                id \(sql.identityKey),
                link \(sql.integer) NOT NULL REFERENCES links (id),
                at \(sql.integer) NOT NULL,
                change TEXT NOT NULL,
                parameters TEXT NOT NULL
            );
            """,
            """
            CREATE TABLE link_clicks (
                link \(sql.integer) NOT NULL REFERENCES links (id),
                day TEXT NOT NULL,
                visitor TEXT NOT NULL,
                outcome TEXT NOT NULL,
                head \(sql.integer) NOT NULL,
                count \(sql.integer) NOT NULL,
                PRIMARY KEY (link, day, visitor, outcome, head)
            )\(sql.withoutRowID);
            """,
            """
            CREATE TABLE disabled_domains (
                domain TEXT PRIMARY KEY,
                at \(sql.integer) NOT NULL
            )\(sql.withoutRowID);
            """,
            """
            CREATE TABLE secrets (
                name TEXT PRIMARY KEY,
                value TEXT NOT NULL
            )\(sql.withoutRowID);
            CREATE TABLE claims (
                code TEXT PRIMARY KEY,
                link \(sql.integer) NOT NULL REFERENCES links (id),
                at \(sql.integer) NOT NULL
            )\(sql.withoutRowID);
            CREATE INDEX claims_by_time ON claims (at);
            """,
        ]
    }
    public static var schemaVersion: Int64 { Int64(migrations(.sqlite).count) }
    public static let fileName = "links.sqlite"

    let connection: any DatabaseConnection
    /// Where the store is, for messages: the SQLite file, or the PostgreSQL server and database.
    public var path: String { connection.name }

    /// Opens the store at `path`, creating it (mode 0600: unguessable suffixes are secrets) when `create`.
    public convenience init(path: String, create: Bool = true) throws(LinkStoreError) {
        try self.init(.sqlite(path: path), create: create)
    }

    /// Opens the store where `location` says; with `create`, a SQLite file is created and a PostgreSQL
    /// database (which must exist) gets its tables; without, a store not made yet is an error.
    public init(_ location: LinkStoreLocation, create: Bool = true) throws(LinkStoreError) {
        do {
            switch location {
            case .sqlite(let path):
                if create, !Posix.fileExists(path) { _ = try? Posix.createExclusively([], at: path, mode: 0o600) }
                let sqlite = try SQLiteConnection(path: path, create: create)
                try sqlite.execute("PRAGMA foreign_keys = ON")
                // WAL lets the server's reader and a writer work at once; a file on a filesystem without shared
                // memory keeps its journal mode and still works, one at a time.
                _ = try? sqlite.integer("PRAGMA journal_mode = WAL")
                connection = sqlite
            case .postgres(let settings):
                connection = try PostgresConnection(connection: settings.connection, password: settings.password)
                if !create, try connection.schemaVersion() == 0 {
                    throw LinkStoreError.configuration("\(connection.name) holds no link store yet")
                }
            }
            try migrate()
        } catch let error as LinkStoreError {
            throw error
        } catch {
            throw .database(error as? DatabaseError ?? DatabaseError(code: 1, message: "\(error)"))
        }
    }

    private func migrate() throws(LinkStoreError) {
        do {
            let found = try connection.schemaVersion()
            if found > Self.schemaVersion { throw LinkStoreError.newerSchema(path: path, found: found, known: Self.schemaVersion) }
            guard found < Self.schemaVersion else { return }
            try connection.transaction { () throws(DatabaseError) in
                // Read again under the write lock: another process may have migrated meanwhile.
                let current = try connection.schemaVersion()
                guard current < Self.schemaVersion else { return }
                for migration in Self.migrations(connection.dialect)[Int(current)...] { try connection.execute(migration) }
                try connection.setSchemaVersion(Self.schemaVersion)
            }
        } catch let error as LinkStoreError {
            throw error
        } catch {
            throw .database(error as? DatabaseError ?? DatabaseError(code: 1, message: "\(error)"))
        }
    }

    /// What a link's row holds that this server writes; the database assigns `id`.
    static let writtenColumns = "domain, suffix, parameters, state, created, updated, revision"
    static let columns = writtenColumns + ", id"

    private static func read(_ statement: any DatabaseStatement) -> StoredLink {
        StoredLink(
            domain: statement.text(0),
            suffix: statement.text(1),
            // A row this server did not write and cannot read answers nothing rather than something wrong.
            parameters: StoredLink.decode(statement.text(2)) ?? [:],
            state: StoredLink.State(rawValue: statement.text(3)) ?? .disabled,
            created: statement.integer(4),
            updated: statement.integer(5),
            revision: statement.integer(6),
            id: statement.integer(7)
        )
    }

    private func wrap<T>(_ body: () throws(DatabaseError) -> T) throws(LinkStoreError) -> T {
        do { return try body() } catch { throw .database(error) }
    }

    /// Every change `body` makes, committed at once (or none of them, when it throws): an import of a
    /// hundred thousand links is one write to disk, not one per link.
    public func batch<T>(_ body: () throws(LinkStoreError) -> T) throws(LinkStoreError) -> T {
        var failure: LinkStoreError?
        do throws(LinkStoreError) {
            return try wrap { () throws(DatabaseError) -> T in
                try connection.transaction { () throws(DatabaseError) -> T in
                    do throws(LinkStoreError) {
                        return try body()
                    } catch {
                        failure = error
                        // Rolls the whole batch back.
                        throw DatabaseError(code: 4, message: "batch abandoned: \(error)")
                    }
                }
            }
        } catch {
            throw failure ?? error
        }
    }

    /// The link at that path, deleted ones included.
    public func link(domain: String, suffix: String) throws(LinkStoreError) -> StoredLink? {
        try wrap { () throws(DatabaseError) in try find(domain: domain, suffix: suffix) }
    }

    private func find(domain: String, suffix: String) throws(DatabaseError) -> StoredLink? {
        let statement = try connection.prepare("SELECT \(Self.columns) FROM links WHERE domain = ?1 AND suffix = ?2")
        try statement.bind(1, domain)
        try statement.bind(2, suffix)
        return try statement.step() ? Self.read(statement) : nil
    }

    /// Whether a new link may not take this path (a deleted link's path is free again).
    public func isTaken(domain: String, suffix: String) throws(LinkStoreError) -> Bool {
        try link(domain: domain, suffix: suffix).map { $0.state != .deleted } ?? false
    }

    /// A suffix for a new link on `domain`, from the system's random source: unguessable (96 bits), or with
    /// `short` the shortest this store does not hold yet. The caller still creates it, and draws again on a
    /// conflict (another writer may take the same path first).
    public func newSuffix(domain: String, short: Bool) throws(LinkStoreError) -> String {
        var generator = SystemRandomNumberGenerator()
        guard short else {
            return ShortLinkSuffix.unguessable(
                (0..<ShortLinkSuffix.unguessableBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
            )
        }
        var failure: LinkStoreError?
        let suffix = ShortLinkSuffix.short(
            random: { generator.next() },
            isTaken: { candidate in
                do throws(LinkStoreError) {
                    return try isTaken(domain: domain, suffix: candidate)
                } catch {
                    failure = error
                    return false
                }
            }
        )
        if let failure { throw failure }
        return suffix
    }

    /// Stores a new link; `.conflict` with the existing one when its path is taken.
    @discardableResult
    public func create(_ link: StoredLink, now: Int64) throws(LinkStoreError) -> StoredLink {
        var conflict: StoredLink?
        let created = try wrap { () throws(DatabaseError) -> StoredLink? in
            try connection.transaction { () throws(DatabaseError) -> StoredLink? in
                let existing = try find(domain: link.domain, suffix: link.suffix)
                if let existing, existing.state != .deleted {
                    conflict = existing
                    return nil
                }
                var stored = link
                stored.state = .active
                stored.created = now
                stored.updated = now
                stored.revision = try nextRevision()
                let statement = try connection.prepare(
                    existing == nil
                        ? "INSERT INTO links (\(Self.writtenColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id"
                        : "UPDATE links SET parameters = ?3, state = ?4, created = ?5, updated = ?6, revision = ?7 WHERE domain = ?1 AND suffix = ?2"
                )
                try bind(statement, stored)
                // A new row's id is the database's; a link created again keeps its row.
                stored.id = try statement.step() ? statement.integer(0) : existing?.id ?? 0
                try record(stored, change: existing == nil ? "created" : "created again")
                return stored
            }
        }
        if let conflict { throw .conflict(conflict) }
        guard let created else { throw .notFound(domain: link.domain, suffix: link.suffix) }
        return created
    }

    /// Replaces a link's parameters (recorded with the old ones kept in `link_changes`).
    @discardableResult
    public func update(domain: String, suffix: String, parameters: [String: String], now: Int64) throws(LinkStoreError) -> StoredLink {
        try change(domain: domain, suffix: suffix, now: now, change: "updated") { $0.parameters = parameters }
    }

    /// Switches a link on (`active`), off (`disabled`: 410) or removes it (`deleted`).
    @discardableResult
    public func setState(domain: String, suffix: String, _ state: StoredLink.State, now: Int64) throws(LinkStoreError) -> StoredLink {
        try change(domain: domain, suffix: suffix, now: now, change: state.rawValue) { $0.state = state }
    }

    private func change(
        domain: String,
        suffix: String,
        now: Int64,
        change: String,
        _ apply: (inout StoredLink) -> Void
    ) throws(LinkStoreError) -> StoredLink {
        let changed = try wrap { () throws(DatabaseError) -> StoredLink? in
            try connection.transaction { () throws(DatabaseError) -> StoredLink? in
                guard var link = try find(domain: domain, suffix: suffix), link.state != .deleted else { return nil }
                apply(&link)
                link.updated = now
                link.revision = try nextRevision()
                let statement = try connection.prepare(
                    "UPDATE links SET parameters = ?3, state = ?4, created = ?5, updated = ?6, revision = ?7 WHERE domain = ?1 AND suffix = ?2"
                )
                try bind(statement, link)
                try statement.step()
                try record(link, change: change)
                return link
            }
        }
        guard let changed else { throw .notFound(domain: domain, suffix: suffix) }
        return changed
    }

    /// Live links (not deleted), by domain and path; one domain's when `domain` is given.
    public func list(domain: String? = nil) throws(LinkStoreError) -> [StoredLink] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare(
                "SELECT \(Self.columns) FROM links WHERE state != 'deleted' AND (?1 = '' OR domain = ?1) ORDER BY domain, suffix"
            )
            try statement.bind(1, domain ?? "")
            var links: [StoredLink] = []
            while try statement.step() { links.append(Self.read(statement)) }
            return links
        }
    }

    /// A page of live links in order of domain and suffix: those after `after` (from the first when its
    /// domain is empty), at most `limit`; one domain's when `domain` is given.
    public func list(domain: String?, after: (domain: String, suffix: String), limit: Int) throws(LinkStoreError) -> [StoredLink] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare(
                """
                SELECT \(Self.columns) FROM links WHERE state != 'deleted' AND (?1 = '' OR domain = ?1)
                AND (domain > ?2 OR (domain = ?2 AND suffix > ?3)) ORDER BY domain, suffix LIMIT ?4
                """
            )
            try statement.bind(1, domain ?? "")
            try statement.bind(2, after.domain)
            try statement.bind(3, after.suffix)
            try statement.bind(4, Int64(limit))
            var links: [StoredLink] = []
            while try statement.step() { links.append(Self.read(statement)) }
            return links
        }
    }

    /// Every link that changed after `revision` (deleted ones included, so a reader forgets them), oldest
    /// change first, at most `limit`.
    public func changes(after revision: Int64, limit: Int = 10_000) throws(LinkStoreError) -> [StoredLink] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare("SELECT \(Self.columns) FROM links WHERE revision > ?1 ORDER BY revision LIMIT ?2")
            try statement.bind(1, revision)
            try statement.bind(2, Int64(limit))
            var links: [StoredLink] = []
            while try statement.step() { links.append(Self.read(statement)) }
            return links
        }
    }

    /// The kill switch of a link domain: while it is off, every stored link on it answers 410 Gone (the
    /// links themselves are kept as they are, and come back with it). True when the state changed.
    @discardableResult
    public func setDomain(_ domain: String, disabled: Bool, now: Int64) throws(LinkStoreError) -> Bool {
        try wrap { () throws(DatabaseError) in
            if disabled {
                let statement = try connection.prepare(
                    "INSERT INTO disabled_domains (domain, at) VALUES (?1, ?2) ON CONFLICT (domain) DO NOTHING"
                )
                try statement.bind(1, domain)
                try statement.bind(2, now)
                _ = try statement.step()
            } else {
                let statement = try connection.prepare("DELETE FROM disabled_domains WHERE domain = ?1")
                try statement.bind(1, domain)
                _ = try statement.step()
            }
            // Said after the change is committed (this statement was its own transaction, or the caller's
            // commits both), so a replica told reads the new state.
            let changed = connection.changes > 0
            if changed { try announceChange() }
            return changed
        }
    }

    /// Link domains switched off, with the Unix time each was.
    public func disabledDomains() throws(LinkStoreError) -> [String: Int64] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare("SELECT domain, at FROM disabled_domains")
            var domains: [String: Int64] = [:]
            while try statement.step() { domains[statement.text(0)] = statement.integer(1) }
            return domains
        }
    }

    /// The key claim codes are signed with: made once, from the system's random source, the first time it
    /// is asked for, and the same for every server that shares this store.
    public func claimKey() throws(LinkStoreError) -> [UInt8] {
        func stored() throws(DatabaseError) -> [UInt8]? {
            let statement = try connection.prepare("SELECT value FROM secrets WHERE name = 'claim-key'")
            return try statement.step() ? ASCII.bytes(hex: statement.text(0)) : nil
        }
        return try wrap { () throws(DatabaseError) -> [UInt8] in
            if let key = try stored(), key.count == 32 { return key }
            var generator = SystemRandomNumberGenerator()
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let insert = try connection.prepare("INSERT INTO secrets (name, value) VALUES ('claim-key', ?1) ON CONFLICT (name) DO NOTHING")
            try insert.bind(1, ASCII.hex(bytes: key))
            _ = try insert.step()
            // Another process may have made it first: theirs is the key.
            guard let key = try stored(), key.count == 32 else {
                throw DatabaseError(code: 1, message: "the claim key could not be stored")
            }
            return key
        }
    }

    public enum Claim: Sendable, Equatable {
        /// The first claim of the code: the link it names, as it is now.
        case claimed(StoredLink)
        /// Claimed before, at this Unix time: a code works once.
        case alreadyClaimed(at: Int64)
        /// The link is gone or switched off.
        case noLink
    }

    /// Claims `code` for the link at `domain`/`suffix` (the caller checked the code's signature and age).
    /// Claims older than `keepSeconds` are forgotten meanwhile: their codes have expired anyway.
    public func claim(code: String, domain: String, suffix: String, now: Int64, keepSeconds: Int64) throws(LinkStoreError) -> Claim {
        try wrap { () throws(DatabaseError) -> Claim in
            try connection.transaction { () throws(DatabaseError) -> Claim in
                let forget = try connection.prepare("DELETE FROM claims WHERE at < ?1")
                try forget.bind(1, now - keepSeconds)
                _ = try forget.step()
                let earlier = try connection.prepare("SELECT at FROM claims WHERE code = ?1")
                try earlier.bind(1, code)
                if try earlier.step() { return .alreadyClaimed(at: earlier.integer(0)) }
                guard let link = try find(domain: domain, suffix: suffix), link.state == .active else { return .noLink }
                let insert = try connection.prepare(
                    "INSERT INTO claims (code, link, at) SELECT ?1, id, ?4 FROM links WHERE domain = ?2 AND suffix = ?3"
                )
                try insert.bind(1, code)
                try insert.bind(2, domain)
                try insert.bind(3, suffix)
                try insert.bind(4, now)
                _ = try insert.step()
                return .claimed(link)
            }
        }
    }

    /// The revision of the latest change (0 for an empty store).
    public func latestRevision() throws(LinkStoreError) -> Int64 {
        try wrap { () throws(DatabaseError) in try connection.integer("SELECT coalesce(max(revision), 0) FROM links") }
    }

    /// What happened to a link, oldest first: (unix time, change, parameters then).
    public func history(
        domain: String,
        suffix: String
    ) throws(LinkStoreError) -> [(at: Int64, change: String, parameters: [String: String])] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare(
                """
                SELECT link_changes.at, link_changes.change, link_changes.parameters FROM link_changes
                JOIN links ON links.id = link_changes.link WHERE links.domain = ?1 AND links.suffix = ?2 ORDER BY link_changes.id
                """
            )
            try statement.bind(1, domain)
            try statement.bind(2, suffix)
            var rows: [(at: Int64, change: String, parameters: [String: String])] = []
            while try statement.step() {
                rows.append((statement.integer(0), statement.text(1), StoredLink.decode(statement.text(2)) ?? [:]))
            }
            return rows
        }
    }

    /// Clicks of one day by link: (the link's row id, visitor, outcome, head) and how many, added to what
    /// the store holds for that day, in one transaction. Clicks of a link that no longer exists are dropped
    /// (returned, so they are counted, not lost silently).
    public struct ClickCount: Sendable, Equatable {
        /// ``StoredLink/id``.
        public var link: Int64
        public var visitor: String
        public var outcome: String
        public var head: Bool
        public var count: Int

        public init(link: Int64, visitor: String, outcome: String, head: Bool, count: Int) {
            self.link = link
            self.visitor = visitor
            self.outcome = outcome
            self.head = head
            self.count = count
        }
    }

    @discardableResult
    public func addClicks(_ clicks: [ClickCount], day: String) throws(LinkStoreError) -> Int {
        try wrap { () throws(DatabaseError) -> Int in
            try connection.transaction { () throws(DatabaseError) -> Int in
                let statement = try connection.prepare(
                    """
                    INSERT INTO link_clicks (link, day, visitor, outcome, head, count)
                    SELECT id, ?2, ?3, ?4, ?5, ?6 FROM links WHERE id = ?1
                    ON CONFLICT (link, day, visitor, outcome, head) DO UPDATE SET count = link_clicks.count + excluded.count
                    """
                )
                var dropped = 0
                for click in clicks {
                    statement.reset()
                    try statement.bind(1, click.link)
                    try statement.bind(2, day)
                    try statement.bind(3, click.visitor)
                    try statement.bind(4, click.outcome)
                    try statement.bind(5, click.head ? 1 : 0)
                    try statement.bind(6, Int64(click.count))
                    try statement.step()
                    if connection.changes == 0 { dropped += click.count }
                }
                return dropped
            }
        }
    }

    /// Deletes the counts of days before `firstKeptDay` (YYYY-MM-DD): the retention limit. Returns how many
    /// rows went.
    @discardableResult
    public func forgetClicks(before firstKeptDay: String) throws(LinkStoreError) -> Int {
        try wrap { () throws(DatabaseError) -> Int in
            let statement = try connection.prepare("DELETE FROM link_clicks WHERE day < ?1")
            try statement.bind(1, firstKeptDay)
            try statement.step()
            return connection.changes
        }
    }

    /// A link's clicks from `firstDay` (YYYY-MM-DD, UTC) on, by day, visitor class, outcome and HEAD.
    public func clicks(
        domain: String,
        suffix: String,
        from firstDay: String
    ) throws(LinkStoreError) -> [(
        day: String, visitor: String, outcome: String, head: Bool, count: Int
    )] {
        try wrap { () throws(DatabaseError) in
            let statement = try connection.prepare(
                """
                SELECT link_clicks.day, link_clicks.visitor, link_clicks.outcome, link_clicks.head, link_clicks.count
                FROM link_clicks JOIN links ON links.id = link_clicks.link
                WHERE links.domain = ?1 AND links.suffix = ?2 AND link_clicks.day >= ?3
                ORDER BY link_clicks.day, link_clicks.visitor, link_clicks.outcome, link_clicks.head
                """
            )
            try statement.bind(1, domain)
            try statement.bind(2, suffix)
            try statement.bind(3, firstDay)
            var rows: [(day: String, visitor: String, outcome: String, head: Bool, count: Int)] = []
            while try statement.step() {
                rows.append((statement.text(0), statement.text(1), statement.text(2), statement.integer(3) != 0, Int(statement.integer(4))))
            }
            return rows
        }
    }

    private func nextRevision() throws(DatabaseError) -> Int64 {
        try announceChange()
        return try connection.integer("SELECT coalesce(max(revision), 0) + 1 FROM links")
    }

    /// The channel replicas listen on (PostgreSQL): told at the commit of every change, so a replica reads
    /// it at once instead of at its next poll. Several in one transaction arrive as one.
    static let changeChannel = "aasa_links"

    private func announceChange() throws(DatabaseError) {
        if connection.dialect == .postgres { try connection.execute("NOTIFY \(Self.changeChannel)") }
    }

    /// A socket that turns readable when another connection changed the store (PostgreSQL's NOTIFY); nil
    /// for SQLite, whose readers poll. Call ``takeChangeSignals()`` once it is readable.
    public func listenForChanges() -> Int32? {
        guard let postgres = connection as? PostgresConnection else { return nil }
        return try? postgres.listen(Self.changeChannel)
    }

    /// True when a change was announced since the last call.
    public func takeChangeSignals() throws(LinkStoreError) -> Bool {
        guard let postgres = connection as? PostgresConnection else { return false }
        return try wrap { () throws(DatabaseError) in try postgres.takeNotifications() }
    }

    private func bind(_ statement: any DatabaseStatement, _ link: StoredLink) throws(DatabaseError) {
        try statement.bind(1, link.domain)
        try statement.bind(2, link.suffix)
        try statement.bind(3, StoredLink.encode(link.parameters))
        try statement.bind(4, link.state.rawValue)
        try statement.bind(5, link.created)
        try statement.bind(6, link.updated)
        try statement.bind(7, link.revision)
    }

    private func record(_ link: StoredLink, change: String) throws(DatabaseError) {
        let statement = try connection.prepare(
            "INSERT INTO link_changes (link, at, change, parameters) SELECT id, ?3, ?4, ?5 FROM links WHERE domain = ?1 AND suffix = ?2"
        )
        try statement.bind(1, link.domain)
        try statement.bind(2, link.suffix)
        try statement.bind(3, link.updated)
        try statement.bind(4, change)
        try statement.bind(5, StoredLink.encode(link.parameters))
        try statement.step()
    }
}
