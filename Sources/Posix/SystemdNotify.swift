internal import CLinux
internal import Glibc

/// The systemd notification protocol without libsystemd: datagrams of `KEY=value` lines to the socket
/// named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without the variable,
/// nothing is sent.
public final class SystemdNotifier: @unchecked Sendable {
    private let fd: Int32
    private var address = sockaddr_un()
    private let length: socklen_t

    /// Nil when the process was not started by systemd with `Type=notify` (or the socket cannot be used).
    public init?(socketPath: String? = Posix.environment("NOTIFY_SOCKET")) {
        guard let socketPath, !socketPath.isEmpty, socketPath.hasPrefix("/") || socketPath.hasPrefix("@") else { return nil }
        var bytes = Array(socketPath.utf8)
        // An abstract-namespace name starts with a NUL byte instead of '@', and is not NUL-terminated.
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes[0] == 0 ? 0 : 1))
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
    }

    deinit { Posix.close(fd) }

    /// Sends `fields` (e.g. ["READY=1", "STATUS=serving"]) as one datagram; best effort.
    public func send(_ fields: [String]) {
        let message = Array(fields.joined(separator: "\n").utf8)
        let (fd, length) = (self.fd, self.length)
        _ = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                    Posix.retrying { sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), target, length) }
                }
            }
        }
    }

    /// `MONOTONIC_USEC=…`, which systemd wants with `RELOADING=1`.
    public static func monotonicField() -> String { "MONOTONIC_USEC=\(Posix.monotonicMicroseconds())" }
}
