import Support

/// Byte-level helpers for header fields: line ends, tokens, names compared without case, and the
/// values the parser checks (Content-Length, Host, comma lists).
/// The index of the first LF at or after `start`, eight bytes at a time (the head of a request is
/// scanned once, and this is most of the scanning).
@inline(__always)
func firstLineFeed(_ buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    var index = start
    let count = buffer.count
    if let base = buffer.baseAddress {
        let raw = UnsafeRawPointer(base)
        // A word has a zero byte where it had a LF after XOR: the classic "has zero byte" test.
        while index + 8 <= count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ 0x0A0A_0A0A_0A0A_0A0A
            let found = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
    }
    while index < count {
        if buffer[index] == 0x0A { return index }
        index += 1
    }
    return nil
}

/// A header line read from its value on: where the line's content ends and the next line starts, or the
/// first byte a field value may not hold (RFC 9110 §5.5: a control other than HTAB, or DEL; a CR unless an
/// LF follows it). One pass, eight bytes at a time, for what were two over every header of every request
/// (find the line's end, then check its value): a line ends at its first control byte that is not a tab.
struct FieldLine {
    /// Where the line's CRLF or LF starts; trailing whitespace is the caller's to trim.
    var contentEnd: Int
    /// The first byte of the next line.
    var next: Int
    /// The value's ``FieldValueHash`` when asked for and the pass could give it: a value with no tab,
    /// up to the line's end (the caller hashes a value it trims).
    var hash: UInt64?
    var forbidden: Int?
}

@inline(__always)
func scanFieldLine(_ buffer: UnsafeBufferPointer<UInt8>, valueStart: Int, end: Int, hashing: Bool) -> FieldLine {
    var index = valueStart
    var state = FieldValueHash.initial
    // No tab so far: the words hashed are exactly the value's first bytes.
    var hashable = hashing
    guard let base = buffer.baseAddress else { return FieldLine(contentEnd: end, next: end, hash: nil, forbidden: nil) }
    let raw = UnsafeRawPointer(base)
    while index < end {
        var word: UInt64 = 0
        var hits: UInt64 = 0
        while index + 8 <= end {
            word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // Any byte below 0x20 (the "has less than" test), or equal to 0x7F ("has zero" after XOR): the
            // lowest flag of each test is exact (a borrow can only flag bytes after a true one).
            let below = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
            let flipped = word ^ 0x7F7F_7F7F_7F7F_7F7F
            let delete = (flipped &- 0x0101_0101_0101_0101) & ~flipped & 0x8080_8080_8080_8080
            hits = below | delete
            if hits != 0 { break }
            if hashable { state = FieldValueHash.mix(state, word) }
            index += 8
        }
        var position = index
        if hits != 0 {
            position += hits.trailingZeroBitCount >> 3
        } else {
            while position < end, buffer[position] >= 0x20, buffer[position] != 0x7F { position += 1 }
            guard position < end else { break }
        }
        let byte = buffer[position]
        if byte == 0x09 {
            hashable = false
            index = position + 1
            continue
        }
        let lineEnds = byte == 0x0A || (byte == 0x0D && position + 1 < end && buffer[position + 1] == 0x0A)
        guard lineEnds else { return FieldLine(contentEnd: position, next: position, hash: nil, forbidden: position) }
        var hash: UInt64?
        if hashable {
            if position > index {
                let tail =
                    hits != 0
                    ? FieldValueHash.partial(word, count: position - index)
                    : FieldValueHash.tail(UnsafeRawBufferPointer(start: raw + index, count: position - index))
                state = FieldValueHash.mix(state, tail)
            }
            hash = FieldValueHash.finish(state, count: position - valueStart)
        }
        return FieldLine(contentEnd: position, next: position + (byte == 0x0D ? 2 : 1), hash: hash, forbidden: nil)
    }
    // A complete head ends every line; kept total for a caller that gives it less.
    return FieldLine(contentEnd: end, next: end, hash: nil, forbidden: nil)
}

/// tchar (RFC 9110 §5.6.2).
@inline(__always)
func isTokenByte(_ byte: UInt8) -> Bool {
    // The set below as a 128-bit map in two literals: a global table would be reached through a
    // one-time-initialisation check on every call, a dozen times per request head.
    let map: UInt64 = byte < 64 ? 0x03FF_6CFA_0000_0000 : byte < 128 ? 0x57FF_FFFF_C7FF_FFFE : 0
    return map >> UInt64(byte & 63) & 1 == 1
}

/// The token characters as RFC 9110 §5.6.2 lists them; `isTokenByte`'s map is held equal to this.
func isTokenByteBySet(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
        UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
        UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}

/// Case-insensitive comparison of a byte range with a lower-case ASCII literal.
@inline(__always)
func equalsLowercase(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
    guard range.count == literal.utf8CodeUnitCount else { return false }
    let bytes = literal.utf8Start
    for offset in 0..<range.count {
        var byte = buffer[range.lowerBound + offset]
        if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
        if byte != bytes[offset] { return false }
    }
    return true
}

/// ``equalsLowercase(_:_:_:)`` for a token (a header name) and a literal of lower-case letters and '-'
/// four bytes or longer, a word at a time: every request names a few headers, and comparing them byte by
/// byte was about a hundred instructions a request. Setting the 0x20 bit lowers a letter and leaves '-',
/// and of the bytes it turns into a letter or '-' only the upper-case letter and CR are not that byte
/// itself; CR is no token byte.
@inline(__always)
func tokenEqualsLowercase(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard range.count == count else { return false }
    guard count >= 4, let base = buffer.baseAddress else { return equalsLowercase(buffer, range, literal) }
    let text = UnsafeRawPointer(base + range.lowerBound)
    let expected = UnsafeRawPointer(literal.utf8Start)
    if count < 8 {
        // Two four-byte words, overlapping when shorter than eight.
        return text.loadUnaligned(as: UInt32.self) | 0x2020_2020 == expected.loadUnaligned(as: UInt32.self)
            && text.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self) | 0x2020_2020
                == expected.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
    }
    var offset = 0
    while offset + 8 < count {
        if text.loadUnaligned(fromByteOffset: offset, as: UInt64.self) | 0x2020_2020_2020_2020
            != expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
            return false
        }
        offset += 8
    }
    return text.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) | 0x2020_2020_2020_2020
        == expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
}

enum KnownHeader {
    case host, contentLength, transferEncoding, connection, acceptEncoding, userAgent, forwardedFor, origin, contentType, authorization
    case expect
    /// `AASA-Server-Check`: a request of `aasa-server check`, never recorded as a fetch.
    case checkProbe
    case other

    /// `name` is a token (the parser checked it), as ``tokenEqualsLowercase(_:_:_:)`` needs.
    init(_ buffer: UnsafeBufferPointer<UInt8>, _ name: Range<Int>) {
        switch name.count {
        case 4 where tokenEqualsLowercase(buffer, name, "host"): self = .host
        case 14 where tokenEqualsLowercase(buffer, name, "content-length"): self = .contentLength
        case 17 where tokenEqualsLowercase(buffer, name, "transfer-encoding"): self = .transferEncoding
        case 17 where tokenEqualsLowercase(buffer, name, "aasa-server-check"): self = .checkProbe
        case 10 where tokenEqualsLowercase(buffer, name, "connection"): self = .connection
        case 15 where tokenEqualsLowercase(buffer, name, "accept-encoding"): self = .acceptEncoding
        case 15 where tokenEqualsLowercase(buffer, name, "x-forwarded-for"): self = .forwardedFor
        case 10 where tokenEqualsLowercase(buffer, name, "user-agent"): self = .userAgent
        case 6 where tokenEqualsLowercase(buffer, name, "origin"): self = .origin
        case 6 where tokenEqualsLowercase(buffer, name, "expect"): self = .expect
        case 12 where tokenEqualsLowercase(buffer, name, "content-type"): self = .contentType
        case 13 where tokenEqualsLowercase(buffer, name, "authorization"): self = .authorization
        default: self = .other
        }
    }
}

/// `1*DIGIT`, no sign, no list, no overflow (RFC 9110 §8.6).
func parseContentLength(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
    guard !range.isEmpty, range.count <= 18 else { return nil }
    var value = 0
    for position in range {
        let byte = buffer[position]
        guard ASCII.isDigit(byte) else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return value
}

/// Host / absolute-form authority: reg-name or IP-literal, optional `:port` of digits (RFC 3986 §3.2).
/// No userinfo, no spaces, no commas (a list), no 8-bit bytes.
func validateAuthority(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> HTTPError? {
    guard !range.isEmpty else { return .badRequest("empty Host") }
    var index = range.lowerBound
    if buffer[index] == UInt8(ascii: "[") {
        while index < range.upperBound && buffer[index] != UInt8(ascii: "]") {
            let byte = buffer[index]
            if !(ASCII.isHexDigit(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[")) {
                return .badRequest("invalid IPv6 literal in Host")
            }
            index += 1
        }
        guard index < range.upperBound else { return .badRequest("unterminated IPv6 literal in Host") }
        index += 1
    } else {
        if let base = buffer.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= range.upperBound, commonHostBytes(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) == allHighBits {
                index += 8
            }
        }
        while index < range.upperBound && buffer[index] != UInt8(ascii: ":") {
            let byte = buffer[index]
            if !isRegNameByte(byte) {
                switch byte {
                case UInt8(ascii: "@"): return .badRequest("userinfo ('@') in Host")
                case UInt8(ascii: ","): return .badRequest("a list of hosts in Host")
                default: return .badRequest(byte >= 0x80 ? "non-ASCII byte in Host" : "invalid character in Host")
                }
            }
            index += 1
        }
        if index == range.lowerBound { return .badRequest("empty host name in Host") }
    }
    if index < range.upperBound {
        guard buffer[index] == UInt8(ascii: ":") else { return .badRequest("invalid Host") }
        index += 1
        while index < range.upperBound {
            guard ASCII.isDigit(buffer[index]) else { return .badRequest("non-numeric port in Host") }
            index += 1
        }
    }
    return nil
}

private let allHighBits: UInt64 = 0x8080_8080_8080_8080

/// The high bit of each byte of `word` that is a letter, a digit, '-' or '.' — what nearly every host name
/// is made of — so a Host is checked eight bytes a step; the first other byte (a port's colon, a
/// percent-encoding, a byte to refuse) is left to the byte loop. Exact for every byte: the low seven bits
/// plus `0x80 - n` reach the high bit when they are `n` or more, and never carry into the next byte.
@inline(__always)
func commonHostBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let low = word & 0x7F7F_7F7F_7F7F_7F7F
    @inline(__always) func atLeast(_ n: UInt64) -> UInt64 { (low &+ (0x80 - n) &* ones) & allHighBits }
    let hyphenOrDot = atLeast(0x2D) & ~atLeast(0x2F)
    let digit = atLeast(0x30) & ~atLeast(0x3A)
    let upper = atLeast(0x41) & ~atLeast(0x5B)
    let lower = atLeast(0x61) & ~atLeast(0x7B)
    return (hyphenOrDot | digit | upper | lower) & ~(word & allHighBits)
}

/// A byte a host name may hold as written (RFC 3986 §3.2.2 reg-name: unreserved, sub-delims but ',',
/// and '%' of a percent-encoding), as a 128-bit map in two literals like ``isTokenByte(_:)``: a host is
/// checked on every request. `RequestParserTests.hostBytes` holds it equal to that set, written out.
@inline(__always)
func isRegNameByte(_ byte: UInt8) -> Bool {
    let map: UInt64 = byte < 64 ? 0x2BFF_6FF2_0000_0000 : byte < 128 ? 0x47FF_FFFE_87FF_FFFE : 0
    return map >> UInt64(byte & 63) & 1 == 1
}

/// Calls `body` with each comma-separated token of a field value, trimmed.
@inline(__always)
func forEachToken(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ body: (Range<Int>) -> Void) {
    var start = range.lowerBound
    for position in range.lowerBound...range.upperBound where position == range.upperBound || buffer[position] == UInt8(ascii: ",") {
        var a = start
        var b = position
        while a < b && (buffer[a] == 0x20 || buffer[a] == 0x09) { a += 1 }
        while b > a && (buffer[b - 1] == 0x20 || buffer[b - 1] == 0x09) { b -= 1 }
        if a < b { body(a..<b) }
        start = position + 1
    }
}
