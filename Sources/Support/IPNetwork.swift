/// An IPv4 or IPv6 address as 128 bits; IPv4 as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so one
/// comparison serves both. Parsed from text byte by byte, without allocating: it is read for every fetch
/// by a known fetcher, on the event loop.
public struct IPAddress: Sendable, Equatable, Hashable {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `17.1.2.3`, `2620:149::1`, `[::1]`, `fe80::1%eth0`, `::ffff:17.1.2.3`; nil for anything else.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    public var isIPv4: Bool { high == 0 && low >> 32 == 0xFFFF }

    private static func parse(_ raw: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        var start = 0
        var end = raw.count
        if end >= 2 && raw[0] == UInt8(ascii: "[") && raw[end - 1] == UInt8(ascii: "]") {
            start = 1
            end -= 1
        }
        if let percent = raw[start..<end].firstIndex(of: UInt8(ascii: "%")) { end = percent }
        guard start < end else { return nil }
        let bytes = UnsafeBufferPointer(rebasing: raw[start..<end])
        if !bytes.contains(UInt8(ascii: ":")) {
            guard let v4 = parseV4(bytes) else { return nil }
            return IPAddress(high: 0, low: 0xFFFF_0000_0000 | UInt64(v4))
        }
        return parseV6(bytes)
    }

    /// Four decimal octets without leading zeros, as a 32-bit number.
    private static func parseV4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var result: UInt32 = 0
        var octets = 0
        var value = 0
        var digits = 0
        for index in 0...bytes.count {
            if index == bytes.count || bytes[index] == UInt8(ascii: ".") {
                guard digits > 0, value <= 255, octets < 4 else { return nil }
                result = result << 8 | UInt32(value)
                octets += 1
                value = 0
                digits = 0
                continue
            }
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"), digits < 3, !(digits == 1 && value == 0) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return octets == 4 ? result : nil
    }

    /// Up to eight groups with at most one `::`, the last 32 bits optionally as an IPv4 address.
    private static func parseV6(_ bytes: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        // The groups before the gap and after it, each shifted into a 128-bit (high, low) pair.
        var head: (UInt64, UInt64) = (0, 0)
        var tail: (UInt64, UInt64) = (0, 0)
        var before = 0
        var after = 0
        var gap = false
        var index = 0
        let count = bytes.count
        if count >= 2 && bytes[0] == UInt8(ascii: ":") && bytes[1] == UInt8(ascii: ":") {
            gap = true
            index = 2
        } else if count >= 1 && bytes[0] == UInt8(ascii: ":") {
            return nil
        }
        func push(_ value: UInt64) -> Bool {
            if gap {
                after += 1
                tail = (tail.0 << 16 | tail.1 >> 48, tail.1 << 16 | value)
            } else {
                before += 1
                head = (head.0 << 16 | head.1 >> 48, head.1 << 16 | value)
            }
            return before + after <= 8
        }
        while index < count {
            // An IPv4 tail: the rest has a dot before any colon.
            var end = index
            var sawDot = false
            while end < count && bytes[end] != UInt8(ascii: ":") {
                if bytes[end] == UInt8(ascii: ".") { sawDot = true }
                end += 1
            }
            if sawDot {
                guard end == count, let v4 = parseV4(UnsafeBufferPointer(rebasing: bytes[index..<end])) else { return nil }
                guard push(UInt64(v4 >> 16)), push(UInt64(v4 & 0xFFFF)) else { return nil }
                break
            }
            let length = end - index
            guard length >= 1 && length <= 4 else { return nil }
            var value: UInt64 = 0
            for position in index..<end {
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt64(digit)
            }
            guard push(value) else { return nil }
            index = end
            if index == count { break }
            // At a colon: `::` opens the gap (once); a colon at the very end is an error.
            index += 1
            if index < count && bytes[index] == UInt8(ascii: ":") {
                guard !gap else { return nil }
                gap = true
                index += 1
            } else if index == count {
                return nil
            }
        }
        let total = before + after
        guard gap ? total < 8 : total == 8 else { return nil }
        // The head's groups go to the top: shift them left past the zeros and the tail.
        let shift = (8 - before) * 16
        let top: (UInt64, UInt64)
        switch shift {
        case 0: top = head
        case 128: top = (0, 0)
        case 64...: top = (head.1 << (shift - 64), 0)
        default: top = (head.0 << shift | head.1 >> (64 - shift), head.1 << shift)
        }
        return IPAddress(high: top.0 | tail.0, low: top.1 | tail.1)
    }
}

/// An address block in CIDR notation (`17.0.0.0/8`, `2620:149::/32`), and the addresses in it.
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    let base: IPAddress
    let maskHigh: UInt64
    let maskLow: UInt64
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let isV4 = !parts[0].contains(":")
        let maximum = isV4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard let value = Int(parts[1]), value >= 0, value <= maximum, !parts[1].hasPrefix("+") else { return nil }
            length = value
        }
        let bits = isV4 ? length + 96 : length
        maskHigh = bits >= 64 ? UInt64.max : bits == 0 ? 0 : UInt64.max << (64 - bits)
        maskLow = bits <= 64 ? 0 : bits == 128 ? UInt64.max : UInt64.max << (128 - bits)
        base = address
        // Host bits set: `17.1.2.3/8` is a typo, not a block.
        guard address.high & maskHigh == address.high, address.low & maskLow == address.low else { return nil }
        description = text
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.high & maskHigh == base.high && address.low & maskLow == base.low
    }

    public func contains(_ address: String) -> Bool { IPAddress(address).map(contains) ?? false }

    /// Whether two texts name one address (`::ffff:66.249.66.1` and `66.249.66.1` do).
    public static func sameAddress(_ a: String, _ b: String) -> Bool {
        guard let first = IPAddress(a), let second = IPAddress(b) else { return false }
        return first == second
    }

    /// Loopback, private (RFC 1918, unique local), shared (RFC 6598) and link-local addresses: what a
    /// proxy in front of the server has, never a fetcher on the internet.
    public static func isInternal(_ address: IPAddress) -> Bool {
        internalBlocks.contains { $0.contains(address) }
    }

    public static func isInternal(_ address: String) -> Bool { IPAddress(address).map(isInternal) ?? false }

    private static let internalBlocks: [IPNetwork] = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "::1/128", "fc00::/7",
        "fe80::/10",
    ].compactMap(IPNetwork.init)
}
