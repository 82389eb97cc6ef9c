import Posix

/// The storage as a directory, shared by replicas over a volume (NFS, a Kubernetes PVC): every value a
/// file written whole (a unique temporary file, then `rename`), folders 0700, secrets 0600 from the
/// start. Locks are files under `locks/` (see `FileStorageLock`).
public final class FileStorage: Storage {
    public let root: String
    /// Seconds after which a lock nobody touched belongs to a replica that died (by the storage's clock).
    public let lockStaleAfter: Int
    /// Longer than any single exchange with the CA (30 s each) between two heartbeats, so a slow CA never
    /// makes a live holder look dead (`acme.lockStaleAfter` sets another).
    public static let defaultLockStaleAfter = 120

    public init(root: String, lockStaleAfter: Int = FileStorage.defaultLockStaleAfter) {
        self.root = root
        self.lockStaleAfter = lockStaleAfter
    }

    /// The storage at `root`, its directory made (0700) when it does not exist yet.
    public static func prepared(root: String, lockStaleAfter: Int = FileStorage.defaultLockStaleAfter) throws(StorageError) -> FileStorage {
        do {
            try Posix.makeDirectories(root, mode: 0o700)
        } catch {
            throw .failed("cannot create \(root): \(error)")
        }
        return FileStorage(root: root, lockStaleAfter: lockStaleAfter)
    }

    public var location: String { root }

    public func describe(_ key: String) -> String { key.isEmpty ? root : "\(root)/\(key)" }

    private func path(_ key: String) -> String { describe(key) }

    public func load(_ key: String, limit: Int) throws(StorageError) -> [UInt8] {
        let path = path(key)
        do {
            return try Posix.readFile(path, limit: limit)
        } catch {
            if !Posix.fileExists(path) { throw .missing(key) }
            throw .failed("cannot read \(path): \(error)")
        }
    }

    public func store(_ key: String, _ value: [UInt8], secret: Bool) throws(StorageError) {
        let path = path(key)
        do {
            try Posix.makeDirectories(Posix.directoryName(path), mode: 0o700)
            try Posix.writeFileAtomically(value, to: path, mode: secret ? 0o600 : 0o644)
        } catch {
            throw .failed("cannot write \(path): \(error)")
        }
    }

    public func delete(_ key: String) {
        let path = path(key)
        if !Posix.removeDirectory(path) { Posix.removeFile(path) }
    }

    public func exists(_ key: String) -> Bool { Posix.fileExists(path(key)) }

    public func list(_ prefix: String) -> [String] {
        // Dot names are this storage's own: temporary files mid-write, clock probes.
        (Posix.directoryEntries(path(prefix)) ?? []).filter { !$0.hasPrefix(".") }
    }

    public func stamp(_ key: String) -> String? { Posix.fileStamp(path(key)) }

    func lockPath(_ name: String) -> String { "\(root)/locks/\(name).lock" }

    public func lock(_ name: String, owner: String, timeoutSeconds: Int) -> StorageLockOutcome {
        switch FileStorageLock.acquire(lockPath(name), owner: owner, timeoutSeconds: timeoutSeconds, staleAfter: lockStaleAfter) {
        case .acquired(let lock): return .acquired(lock)
        case .busy: return .busy
        case .failed(let message): return .failed(message)
        }
    }

    public func lockHolder(_ name: String) -> String? {
        (try? Posix.readFile(lockPath(name), limit: 4096)).map { String(decoding: $0, as: UTF8.self) }
    }
}
