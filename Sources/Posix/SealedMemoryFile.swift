internal import CLinux
internal import Glibc
import Synchronization

/// Bytes held in a sealed memory file (`memfd_create`, then sealed against writing, growing and shrinking)
/// and mapped read-only: the kernel can send them to a socket from the file's pages (``Posix/sendFile``)
/// instead of copying them in from the heap, and nothing, not even this process, can change them while a
/// send still refers to those pages.
///
/// The mapping is populated at once, so the bytes count in the process's resident memory like any other:
/// a memory figure read from `/proc` stays true.
public final class SealedMemoryFile: @unchecked Sendable {
    public let descriptor: Int32
    public let buffer: UnsafeRawBufferPointer

    /// How many are open and the bytes they hold: each holds a descriptor, which connections need too,
    /// and memory.
    private static let openCount = Atomic<Int>(0)
    private static let openBytes = Atomic<Int>(0)

    /// Nil when the bytes are empty, `limit` would be passed or the system refuses (no memfd, out of
    /// memory): the caller keeps the bytes where they are, which always works.
    public static func make(_ bytes: UnsafeRawBufferPointer, name: String, limit: (count: Int, bytes: Int)) -> SealedMemoryFile? {
        guard !bytes.isEmpty else { return nil }
        let count = openCount.add(1, ordering: .relaxed).newValue
        let held = openBytes.add(bytes.count, ordering: .relaxed).newValue
        guard count <= limit.count, held <= limit.bytes, let made = SealedMemoryFile(bytes, name: name) else {
            openCount.subtract(1, ordering: .relaxed)
            openBytes.subtract(bytes.count, ordering: .relaxed)
            return nil
        }
        return made
    }

    private init?(_ bytes: UnsafeRawBufferPointer, name: String) {
        let fd = CLinux_sealable_memfd(name)
        guard fd >= 0 else { return nil }
        guard Posix.writeAll(fd, bytes) == nil, CLinux_seal_for_good(fd) == 0,
            let address = mmap(nil, bytes.count, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0), address != MAP_FAILED
        else {
            Glibc.close(fd)
            return nil
        }
        descriptor = fd
        buffer = UnsafeRawBufferPointer(start: address, count: bytes.count)
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
        Glibc.close(descriptor)
        Self.openCount.subtract(1, ordering: .relaxed)
        Self.openBytes.subtract(buffer.count, ordering: .relaxed)
    }

    /// The seals in force, as `F_GET_SEALS` reports them: for tests.
    public var seals: (write: Bool, grow: Bool, shrink: Bool, sealed: Bool) {
        let flags = CLinux_seals(descriptor)
        guard flags >= 0 else { return (false, false, false, false) }
        return (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0)
    }

    /// Whether a write into the file is refused, as the seals promise: for tests.
    public var refusesWrites: Bool {
        var byte: UInt8 = 0
        return pwrite(descriptor, &byte, 1, 0) < 0 && errno == EPERM
    }
}

extension Posix {
    /// Up to `count` bytes of `file` from `offset` sent on the socket `fd` by the kernel, from the file's
    /// pages (no copy from user memory), without raising SIGPIPE (ignored process-wide, as for `writev`).
    public static func sendFile(_ fd: Int32, from file: Int32, offset: Int, count: Int) -> IOResult {
        var position = off_t(offset)
        let (sent, code) = retrying { CLinux_sendfile(fd, file, &position, count) }
        return writeOutcome(sent, code, call: "sendfile")
    }
}
