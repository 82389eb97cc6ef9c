/// HMAC-SHA-256 (RFC 2104) for the pure targets: claim codes are signed where a link answers, with no
/// call into OpenSSL. SHA-256 has no branch or table lookup that depends on the data, so the tag leaks
/// nothing through time; tags are compared with ``HMAC/equal(_:_:)``, which takes the same time whatever
/// differs.
public enum HMAC {
    static let blockSize = 64

    public static func sha256(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        var block = key.count > blockSize ? SHA256.digest(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.digest(block.map { $0 ^ 0x36 } + Array(message))
        return SHA256.digest(block.map { $0 ^ 0x5C } + inner)
    }

    /// Equal lengths and bytes, in time that depends on the length only.
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
