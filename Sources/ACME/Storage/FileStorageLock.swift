import Posix
import Synchronization

/// A lock in a `FileStorage` directory, for replicas that share it: a file created exclusively and holding
/// its holder's name and a nonce of this acquisition, touched every few seconds by a heartbeat thread of
/// its own while it is held. One not touched for `staleAfter` seconds by the storage's clock belongs to a
/// replica that died, and is taken over without ever removing a live holder's lock:
///
/// 1. the stale file is moved aside with `rename` (atomic: of two replicas that both saw it stale, one
///    moves it, the other finds nothing to move);
/// 2. the one that moved it checks it moved the file it judged stale (the same nonce) — a fresh lock moved
///    by mistake is put back with `link`, which cannot overwrite a newer one;
/// 3. then it races for the lock like anyone else, with an exclusive create.
///
/// `release` and the heartbeat only ever act on a lock that still holds this acquisition's nonce.
final class FileStorageLock: StorageLockHandle, @unchecked Sendable {
    let path: String
    /// What this acquisition wrote: the holder and a nonce no other acquisition has.
    let content: [UInt8]
    static let heartbeatSeconds = 10

    private let stopping = Atomic<Bool>(false)
    private let lost = Atomic<Bool>(false)
    private var heartbeatThread: Posix.Thread?

    private init(path: String, content: [UInt8]) {
        self.path = path
        self.content = content
    }

    enum Outcome {
        case acquired(FileStorageLock)
        /// Still held by another replica at the deadline.
        case busy
        case failed(String)
    }

    /// Waits (polling each second, at most `timeoutSeconds`) for the lock at `path`. `clock` is the
    /// storage's time (a replica's own clock may be minutes off the file server's).
    static func acquire(
        _ path: String,
        owner: String,
        timeoutSeconds: Int,
        staleAfter: Int = FileStorage.defaultLockStaleAfter,
        clock: (String) -> Int? = storageTime
    ) -> Outcome {
        let deadline = Posix.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000
        do {
            try Posix.makeDirectories(Posix.directoryName(path), mode: 0o700)
        } catch {
            return .failed("cannot create the lock directory: \(error)")
        }
        let content = Array("\(owner) \(String(UInt64.random(in: 0...UInt64.max), radix: 16))\n".utf8)
        while true {
            do {
                if try Posix.createExclusively(content, at: path, mode: 0o600) {
                    let lock = FileStorageLock(path: path, content: content)
                    lock.startHeartbeat()
                    return .acquired(lock)
                }
            } catch {
                return .failed("cannot create \(path): \(error)")
            }
            if let seen = try? Posix.readFile(path, limit: 4096), let touched = Posix.modificationTime(path),
                let now = clock(Posix.directoryName(path)), now - touched > staleAfter
            {
                takeOver(path, judged: seen)
                continue
            }
            if Posix.monotonicMilliseconds() >= deadline { return .busy }
            Posix.sleep(milliseconds: 1000)
        }
    }

    /// Moves the stale lock aside; puts it back if it turns out to be another, fresh one.
    private static func takeOver(_ path: String, judged: [UInt8]) {
        let aside = path + ".stale-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        guard (try? Posix.renameFile(path, to: aside)) != nil else { return }
        defer { Posix.removeFile(aside) }
        if let moved = try? Posix.readFile(aside, limit: 4096), moved != judged {
            _ = Posix.linkFile(aside, to: path)
        }
    }

    /// The storage's clock: the modification time of a file just written there.
    static func storageTime(_ directory: String) -> Int? { Posix.storageTime(directory) }

    /// False once the lock file no longer holds this acquisition (another replica took it over): an order
    /// should stop.
    var isHeld: Bool { !lost.load(ordering: .relaxed) }

    /// Touches the lock if it is still this acquisition's; false when it is not.
    @discardableResult
    func heartbeat() -> Bool {
        guard (try? Posix.readFile(path, limit: 4096)) == content else {
            lost.store(true, ordering: .relaxed)
            return false
        }
        return Posix.touch(path)
    }

    /// On its own timer, so a 90 s DNS hook or a slow CA never lets the lock go stale.
    private func startHeartbeat() {
        heartbeatThread = try? Posix.Thread { [self] in
            var elapsed = 0
            while !stopping.load(ordering: .relaxed) {
                Posix.sleep(milliseconds: 250)
                elapsed += 250
                if elapsed >= Self.heartbeatSeconds * 1000 {
                    elapsed = 0
                    if !heartbeat() { return }
                }
            }
        }
    }

    /// Removes the lock only if it is still this acquisition's (moved aside first, so a takeover in between
    /// is put back, never deleted).
    func release() {
        stopping.store(true, ordering: .relaxed)
        heartbeatThread?.join()
        heartbeatThread = nil
        let aside = path + ".release-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        guard (try? Posix.renameFile(path, to: aside)) != nil else { return }
        defer { Posix.removeFile(aside) }
        if (try? Posix.readFile(aside, limit: 4096)) != content { _ = Posix.linkFile(aside, to: path) }
    }

    deinit {
        stopping.store(true, ordering: .relaxed)
        heartbeatThread?.join()
    }
}
