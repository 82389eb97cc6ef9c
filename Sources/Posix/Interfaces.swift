internal import Glibc

/// The machine's own addresses, for telling a phone on the same network where to connect (`dev`).
extension Posix {
    public struct InterfaceAddress: Sendable, Equatable {
        /// `eth0`, `en0`, `wlan0`.
        public var interface: String
        public var address: String
        public var isIPv6: Bool
        /// 127.0.0.0/8, ::1: reachable from this machine only.
        public var isLoopback: Bool
        /// fe80::/10: usable only with a zone index, which a phone's URL cannot carry.
        public var isLinkLocal: Bool

        public init(interface: String, address: String, isIPv6: Bool, isLoopback: Bool, isLinkLocal: Bool) {
            self.interface = interface
            self.address = address
            self.isIPv6 = isIPv6
            self.isLoopback = isLoopback
            self.isLinkLocal = isLinkLocal
        }
    }

    /// Every address of every interface that is up, loopback last.
    public static func interfaceAddresses() -> [InterfaceAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(first) }
        var result: [InterfaceAddress] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            let flags = current.pointee.ifa_flags
            guard flags & UInt32(IFF_UP) != 0, let socketAddress = current.pointee.ifa_addr,
                let address = numericAddress(socketAddress)
            else { continue }
            let isIPv6 = Int32(socketAddress.pointee.sa_family) == AF_INET6
            result.append(
                InterfaceAddress(
                    interface: String(cString: current.pointee.ifa_name),
                    address: address,
                    isIPv6: isIPv6,
                    isLoopback: flags & UInt32(IFF_LOOPBACK) != 0,
                    isLinkLocal: isIPv6 && address.lowercased().hasPrefix("fe80:")
                )
            )
        }
        return result.filter { !$0.isLoopback } + result.filter(\.isLoopback)
    }

    /// The numeric text of an IPv4 or IPv6 socket address; nil for other families.
    static func numericAddress(_ address: UnsafePointer<sockaddr>) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var raw = pointer.pointee.sin_addr
                _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
            }
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var raw = pointer.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
            }
        default: return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
