internal import CLinux
internal import Glibc

/// Why a file could not be read, in words a user can act on.
public struct FileError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        case system(SystemError)
        /// A FIFO, a device, a socket or a directory: reading it could block forever or never end.
        case notRegularFile(String)
        case tooLarge(limit: Int, size: Int)
    }

    public var path: String
    public var kind: Kind

    /// "no such file", "is a FIFO, not a regular file", "is 8.0 GiB; the limit is 1 MiB".
    public var message: String {
        switch kind {
        case .system(let error): return error.isNoSuchFile ? "no such file" : error.reason.lowercased()
        case .notRegularFile(let what): return "is \(what), not a regular file"
        case .tooLarge(let limit, let size): return "is \(Posix.byteCount(size)); the limit for this file is \(Posix.byteCount(limit))"
        }
    }

    public var description: String { "\(path): \(message)" }
    public var isNoSuchFile: Bool {
        if case .system(let error) = kind { return error.isNoSuchFile }
        return false
    }
}

/// File access for the command line and the config loader, without Foundation (which would add
/// ~9 MB of resident libraries to a server whose idle memory we promise to keep below nginx's).
extension Posix {
    /// Read limits by what a file is (docs/serving.md): generous for real files, small enough that a
    /// mistake (a log file, a disk image) is refused before it is loaded into memory.
    public enum ReadLimit {
        /// A config: a million hosts in one file is about 100 MB.
        public static let config = 256 << 20
        /// A hosted document: Apple refuses anything over 128 KB; 1 MiB leaves room to say by how much.
        public static let document = 1 << 20
        /// A certificate chain or a key.
        public static let certificate = 1 << 20
    }

    /// Reads a whole regular file, at most `limit` bytes. Opened non-blocking so that a FIFO cannot
    /// block the caller, then `fstat`ed through the opened descriptor: anything but a regular file
    /// (after symlinks) is refused before a byte is read, and so is a file larger than `limit`.
    public static func readFile(_ path: String, limit: Int = ReadLimit.config) throws(FileError) -> [UInt8] {
        let (fd, openError) = retrying { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
        if fd < 0 { throw FileError(path: path, kind: .system(SystemError(call: "open", code: openError))) }
        defer { close(fd) }
        var info = stat()
        let (statResult, statError) = retrying { fstat(fd, &info) }
        if statResult < 0 { throw FileError(path: path, kind: .system(SystemError(call: "fstat", code: statError))) }
        if let what = fileTypeName(info.st_mode) { throw FileError(path: path, kind: .notRegularFile(what)) }
        let size = Int(info.st_size)
        if size > limit { throw FileError(path: path, kind: .tooLarge(limit: limit, size: size)) }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        // The size fstat gave is read into an exact buffer. Whether the file grew since is asked with a
        // small probe read, so the usual case never grows the buffer (growing doubles its capacity: a
        // 100 MB config would keep 200 MB). A file that grows while we read is read up to the limit.
        var probe = [UInt8](repeating: 0, count: 4096)
        while true {
            let (count, code): (Int, Int32)
            if offset < bytes.count {
                (count, code) = bytes.withUnsafeMutableBytes { raw in
                    retrying { Glibc.read(fd, raw.baseAddress! + offset, raw.count - offset) }
                }
            } else {
                (count, code) = probe.withUnsafeMutableBytes { raw in retrying { Glibc.read(fd, raw.baseAddress!, raw.count) } }
                if count > 0 { bytes += probe[..<count] }
            }
            if count < 0 { throw FileError(path: path, kind: .system(SystemError(call: "read", code: code))) }
            if count == 0 { break }
            offset += count
            if offset > limit { throw FileError(path: path, kind: .tooLarge(limit: limit, size: offset)) }
        }
        if offset < bytes.count { bytes.removeSubrange(offset...) }
        return bytes
    }

    /// Reads standard input to its end, at most `limit` bytes (the `-` of `--file -`). Blocking is what
    /// the user asked for here: the data comes from a pipe or the terminal.
    public static func readStandardInput(limit: Int) throws(FileError) -> [UInt8] {
        try readToEnd(0, name: "<stdin>", limit: limit)
    }

    /// What `path` is when it is a named pipe or a character device (`<(…)`, `/dev/stdin`): "a FIFO
    /// (named pipe)", "a character device"; nil for anything else.
    public static func pipeKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let type = info.st_mode & S_IFMT
        return type == S_IFIFO || type == S_IFCHR ? fileTypeName(info.st_mode) : nil
    }

    /// Reads a named pipe (process substitution: `--file <(curl …)`) or a character device to its end, at
    /// most `limit` bytes, for a command line tool that was given it. The server never reads these: it
    /// uses ``readFile(_:limit:)``, which refuses them.
    public static func readPipe(_ path: String, limit: Int) throws(FileError) -> [UInt8] {
        // Opened without waiting for a writer (a named pipe nobody writes to is said at once, not a
        // hang), then read blocking: a pipe with a writer (process substitution) delivers until it ends.
        let (fd, openError) = retrying { open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) }
        if fd < 0 { throw FileError(path: path, kind: .system(SystemError(call: "open", code: openError))) }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var info = stat()
        let (statResult, statError) = retrying { fstat(fd, &info) }
        if statResult < 0 { throw FileError(path: path, kind: .system(SystemError(call: "fstat", code: statError))) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFIFO || type == S_IFCHR || type == S_IFSOCK || type == S_IFREG else {
            throw FileError(path: path, kind: .notRegularFile(fileTypeName(info.st_mode) ?? "not a file"))
        }
        let bytes = try readToEnd(fd, name: path, limit: limit)
        if bytes.isEmpty && type == S_IFIFO { throw FileError(path: path, kind: .notRegularFile("a FIFO (named pipe) nobody writes to")) }
        return bytes
    }

    private static func readToEnd(_ fd: Int32, name: String, limit: Int) throws(FileError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let (count, code) = chunk.withUnsafeMutableBytes { raw in retrying { Glibc.read(fd, raw.baseAddress!, raw.count) } }
            if count < 0 { throw FileError(path: name, kind: .system(SystemError(call: "read", code: code))) }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            if bytes.count > limit { throw FileError(path: name, kind: .tooLarge(limit: limit, size: bytes.count)) }
        }
    }

    /// What identifies a file's content cheaply: device, inode, size and modification time (following
    /// symlinks). Nil when the file is missing.
    public static func fileStamp(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
    }

    /// "a FIFO", "a directory"… for anything but a regular file; nil for a regular file.
    static func fileTypeName(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// "512 B", "1 MiB", "8.0 GiB".
    static func byteCount(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if value == value.rounded() { return "\(Int(value)) \(units[unit])" }
        return "\((value * 10).rounded() / 10) \(units[unit])"
    }

    public static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String, mode: UInt32 = 0o755) throws(SystemError) {
        guard !path.isEmpty, !fileExists(path) else { return }
        let parent = directoryName(path)
        if parent != path { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST { throw SystemError(call: "mkdir \(path)", code: errno) }
    }

    /// Writes through a temporary file in the same directory, flushed, then renamed over the target:
    /// a reader sees the old file or the new one, never half of one.
    public static func writeFileAtomically(_ bytes: [UInt8], to path: String, mode: UInt32 = 0o644) throws(SystemError) {
        try writeFileAtomically(parts: CollectionOfOne(bytes), to: path, mode: mode)
    }

    /// As ``writeFileAtomically(_:to:mode:)``, the content made part by part as it is written (a lazy
    /// sequence never holds the whole file: a snapshot of a million sites is written in file-sized parts).
    public static func writeFileAtomically(parts: some Sequence<[UInt8]>, to path: String, mode: UInt32 = 0o644) throws(SystemError) {
        let directory = directoryName(path)
        try makeDirectories(directory)
        // A name no other writer can have (every container is pid 1, replicas share storage), created
        // here and nowhere else (O_EXCL, no symlink followed), private from its first byte.
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            temporary = path + ".tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SystemError(call: "open \(temporary)", code: errno) }
        // Exactly the mode asked for, whatever the umask, before any byte is written (private keys stay 0600).
        _ = fchmod(fd, mode)
        var failure: SystemError?
        for part in parts {
            if let code = part.withUnsafeBytes({ writeAll(fd, $0) }) {
                failure = SystemError(call: "write \(temporary)", code: code)
                break
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = SystemError(call: "fsync \(temporary)", code: errno) }
        close(fd)
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

    public static func removeFile(_ path: String) { _ = unlink(path) }

    /// Removes an empty directory; false when it is not empty or cannot be removed.
    public static func removeDirectory(_ path: String) -> Bool { rmdir(path) == 0 }

    /// A second name for a file; false when `to` exists (never replaced) or the link cannot be made.
    public static func linkFile(_ from: String, to: String) -> Bool { link(from, to) == 0 }

    /// Appends `bytes` with one write on an `O_APPEND` descriptor (creating the file with `mode`): lines
    /// appended by several processes to one file interleave whole, and a crash cuts off at most the end.
    public static func appendToFile(_ bytes: [UInt8], at path: String, mode: UInt32 = 0o644) throws(SystemError) {
        let fd = try check("open \(path)") { open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode) }
        defer { close(fd) }
        if let code = bytes.withUnsafeBytes({ writeAll(fd, $0) }) { throw SystemError(call: "write \(path)", code: code) }
    }

    /// The file's size in bytes; nil when it does not exist.
    public static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    public static func renameFile(_ from: String, to: String) throws(SystemError) {
        if rename(from, to) != 0 { throw SystemError(call: "rename \(from)", code: errno) }
    }

    /// The names in a directory (no `.` and `..`), unsorted; nil if it cannot be read.
    public static func directoryEntries(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
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

    public static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The current working directory.
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
