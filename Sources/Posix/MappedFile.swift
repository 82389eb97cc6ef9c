internal import Glibc

/// A file's bytes mapped read-only into memory: read through the page cache, never copied onto the heap
/// (a snapshot of a million sites is 170 MB that a start reads once and lets go).
public final class MappedFile: @unchecked Sendable {
    // The mapping is private and read-only, and lives exactly as long as this object.
    public let buffer: UnsafeRawBufferPointer

    public init(_ path: String) throws(FileError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw FileError(path: path, kind: .system(SystemError(call: "open", code: errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, kind: .system(SystemError(call: "fstat", code: errno))) }
        if let what = Posix.fileTypeName(info.st_mode) { throw FileError(path: path, kind: .notRegularFile(what)) }
        let size = Int(info.st_size)
        guard size > 0 else {
            buffer = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), address != MAP_FAILED else {
            throw FileError(path: path, kind: .system(SystemError(call: "mmap", code: errno)))
        }
        // Read front to back once: the kernel reads ahead instead of faulting page by page.
        _ = madvise(address, size, MADV_SEQUENTIAL)
        buffer = UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let start = buffer.baseAddress { munmap(UnsafeMutableRawPointer(mutating: start), buffer.count) }
    }
}
