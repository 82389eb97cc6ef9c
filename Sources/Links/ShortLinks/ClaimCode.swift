import Support

/// A deferred deep link's claim code (docs/short-links.md): how an app learns, on its first launch, which
/// link brought the person to the store — without fingerprinting. The code names the link and when it was
/// issued, and is signed with the link store's own key, so the server that answers a click mints one
/// without writing anything, and any server with the store reads it back; the store records each claim, so
/// a code works once. `<suffix>.<token>`: the token is the issue time (minutes), 64 random bits and 96 bits
/// of HMAC-SHA-256 over the domain, the suffix and both: 24 bytes, 32 base64url characters with no spare
/// bits, so one code has exactly one spelling (the store records claims by their text).
public struct ClaimCode: Sendable, Equatable {
    public var domain: String
    public var suffix: String
    /// Unix minutes.
    public var issued: UInt32
    public var nonce: [UInt8]

    public static let nonceBytes = 8
    static let tagBytes = 12
    /// Seven days, FDL's and Play's window for a deferred link to be useful.
    public static let lifetimeMinutes: UInt32 = 7 * 24 * 60

    public init(domain: String, suffix: String, issued: UInt32, nonce: [UInt8]) {
        self.domain = domain
        self.suffix = suffix
        self.issued = issued
        self.nonce = nonce
    }

    /// The code as the app sees it, signed with `key`.
    public func text(key: [UInt8]) -> String {
        let payload = Self.bytes(issued) + nonce
        return suffix + "." + Base64URL.encode(payload + Self.tag(domain: domain, suffix: suffix, payload: payload, key: key))
    }

    /// The URL the landing page copies and the Play Store's referrer carries.
    public func url(key: [UInt8]) -> String { "https://\(domain)/_/c/\(text(key: key))" }

    public enum Refusal: Error, Sendable, Equatable {
        /// Not a code of this server's form.
        case malformed
        /// The form is right but the signature is not: made up, or from another store.
        case forged
        /// Older than ``lifetimeMinutes`` (or issued in the future).
        case expired
    }

    /// The code `text` as given for `domain`, checked against `key` and the time (`nowMinutes`).
    public static func read(_ text: String, domain: String, key: [UInt8], nowMinutes: UInt32) -> Result<ClaimCode, Refusal> {
        switch signed(text, domain: domain, key: key) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let code):
            guard code.issued <= nowMinutes, nowMinutes - code.issued <= lifetimeMinutes else { return .failure(.expired) }
            return .success(code)
        }
    }

    /// The code when its signature holds, whatever its age.
    public static func signed(_ text: String, domain: String, key: [UInt8]) -> Result<ClaimCode, Refusal> {
        guard let dot = text.lastIndex(of: "."), ShortLinkSuffix.aliasProblem(String(text[..<dot])) == nil,
            case let tokenText = String(text[text.index(after: dot)...]), let token = Base64URL.decode(tokenText),
            token.count == 4 + nonceBytes + tagBytes, Base64URL.encode(token) == tokenText
        else { return .failure(.malformed) }
        let suffix = String(text[..<dot])
        let payload = Array(token[0..<(4 + nonceBytes)])
        guard HMAC.equal(token[(4 + nonceBytes)...], tag(domain: domain, suffix: suffix, payload: payload, key: key)) else {
            return .failure(.forged)
        }
        let issued = payload[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return .success(ClaimCode(domain: domain, suffix: suffix, issued: issued, nonce: Array(payload[4...])))
    }

    static func tag(domain: String, suffix: String, payload: [UInt8], key: [UInt8]) -> [UInt8] {
        let message = Array("aasa-server claim v1\n\(domain)\n\(suffix)\n".utf8) + payload
        return Array(HMAC.sha256(key: key, message: message).prefix(tagBytes))
    }

    static func bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
