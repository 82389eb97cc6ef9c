public import Database
import Posix
import Support
import Synchronization

/// The storage in a PostgreSQL database that replicas share (the one their short links are kept in), for
/// clusters without a volume every replica can write: values are rows of `acme_storage` (written whole
/// by one statement, so a reader sees the old value or the new one), folders are the keys' prefixes, and
/// locks are rows of `acme_locks` whose holders beat on the database's clock (a replica's own clock may be
/// off). One connection, used by one thread at a time and made again after a failure; every call waits
/// at most libpq's connect timeout and the session's statement timeout — and none is made on an event
/// loop (the challenge board's own thread copies answers into memory).
public final class PostgresStorage: Storage, @unchecked Sendable {
    public let login: PostgresLogin
    public let lockStaleAfter: Int
    /// Guards `held`: the connection is used by one thread at a time.
    private let connectionLock = Mutex<Void>(())
    private var held: PostgresConnection?

    public init(login: PostgresLogin, lockStaleAfter: Int = FileStorage.defaultLockStaleAfter) {
        self.login = login
        self.lockStaleAfter = lockStaleAfter
    }

    /// The connection string holds no password (the config refuses one).
    public var location: String { login.description }

    public func describe(_ key: String) -> String { key.isEmpty ? location : "\(location), acme_storage \(key)" }

    /// Made once per database by whichever replica comes first (under the link store's write lock, so two
    /// replicas starting together do not race to create them).
    static let schema = """
        CREATE TABLE IF NOT EXISTS acme_storage (key TEXT PRIMARY KEY, value TEXT NOT NULL, stamp BIGINT NOT NULL);
        CREATE TABLE IF NOT EXISTS acme_locks (name TEXT PRIMARY KEY, holder TEXT NOT NULL, beat BIGINT NOT NULL)
        """

    /// The database's own time, in whole seconds: every replica judges a lock's age by the same clock.
    static let now = "extract(epoch from clock_timestamp())::bigint"

    /// `body` on the connection (made when there is none); a failure drops it, so the next call connects
    /// again — the database may have restarted.
    private func withConnection<T>(_ body: (PostgresConnection) throws(DatabaseError) -> T) throws(StorageError) -> T {
        var failure: DatabaseError?
        let result: T? = connectionLock.withLock { _ in
            do throws(DatabaseError) {
                if held == nil {
                    let made = try PostgresConnection(connection: login.connection, password: login.password)
                    try made.transaction { () throws(DatabaseError) in try made.execute(Self.schema) }
                    held = made
                }
                return try body(held!)
            } catch {
                held = nil
                failure = error
                return nil
            }
        }
        guard let result else { throw .failed(failure?.description ?? "PostgreSQL: no result") }
        return result
    }

    public func load(_ key: String, limit: Int) throws(StorageError) -> [UInt8] {
        let hex = try withConnection { connection throws(DatabaseError) -> String? in
            let statement = try connection.prepare("SELECT value FROM acme_storage WHERE key = ?1")
            try statement.bind(1, key)
            return try statement.step() ? statement.text(0) : nil
        }
        guard let hex else { throw .missing(key) }
        guard hex.utf8.count / 2 <= limit else { throw .failed("\(describe(key)) is larger than \(limit) bytes") }
        guard let bytes = ASCII.bytes(hex: hex) else { throw .failed("\(describe(key)) is not what this server wrote") }
        return bytes
    }

    /// Every value is a secret of the database (who may read it is the database's grant), so `secret`
    /// changes nothing here.
    public func store(_ key: String, _ value: [UInt8], secret: Bool) throws(StorageError) {
        try withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare(
                """
                INSERT INTO acme_storage (key, value, stamp) VALUES (?1, ?2, ?3)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, stamp = excluded.stamp
                """
            )
            try statement.bind(1, key)
            try statement.bind(2, ASCII.hex(bytes: value))
            try statement.bind(3, Int64.random(in: 1...Int64.max))
            try statement.step()
        }
    }

    /// A folder is the keys under it: it goes with its last value, and deleting a folder deletes nothing.
    public func delete(_ key: String) {
        _ = try? withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare("DELETE FROM acme_storage WHERE key = ?1")
            try statement.bind(1, key)
            try statement.step()
        }
    }

    public func exists(_ key: String) -> Bool {
        (try? withConnection { connection throws(DatabaseError) -> Bool in
            let statement = try connection.prepare(
                "SELECT 1 FROM acme_storage WHERE key = ?1 OR left(key, length(?1) + 1) = ?1 || '/' LIMIT 1"
            )
            try statement.bind(1, key)
            return try statement.step()
        }) ?? false
    }

    public func list(_ prefix: String) -> [String] {
        let keys =
            (try? withConnection { connection throws(DatabaseError) -> [String] in
                let statement = try connection.prepare(
                    "SELECT substr(key, length(?1) + 2) FROM acme_storage WHERE left(key, length(?1) + 1) = ?1 || '/'"
                )
                try statement.bind(1, prefix)
                var rest: [String] = []
                while try statement.step() { rest.append(statement.text(0)) }
                return rest
            }) ?? []
        var names = Set<String>()
        for rest in keys { names.insert(String(rest.prefix { $0 != "/" })) }
        return Array(names)
    }

    public func stamp(_ key: String) -> String? {
        (try? withConnection { connection throws(DatabaseError) -> String? in
            let statement = try connection.prepare("SELECT stamp FROM acme_storage WHERE key = ?1")
            try statement.bind(1, key)
            return try statement.step() ? String(statement.integer(0)) : nil
        }) ?? nil
    }

    /// Polls every quarter second: a stale lock (no beat for `lockStaleAfter` seconds of the database's
    /// time) is deleted and the lock taken in the same transaction, so of two replicas that both saw it
    /// stale, one takes it.
    public func lock(_ name: String, owner: String, timeoutSeconds: Int) -> StorageLockOutcome {
        let holder = "\(owner) \(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
        let deadline = Posix.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000
        while true {
            do throws(StorageError) {
                let taken = try withConnection { connection throws(DatabaseError) -> Bool in
                    try connection.transaction { () throws(DatabaseError) -> Bool in
                        let stale = try connection.prepare("DELETE FROM acme_locks WHERE name = ?1 AND beat < \(Self.now) - ?2")
                        try stale.bind(1, name)
                        try stale.bind(2, Int64(lockStaleAfter))
                        try stale.step()
                        let insert = try connection.prepare(
                            "INSERT INTO acme_locks (name, holder, beat) VALUES (?1, ?2, \(Self.now)) ON CONFLICT (name) DO NOTHING"
                        )
                        try insert.bind(1, name)
                        try insert.bind(2, holder)
                        try insert.step()
                        return connection.changes == 1
                    }
                }
                if taken {
                    let lock = PostgresStorageLock(storage: self, name: name, holder: holder)
                    lock.startHeartbeat()
                    return .acquired(lock)
                }
            } catch {
                return .failed("cannot take the lock \(name) in \(location): \(error)")
            }
            if Posix.monotonicMilliseconds() >= deadline { return .busy }
            Posix.sleep(milliseconds: 250)
        }
    }

    public func lockHolder(_ name: String) -> String? {
        (try? withConnection { connection throws(DatabaseError) -> String? in
            let statement = try connection.prepare("SELECT holder FROM acme_locks WHERE name = ?1")
            try statement.bind(1, name)
            return try statement.step() ? statement.text(0) : nil
        }) ?? nil
    }

    /// True while the row is still this holder's (its beat moved to now); false once another took it over.
    fileprivate func beat(_ name: String, holder: String) -> Bool {
        (try? withConnection { connection throws(DatabaseError) -> Bool in
            let statement = try connection.prepare("UPDATE acme_locks SET beat = \(Self.now) WHERE name = ?1 AND holder = ?2")
            try statement.bind(1, name)
            try statement.bind(2, holder)
            try statement.step()
            return connection.changes == 1
        }) ?? false
    }

    fileprivate func release(_ name: String, holder: String) {
        _ = try? withConnection { connection throws(DatabaseError) in
            let statement = try connection.prepare("DELETE FROM acme_locks WHERE name = ?1 AND holder = ?2")
            try statement.bind(1, name)
            try statement.bind(2, holder)
            try statement.step()
        }
    }
}

/// A lock row of a `PostgresStorage`, beaten every few seconds by a thread of its own while held; the beat
/// and the release act only on the row that still names this acquisition's holder.
final class PostgresStorageLock: StorageLockHandle, @unchecked Sendable {
    private let storage: PostgresStorage
    let name: String
    let holder: String
    private let stopping = Atomic<Bool>(false)
    private let lost = Atomic<Bool>(false)
    private var heartbeatThread: Posix.Thread?

    fileprivate init(storage: PostgresStorage, name: String, holder: String) {
        self.storage = storage
        self.name = name
        self.holder = holder
    }

    var isHeld: Bool { !lost.load(ordering: .acquiring) }

    @discardableResult
    func heartbeat() -> Bool {
        guard isHeld else { return false }
        if storage.beat(name, holder: holder) { return true }
        lost.store(true, ordering: .releasing)
        return false
    }

    fileprivate func startHeartbeat() {
        heartbeatThread = try? Posix.Thread { [self] in
            var waited = 0
            while !stopping.load(ordering: .acquiring) && isHeld {
                Posix.sleep(milliseconds: 250)
                waited += 250
                if waited >= FileStorageLock.heartbeatSeconds * 1000 {
                    waited = 0
                    heartbeat()
                }
            }
        }
    }

    func release() {
        stopping.store(true, ordering: .releasing)
        heartbeatThread?.join()
        heartbeatThread = nil
        storage.release(name, holder: holder)
        lost.store(true, ordering: .releasing)
    }

    deinit { stopping.store(true, ordering: .releasing) }
}
