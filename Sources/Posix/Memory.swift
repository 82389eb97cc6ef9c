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

extension Posix {
    /// Drops this process's resident pages of read-only file mappings (the executable's code, shared
    /// libraries' code and constants): most of them were touched once, by start-up work (loading and
    /// validating the config, initialising OpenSSL), and serving needs a small part of them, which is
    /// faulted back in from the page cache on first use. Writable mappings are never touched (their
    /// pages may hold changes). Returns the bytes of mappings advised.
    @discardableResult
    public static func releaseStartupPages() -> Int {
        guard let smaps = try? readFile("/proc/self/smaps", limit: 64 << 20) else { return 0 }
        var advised = 0
        // One mapping: its header line, then "Key: value kB" lines. A read-only mapping with private dirty
        // pages was written before it was made read-only (relocations, RELRO): never dropped.
        var candidate: (start: UInt, end: UInt)?
        var clean = true
        func finish() {
            if let candidate, clean, let pointer = UnsafeMutableRawPointer(bitPattern: candidate.start),
                madvise(pointer, Int(candidate.end - candidate.start), MADV_DONTNEED) == 0
            {
                advised += Int(candidate.end - candidate.start)
            }
        }
        for line in String(decoding: smaps, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.hasSuffix(":") {
                if first == "Private_Dirty:" || first == "Anonymous:" || first == "Shared_Dirty:", fields.count > 1, fields[1] != "0" {
                    clean = false
                }
                continue
            }
            finish()
            candidate = nil
            clean = true
            // address perms offset dev inode path
            guard fields.count >= 6, fields[5].hasPrefix("/"), fields[1].hasPrefix("r"), !fields[1].contains("w") else { continue }
            let range = first.split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start else {
                continue
            }
            candidate = (start, end)
        }
        finish()
        return advised
    }
}
