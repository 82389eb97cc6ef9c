/// An address block in CIDR notation (`17.0.0.0/8`, `2620:149::/32`), and the addresses in it, from text
/// as sockets and PROXY headers give them. No system call: the bytes are parsed here.
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    /// 16 bytes; an IPv4 block is stored as its IPv4-mapped IPv6 block (`::ffff:a.b.c.d`).
    let bytes: [UInt8]
    let prefixLength: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = Self.parse(String(parts[0])) else { return nil }
        let isV4 = !parts[0].contains(":")
        let maximum = isV4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard let value = Int(parts[1]), value >= 0, value <= maximum, !parts[1].hasPrefix("+") else { return nil }
            length = value
        }
        prefixLength = isV4 ? length + 96 : length
        bytes = Self.masked(address, prefixLength)
        guard bytes == address else { return nil }  // host bits set: `17.1.2.3/8` is a typo, not a block
        description = text
    }

    public func contains(_ address: String) -> Bool {
        guard let parsed = Self.parse(address) else { return false }
        return Self.masked(parsed, prefixLength) == bytes
    }

    /// Whether two texts name one address (`::ffff:66.249.66.1` and `66.249.66.1` do).
    public static func sameAddress(_ a: String, _ b: String) -> Bool {
        guard let first = parse(a), let second = parse(b) else { return false }
        return first == second
    }

    /// Loopback, private (RFC 1918, unique local), shared (RFC 6598) and link-local addresses: what a
    /// proxy in front of the server has, never a fetcher on the internet.
    public static func isInternal(_ address: String) -> Bool {
        internalBlocks.contains { $0.contains(address) }
    }

    private static let internalBlocks: [IPNetwork] = [
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "::1/128", "fc00::/7",
        "fe80::/10",
    ].compactMap(IPNetwork.init)

    private static func masked(_ address: [UInt8], _ length: Int) -> [UInt8] {
        var result = address
        for index in 0..<16 {
            let bits = max(0, min(8, length - index * 8))
            result[index] &= bits == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
        return result
    }

    /// 16 bytes for an IPv4 or IPv6 address (brackets and a zone allowed); nil for anything else.
    static func parse(_ raw: String) -> [UInt8]? {
        var text = Substring(raw)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        if !text.contains(":") {
            guard let v4 = parseV4(text) else { return nil }
            return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + v4
        }
        // An embedded IPv4 tail (`::ffff:17.1.2.3`) counts as two groups.
        var tail: [UInt8] = []
        if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
            guard let v4 = parseV4(text[text.index(after: lastColon)...]) else { return nil }
            tail = v4
            text = text[...lastColon]
            if text.hasSuffix(":") && !text.hasSuffix("::") { text = text.dropLast() }
        }
        var halves: [String] = [String(text)]
        if let gap = text.firstRange(of: "::") {
            halves = [String(text[..<gap.lowerBound]), String(text[gap.upperBound...])]
            guard !halves[1].contains("::") else { return nil }
        }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groups(halves[0]), let rest = halves.count == 2 ? groups(halves[1]) : [] else { return nil }
        let available = 8 - tail.count / 2
        var all: [UInt16]
        if halves.count == 2 {
            guard head.count + rest.count < available else { return nil }
            all = head + Array(repeating: 0, count: available - head.count - rest.count) + rest
        } else {
            guard head.count == available else { return nil }
            all = head
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } + tail
    }

    private static func parseV4(_ text: Substring) -> [UInt8]? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var result: [UInt8] = []
        for octet in octets {
            guard (1...3).contains(octet.count), octet.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt8(octet),
                !(octet.count > 1 && octet.hasPrefix("0"))
            else { return nil }
            result.append(value)
        }
        return result
    }
}
