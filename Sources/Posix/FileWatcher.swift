internal import CLinux
internal import Glibc

/// Watches the directories holding the config and every file it references.
///
/// Directories, not files: an atomic rename, an editor replacing the file, a Kubernetes ConfigMap
/// swapping its `..data` symlink — all show up as events in the directory, whereas a watch on the
/// file itself would follow the old inode and miss them. Where inotify is unavailable, the caller
/// polls ``Fingerprint``s instead.
public final class FileWatcher {
    public let fd: Int32
    private var watchedNames: [Int32: Set<String>] = [:]
    /// Name patterns (`*.json` of `sites.d/*.json`) per watch: any matching name is relevant.
    private var watchedPatterns: [Int32: [String]] = [:]
    private let matches: (String, String) -> Bool

    /// Nil when inotify cannot be used (the caller falls back to polling). An entry whose last component
    /// has `*` or `?` watches every name `matches` accepts in that directory.
    public init?(files: [String], matches: @escaping (_ pattern: String, _ name: String) -> Bool = { $0 == $1 }) {
        self.matches = matches
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        fd = descriptor
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        for file in files {
            let directory = Posix.directoryName(file)
            let name = file.split(separator: "/").last.map(String.init) ?? file
            let watch = inotify_add_watch(descriptor, directory, mask)
            guard watch >= 0 else {
                Glibc.close(descriptor)
                return nil
            }
            if name.contains("*") || name.contains("?") {
                watchedPatterns[watch, default: []].append(name)
            } else {
                watchedNames[watch, default: []].insert(name)
            }
        }
    }

    deinit { Glibc.close(fd) }

    /// Drains pending events; true when one concerns a watched file (or a `..` entry, which is how
    /// Kubernetes swaps a mounted ConfigMap).
    public func drain() -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return relevant }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (watch, length) = buffer.withUnsafeBytes { raw -> (Int32, Int) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(count, nameStart + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if watchedNames[watch]?.contains(name) == true || name.hasPrefix("..")
                    || watchedPatterns[watch]?.contains(where: { matches($0, name) }) == true
                {
                    relevant = true
                }
                offset = nameStart + length
            }
        }
    }
}

/// What polling compares: size, modification time and inode of each file (following symlinks).
public struct Fingerprint: Equatable, Sendable {
    var entries: [String]

    /// A pattern entry (`dir/*.json`) stands for every matching file in its directory, added and
    /// removed ones included.
    public init(files: [String], matches: (_ pattern: String, _ name: String) -> Bool = { $0 == $1 }) {
        var expanded: [String] = []
        for file in files {
            let name = file.split(separator: "/").last.map(String.init) ?? file
            guard name.contains("*") || name.contains("?") else {
                expanded.append(file)
                continue
            }
            let directory = Posix.directoryName(file)
            expanded.append(directory + "/")
            for entry in (Posix.directoryEntries(directory) ?? []).sorted() where matches(name, entry) {
                expanded.append(directory + "/" + entry)
            }
        }
        entries = expanded.map { path in
            Posix.fileStamp(path).map { "\(path):\($0)" } ?? "\(path):missing"
        }
    }
}
