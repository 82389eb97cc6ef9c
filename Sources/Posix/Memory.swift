internal import CLinux
internal import Glibc
import Support

extension Posix {
    /// Hands freed heap memory back to the kernel. glibc keeps freed pages mapped, so without this every
    /// full reload of a large config, or a burst of connections, would leave the process at its peak size.
    public static func releaseFreeMemory() {
        _ = malloc_trim(0)
    }

    /// Bytes the C heap has handed out and not had back (glibc's `mallinfo2`): memory C libraries hold,
    /// such as OpenSSL's record buffers, which resident size cannot tell from freed pages glibc keeps.
    public static func heapBytesInUse() -> Int {
        Int(mallinfo2().uordblks)
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
        return smaps.withUnsafeBufferPointer { text in
            var advised = 0
            // One mapping: its header line ("start-end perms offset dev inode path"), then "Key: value kB"
            // lines. A read-only mapping with dirty or anonymous pages was written before it was made
            // read-only (relocations, RELRO): never dropped.
            var candidate: (start: UInt, end: UInt)?
            var clean = true
            func finish() {
                guard let mapping = candidate, clean, let pointer = UnsafeMutableRawPointer(bitPattern: mapping.start) else { return }
                if madvise(pointer, Int(mapping.end - mapping.start), MADV_DONTNEED) == 0 { advised += Int(mapping.end - mapping.start) }
            }
            var lineStart = 0
            while lineStart < text.count {
                var lineEnd = lineStart
                while lineEnd < text.count && text[lineEnd] != 0x0A { lineEnd += 1 }
                let line = UnsafeBufferPointer(rebasing: text[lineStart..<lineEnd])
                lineStart = lineEnd + 1
                guard let first = line.first else { continue }
                if first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z") {
                    // "Private_Dirty:    12 kB": any non-zero dirty or anonymous count disqualifies the mapping.
                    if startsWith(line, "Private_Dirty:") || startsWith(line, "Shared_Dirty:") || startsWith(line, "Anonymous:"),
                        let colon = line.firstIndex(of: UInt8(ascii: ":")),
                        line[(colon + 1)...].contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") })
                    {
                        clean = false
                    }
                    continue
                }
                finish()
                candidate = nil
                clean = true
                candidate = readOnlyFileMapping(line)
            }
            finish()
            return advised
        }
    }

    private static func startsWith(_ line: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        guard line.count >= prefix.utf8CodeUnitCount else { return false }
        for index in 0..<prefix.utf8CodeUnitCount where line[index] != prefix.utf8Start[index] { return false }
        return true
    }

    /// The address range of a header line for a read-only (not writable) mapping of a file.
    private static func readOnlyFileMapping(_ line: UnsafeBufferPointer<UInt8>) -> (start: UInt, end: UInt)? {
        var index = 0
        func hex() -> UInt? {
            var value: UInt = 0
            var digits = 0
            while index < line.count, let digit = ASCII.hexValue(line[index]) {
                value = value << 4 | UInt(digit)
                index += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        guard let start = hex(), index < line.count, line[index] == UInt8(ascii: "-") else { return nil }
        index += 1
        guard let end = hex(), end > start, index + 5 < line.count else { return nil }
        // " r-xp": readable, not writable.
        guard line[index + 1] == UInt8(ascii: "r"), line[index + 2] != UInt8(ascii: "w") else { return nil }
        // The path is the last field and starts with '/'.
        guard line.contains(UInt8(ascii: "/")) else { return nil }
        return (start, end)
    }
}
