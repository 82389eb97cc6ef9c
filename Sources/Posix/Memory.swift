internal import CLinux
internal import Glibc

extension Posix {
    /// Hands freed heap memory back to the kernel. glibc keeps freed pages mapped, so without this every
    /// full reload of a large config, or a burst of connections, would leave the process at its peak size.
    public static func releaseFreeMemory() {
        _ = malloc_trim(0)
    }

    /// Resident set size of this process in bytes (from /proc/self/statm).
    public static func residentBytes() -> Int {
        guard let text = try? readFile("/proc/self/statm") else { return 0 }
        let fields = String(decoding: text, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
