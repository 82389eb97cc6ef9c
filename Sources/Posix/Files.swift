internal import CLinux
internal import Glibc

/// File access for the command line and the config loader, without Foundation (which would add
/// ~9 MB of resident libraries to a server whose idle memory we promise to keep below nginx's).
extension Posix {
    /// Reads a whole regular file.
    public static func readFile(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = try check("open \(path)") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { Glibc.close(fd) }
        var info = stat()
        _ = try check("fstat") { fstat(fd, &info) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw SystemError(call: "read \(path)", code: EISDIR) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += chunk[0..<count]
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                throw SystemError(call: "read \(path)", code: errno)
            }
        }
    }

    public static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(SystemError) {
        guard !path.isEmpty, !fileExists(path) else { return }
        let parent = directoryName(path)
        if parent != path { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw SystemError(call: "mkdir \(path)", code: errno) }
    }

    /// Writes through a temporary file in the same directory, flushed, then renamed over the target:
    /// a reader sees the old file or the new one, never half of one.
    public static func writeFileAtomically(_ bytes: [UInt8], to path: String, mode: UInt32 = 0o644) throws(SystemError) {
        let directory = directoryName(path)
        try makeDirectories(directory)
        let temporary = path + ".tmp-\(getpid())"
        let fd = try check("open \(temporary)") { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        var offset = 0
        let failure: SystemError? = bytes.withUnsafeBytes { raw -> SystemError? in
            while offset < raw.count {
                let count = Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                if count > 0 {
                    offset += count
                } else if errno != EINTR {
                    return SystemError(call: "write \(temporary)", code: errno)
                }
            }
            return nil
        }
        // The umask must not loosen or tighten what the caller asked for (private keys are 0600).
        _ = fchmod(fd, mode)
        if failure == nil && fsync(fd) != 0 {
            Glibc.close(fd)
            unlink(temporary)
            throw SystemError(call: "fsync \(temporary)", code: errno)
        }
        Glibc.close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw SystemError(call: "rename \(path)", code: code)
        }
    }

    /// The absolute path with symlinks resolved; for a path that does not exist yet, its existing
    /// parent is resolved and the rest appended (so "would this overwrite X" works before writing).
    public static func canonicalPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let parent = directoryName(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if parent == path || parent.isEmpty { return path }
        return canonicalPath(parent) + "/" + name
    }

    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    public static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

extension Posix {
    /// Raises the soft open-file limit to the hard limit (as nginx's worker_rlimit_nofile does): the
    /// common default of 1,024 would cap a server promised to hold 10,000 connections. Returns the limit.
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(clamping: raised.rlim_cur) }
        }
        return Int(clamping: limit.rlim_cur)
    }
}

extension Posix {
    /// Hands memory freed by a reload back to the kernel. glibc keeps freed heap pages mapped, so
    /// without this every full reload of a large config would leave the process at its peak size.
    public static func releaseFreeMemory() {
        _ = malloc_trim(0)
    }

    /// nice +10 for the calling thread only (Linux applies setpriority to a thread id).
    public static func lowerCurrentThreadPriority() {
        let thread = id_t(CLinux_gettid())
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, 10)
    }
}
