/// Where ACME keeps what must outlive a process and be shared by replicas: the account, certificates,
/// failures, challenge answers and the locks that keep two replicas from ordering the same certificate.
/// certmagic's `Storage` is the model: everything the certificate code does to storage goes through
/// these few operations, so the file system is one implementation among others (the tests run the
/// certificate code on one in memory that fails when told to).
///
/// Keys are relative, `/`-separated paths (`certificates/<CA>/<host>/meta.json`); a key's parent is a
/// folder for `list`. Lock names are keys of their own namespace (`hosts/<CA>/<host>`, `account`).
public protocol Storage: AnyObject, Sendable {
    /// Where it is, for messages (a directory, a URL).
    var location: String { get }
    /// A value, at most `limit` bytes; `.missing` when the key holds nothing.
    func load(_ key: String, limit: Int) throws(StorageError) -> [UInt8]
    /// Replaces the value whole: a reader sees the old value or the new one, never part of either.
    /// `secret` values (private keys) are readable by this user only, from the first byte written.
    func store(_ key: String, _ value: [UInt8], secret: Bool) throws(StorageError)
    /// Removes the key's value, or the folder `key` once it holds nothing.
    func delete(_ key: String)
    func exists(_ key: String) -> Bool
    /// The names directly under the folder `prefix` (values and folders), unordered; empty when none.
    func list(_ prefix: String) -> [String]
    /// Changes whenever the key's value is replaced; nil when there is none. For caches that look again.
    func stamp(_ key: String) -> String?
    /// Waits at most `timeoutSeconds` for the lock `name`, taking over one whose holder stopped beating.
    func lock(_ name: String, owner: String, timeoutSeconds: Int) -> StorageLockOutcome
    /// Who holds the lock `name` now, as its holder wrote it; nil when nobody does.
    func lockHolder(_ name: String) -> String?
    /// The key as a user finds it (`/var/lib/aasa/acme/certificates/…/certificate.pem`).
    func describe(_ key: String) -> String
}

public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    case missing(String)
    case failed(String)

    public var description: String {
        switch self {
        case .missing(let key): return "\(key) does not exist"
        case .failed(let message): return message
        }
    }
}

/// A lock held in a storage: beaten on its own timer while held, released only while still its holder's.
public protocol StorageLockHandle: AnyObject, Sendable {
    /// False once another holder took the lock over (this one was judged dead): its work should stop.
    var isHeld: Bool { get }
    /// Tells the storage the holder is alive; false when the lock is no longer this holder's.
    @discardableResult func heartbeat() -> Bool
    func release()
}

public enum StorageLockOutcome {
    case acquired(any StorageLockHandle)
    /// Still held by another at the deadline.
    case busy
    case failed(String)
}
