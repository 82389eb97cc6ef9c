import Support

/// A URL split the way the matcher compares it (docs/aasa-format.md §3, §8).
///
/// Our readings where Apple is silent (docs/matching.md): an empty path is `/` (what a
/// browser requests); non-ASCII characters are percent-encoded as UTF-8 before comparing with
/// `percentEncoded: true` patterns (devices see URLs in ASCII); a missing query or fragment compares
/// as the empty string; query item names are compared percent-decoded, values raw unless
/// `percentEncoded: false`; `+` is not a space.
public struct MatchURL: Sendable {
    public let text: String
    public let scheme: String?
    public let host: String?
    // Parts as bytes, percent-encoded (as transmitted): splitting and comparing bytes avoids the
    // String index machinery on the per-URL hot path.
    // Slices of one buffer: no copy unless non-ASCII has to be percent-encoded.
    let pathBytes: ArraySlice<UInt8>
    let queryBytes: ArraySlice<UInt8>?
    let fragmentBytes: ArraySlice<UInt8>?

    /// Percent-encoded path, never empty.
    public var path: String { String(decoding: pathBytes, as: UTF8.self) }
    public var query: String? { queryBytes.map { String(decoding: $0, as: UTF8.self) } }
    public var fragment: String? { fragmentBytes.map { String(decoding: $0, as: UTF8.self) } }

    public init(_ text: String) {
        self.text = text
        let bytes = Array(text.utf8)
        var start = 0
        var parsedScheme: String?
        var parsedHost: String?
        // scheme "://" authority, when present (RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            bytes[..<colon].allSatisfy({ isSchemeByte($0) }),
            bytes.count >= colon + 3, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        {
            parsedScheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
            let authorityStart = colon + 3
            var authorityEnd = authorityStart
            while authorityEnd < bytes.count,
                bytes[authorityEnd] != UInt8(ascii: "/"), bytes[authorityEnd] != UInt8(ascii: "?"),
                bytes[authorityEnd] != UInt8(ascii: "#")
            {
                authorityEnd += 1
            }
            var hostStart = authorityStart
            if let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { hostStart = at + 1 }
            if hostStart < authorityEnd { parsedHost = String(decoding: bytes[hostStart..<authorityEnd], as: UTF8.self) }
            start = authorityEnd
        }
        scheme = parsedScheme
        host = parsedHost
        var end = bytes.count
        if let hash = bytes[start...].firstIndex(of: UInt8(ascii: "#")) {
            fragmentBytes = percentEncodeNonASCII(bytes[(hash + 1)...])
            end = hash
        } else {
            fragmentBytes = nil
        }
        if let question = bytes[start..<end].firstIndex(of: UInt8(ascii: "?")) {
            queryBytes = percentEncodeNonASCII(bytes[(question + 1)..<end])
            end = question
        } else {
            queryBytes = nil
        }
        pathBytes = start == end ? [UInt8(ascii: "/")][...] : percentEncodeNonASCII(bytes[start..<end])
    }
}

private func isSchemeByte(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
}

/// The scalar arrays one URL is compared with, computed once per URL and only when a rule asks:
/// most rules look only at the path, so the query items are never split for them.
final class PreparedVariant {
    private let parts: URLParts
    private let decode: Bool
    private let fold: Bool

    init(_ parts: URLParts, decode: Bool, fold: Bool) {
        self.parts = parts
        self.decode = decode
        self.fold = fold
    }

    private func convert(_ bytes: ArraySlice<UInt8>, decoding: Bool) -> [UInt32] {
        var scalars: [UInt32] = []
        scalars.reserveCapacity(bytes.count)
        if decoding, bytes.contains(UInt8(ascii: "%")), let decoded = percentDecode(bytes) {
            for scalar in decoded.unicodeScalars { scalars.append(fold ? foldCase(scalar.value) : scalar.value) }
            return scalars
        }
        // Not decoding: the bytes are ASCII (non-ASCII was percent-encoded), one byte per character.
        if fold {
            for byte in bytes { scalars.append(foldCase(UInt32(byte))) }
        } else {
            for byte in bytes { scalars.append(UInt32(byte)) }
        }
        return scalars
    }

    lazy var path: [UInt32] = convert(parts.path, decoding: decode)
    lazy var query: [UInt32] = convert(parts.query ?? [], decoding: decode)
    lazy var fragment: [UInt32] = convert(parts.fragment ?? [], decoding: decode)
    /// Names are always compared percent-decoded (they are NSURLQueryItem names); values as the variant says.
    lazy var items: [(name: [UInt32], value: [UInt32])] = splitQueryItems(parts.query ?? []).map {
        (convert($0.name, decoding: true), convert($0.value, decoding: decode))
    }
}

/// The four ways a URL may be compared (as sent / decoded × exact / case-folded), each built on first use.
/// Just the byte arrays a comparison reads, so the per-URL objects retain three buffers, not a whole MatchURL.
final class URLParts {
    let path: ArraySlice<UInt8>
    let query: ArraySlice<UInt8>?
    let fragment: ArraySlice<UInt8>?

    init(_ url: MatchURL) {
        path = url.pathBytes
        query = url.queryBytes
        fragment = url.fragmentBytes
    }
}

struct PreparedURL {
    let parts: URLParts
    // Four stored slots rather than an array: this struct is built once per match, on the hot path.
    private var exact: PreparedVariant?
    private var folded: PreparedVariant?
    private var decoded: PreparedVariant?
    private var decodedFolded: PreparedVariant?

    init(_ url: MatchURL) { parts = URLParts(url) }

    mutating func variant(caseSensitive: Bool, percentEncoded: Bool) -> PreparedVariant {
        let slot: WritableKeyPath<Self, PreparedVariant?> =
            switch (percentEncoded, caseSensitive) {
            case (true, true): \.exact
            case (true, false): \.folded
            case (false, true): \.decoded
            case (false, false): \.decodedFolded
            }
        if let prepared = self[keyPath: slot] { return prepared }
        let prepared = PreparedVariant(parts, decode: !percentEncoded, fold: !caseSensitive)
        self[keyPath: slot] = prepared
        return prepared
    }
}

func splitQueryItems(_ query: ArraySlice<UInt8>) -> [(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
    query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { item in
        if let equals = item.firstIndex(of: UInt8(ascii: "=")) {
            return (item[..<equals], item[(equals + 1)...])
        }
        return (item, [])
    }
}

/// Percent-encodes every byte ≥ 0x80 (and spaces) as `%XX`, leaving existing escapes alone.
func percentEncodeNonASCII(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    guard bytes.contains(where: { $0 >= 0x80 || $0 == 0x20 }) else { return bytes }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 3)
    let digits = Array("0123456789ABCDEF".utf8)
    for byte in bytes {
        if byte >= 0x80 || byte == 0x20 {
            out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
        } else {
            out.append(byte)
        }
    }
    return out[...]
}

func percentEncodeNonASCII(_ text: String) -> String {
    String(decoding: percentEncodeNonASCII(Array(text.utf8)[...]), as: UTF8.self)
}

/// Decodes `%XX` escapes; nil when the result is not valid UTF-8 (the raw text is then compared).
func percentDecode<Bytes: Collection<UInt8>>(_ source: Bytes) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(source.count)
    var iterator = Array(source)[...]
    while let byte = iterator.first {
        if byte == UInt8(ascii: "%"), iterator.count >= 3,
            let high = ASCII.hexValue(iterator[iterator.startIndex + 1]), let low = ASCII.hexValue(iterator[iterator.startIndex + 2])
        {
            bytes.append(high << 4 | low)
            iterator = iterator.dropFirst(3)
        } else {
            bytes.append(byte)
            iterator = iterator.dropFirst()
        }
    }
    return String(validating: bytes, as: UTF8.self)
}

public func percentDecode(_ text: String) -> String {
    percentDecode(text.utf8) ?? text
}
