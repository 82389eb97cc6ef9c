/// The PROXY protocol header a load balancer puts before a connection's first byte (HAProxy's
/// proxy-protocol.txt, versions 1 and 2), giving the real client address.
public enum ProxyProtocol {
    public enum Result: Sendable, Equatable {
        case incomplete
        /// The header is `length` bytes; `client` is nil for LOCAL / UNKNOWN (health checks from the proxy itself).
        case complete(client: String?, length: Int)
        case failed(String)
    }

    static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    /// Version 1 lines are at most 107 bytes including CRLF.
    static let v1MaximumLength = 107

    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result {
        if buffer.isEmpty { return .incomplete }
        if buffer[0] == 0x0D {
            let available = min(buffer.count, v2Signature.count)
            for index in 0..<available where buffer[index] != v2Signature[index] {
                return .failed("expected a PROXY protocol header")
            }
            return parseV2(buffer)
        }
        let prefix: [UInt8] = Array("PROXY ".utf8)
        for index in 0..<min(buffer.count, prefix.count) where buffer[index] != prefix[index] {
            return .failed("expected a PROXY protocol header")
        }
        return parseV1(buffer)
    }

    private static func parseV1(_ buffer: UnsafeBufferPointer<UInt8>) -> Result {
        var lineFeed: Int?
        for index in 0..<min(buffer.count, v1MaximumLength) where buffer[index] == 0x0A {
            lineFeed = index
            break
        }
        guard let end = lineFeed else {
            return buffer.count >= v1MaximumLength ? .failed("PROXY v1 line too long") : .incomplete
        }
        guard end > 0, buffer[end - 1] == 0x0D else { return .failed("PROXY v1 line must end with CRLF") }
        let line = String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<(end - 1)]), as: UTF8.self)
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        if fields.count >= 2 && fields[1] == "UNKNOWN" { return .complete(client: nil, length: end + 1) }
        guard fields.count == 6, fields[1] == "TCP4" || fields[1] == "TCP6" else {
            return .failed("malformed PROXY v1 line")
        }
        let source = String(fields[2])
        guard let port = Int(fields[4]), (0...65535).contains(port), Int(fields[5]) != nil,
            isAddress(source, v6: fields[1] == "TCP6")
        else {
            return .failed("malformed PROXY v1 addresses")
        }
        return .complete(client: source, length: end + 1)
    }

    private static func isAddress(_ text: String, v6: Bool) -> Bool {
        if v6 { return text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { Int($0).map { (0...255).contains($0) } ?? false }
    }

    private static func parseV2(_ buffer: UnsafeBufferPointer<UInt8>) -> Result {
        guard buffer.count >= 16 else { return .incomplete }
        let versionCommand = buffer[12]
        guard versionCommand >> 4 == 2 else { return .failed("unsupported PROXY protocol version") }
        let length = Int(buffer[14]) << 8 | Int(buffer[15])
        guard buffer.count >= 16 + length else { return .incomplete }
        let total = 16 + length
        switch versionCommand & 0x0F {
        case 0x0: return .complete(client: nil, length: total)  // LOCAL: the proxy's own connection
        case 0x1: break
        default: return .failed("unsupported PROXY v2 command")
        }
        let family = buffer[13] >> 4
        switch family {
        case 0x1 where length >= 12:
            let a = (16..<20).map { String(buffer[$0]) }
            return .complete(client: a.joined(separator: "."), length: total)
        case 0x2 where length >= 36:
            var groups: [String] = []
            for offset in stride(from: 16, to: 32, by: 2) {
                groups.append(String(Int(buffer[offset]) << 8 | Int(buffer[offset + 1]), radix: 16))
            }
            return .complete(client: groups.joined(separator: ":"), length: total)
        case 0x0, 0x3:
            return .complete(client: nil, length: total)  // UNSPEC or unix socket: no IP to report
        default:
            return .failed("PROXY v2 address block too short")
        }
    }
}
