import Posix

/// A lock in the storage directory, for replicas that share it (certmagic's scheme): a file created
/// exclusively, whose holder touches it every few seconds; one not touched for `staleAfter` seconds
/// belongs to a replica that died and is taken over.
final class StorageLock: @unchecked Sendable {
    let path: String
    /// Longer than any single exchange with the CA (30 s each) between two heartbeats, so a slow CA never
    /// makes a live holder look dead.
    static let staleAfter = 120

    private init(path: String) { self.path = path }

    enum Outcome {
        case acquired(StorageLock)
        /// Still held by another replica at the deadline.
        case busy
        case failed(String)
    }

    /// Waits (polling each second, at most `timeoutSeconds`) for the lock at `path`.
    static func acquire(_ path: String, owner: String, timeoutSeconds: Int) -> Outcome {
        let deadline = Posix.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000
        do {
            try Posix.makeDirectories(Posix.directoryName(path), mode: 0o700)
        } catch {
            return .failed("cannot create the lock directory: \(error)")
        }
        while true {
            do {
                if try Posix.createExclusively(Array("\(owner)\n".utf8), at: path) { return .acquired(StorageLock(path: path)) }
            } catch {
                return .failed("cannot create \(path): \(error)")
            }
            if let touched = Posix.modificationTime(path), Int(Posix.unixTime()) - touched > staleAfter {
                // The holder stopped touching it: take it over (remove, then race for it like anyone else).
                Posix.removeFile(path)
                continue
            }
            if Posix.monotonicMilliseconds() >= deadline { return .busy }
            Posix.sleep(milliseconds: 1000)
        }
    }

    func heartbeat() { _ = Posix.touch(path) }

    func release() { Posix.removeFile(path) }
}
