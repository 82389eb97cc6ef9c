internal import Glibc

extension Posix {
    /// Creates `path` with `bytes` only if it does not exist yet (`O_EXCL`, which NFSv3+ and EFS honour):
    /// false when another process holds it. The basis of storage locks shared by replicas.
    public static func createExclusively(_ bytes: [UInt8], at path: String, mode: UInt32 = 0o644) throws(SystemError) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd < 0 {
            if errno == EEXIST { return false }
            throw SystemError(call: "create \(path)", code: errno)
        }
        defer { close(fd) }
        if let code = bytes.withUnsafeBytes({ writeAll(fd, $0) }) {
            unlink(path)
            throw SystemError(call: "write \(path)", code: code)
        }
        return true
    }

    /// The clock of the file system holding `directory` (a shared volume's server may be minutes off this
    /// machine): the modification time of a file just written there.
    public static func storageTime(_ directory: String) -> Int? {
        let probe = directory + "/.clock-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        guard (try? createExclusively([], at: probe, mode: 0o600)) == true else { return nil }
        defer { removeFile(probe) }
        return modificationTime(probe)
    }

    /// The file's modification time (Unix seconds); nil when it does not exist.
    public static func modificationTime(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mtim.tv_sec) : nil
    }

    /// Sets the file's modification time to now: a lock's heartbeat.
    public static func touch(_ path: String) -> Bool {
        utimensat(AT_FDCWD, path, nil, 0) == 0
    }
}
