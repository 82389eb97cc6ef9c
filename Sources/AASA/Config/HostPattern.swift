import Support

/// A host a site serves: an exact name or a `*.suffix` wildcard (which does not cover the apex).
public enum HostPattern: Sendable, Hashable, CustomStringConvertible {
    case exact(String)
    /// Stores the suffix without `*.`: `*.tenant.example.com` is `.wildcard("tenant.example.com")`.
    case wildcard(String)

    public var description: String {
        switch self {
        case .exact(let name): return name
        case .wildcard(let suffix): return "*." + suffix
        }
    }

    public var isWildcard: Bool {
        if case .wildcard = self { return true }
        return false
    }

    /// Parses a host as written in the config; on failure returns a message saying what is wrong.
    public static func parse(_ text: String) -> Result<HostPattern, HostError> {
        if let fast = parsePlain(text) { return .success(fast) }
        if text.isEmpty { return .failure(HostError("a host cannot be empty")) }
        if text.containsBytes("://") {
            return .failure(HostError("\"\(text)\" has a scheme; write only the host name, e.g. \"example.com\""))
        }
        if text.contains("/") {
            return .failure(HostError("\"\(text)\" contains '/'; write only the host name, without a path"))
        }
        var name = text.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        if let colon = name.lastIndex(of: ":"), !name.hasPrefix("[") {
            return .failure(
                HostError(
                    "\"\(text)\" has a port (\(name[name.index(after: colon)...])); the AASA file is per host, so "
                        + "write \"\(name[..<colon])\" (Apple also ignores entitlements with ports)"
                )
            )
        }
        if name.hasPrefix("*.") {
            let suffix = String(name.dropFirst(2))
            if let problem = hostNameProblem(suffix) { return .failure(HostError("\"\(text)\": \(problem)")) }
            if !suffix.contains(".") {
                return .failure(HostError("\"\(text)\" would cover a whole top-level domain; name a real domain"))
            }
            return .success(.wildcard(suffix))
        }
        if name.contains("*") {
            return .failure(
                HostError("\"\(text)\": a wildcard is only allowed as the whole first label, as in \"*.example.com\"")
            )
        }
        if let problem = hostNameProblem(name) { return .failure(HostError("\"\(text)\": \(problem)")) }
        return .success(.exact(name))
    }

    /// The common case in one pass over the bytes: lower-case labels of letters, digits and '-' (not at
    /// either end), 1–63 bytes each, optionally after `*.`. Anything else takes the explaining path.
    static func parsePlain(_ text: String) -> HostPattern? {
        // Over contiguous bytes: every host of every site comes through here.
        guard let isWildcard = text.utf8.withContiguousStorageIfAvailable(plainShape) ?? plainShape(Array(text.utf8)) else { return nil }
        return isWildcard ? .wildcard(String(text.dropFirst(2))) : .exact(text)
    }

    /// Whether a plain host is a wildcard; nil when the host is not plain.
    private static func plainShape(_ bytes: some Collection<UInt8>) -> Bool? {
        guard !bytes.isEmpty, bytes.count <= 253 else { return nil }
        let wildcard = bytes.count > 2 && bytes.first == UInt8(ascii: "*") && bytes.dropFirst().first == UInt8(ascii: ".")
        var labelLength = 0
        var labels = 0
        var last: UInt8 = 0
        for byte in bytes.dropFirst(wildcard ? 2 : 0) {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                labelLength += 1
            case UInt8(ascii: "-"):
                if labelLength == 0 { return nil }
                labelLength += 1
            case UInt8(ascii: "."):
                if labelLength == 0 || last == UInt8(ascii: "-") { return nil }
                labels += 1
                labelLength = 0
            default:
                return nil
            }
            if labelLength > 63 { return nil }
            last = byte
        }
        guard labelLength > 0, last != UInt8(ascii: "-") else { return nil }
        // "*.com" covers a whole top-level domain: the explaining path rejects it.
        if wildcard && labels < 1 { return nil }
        return wildcard
    }

    /// RFC 1123 host name rules, plus a hint for Unicode (IDN) names.
    static func hostNameProblem(_ name: String) -> String? {
        if name.unicodeScalars.contains(where: { !$0.isASCII }) {
            return "non-ASCII host names must be written in punycode (xn--…), the form sent in the Host header"
        }
        if name.utf8.count > 253 { return "a host name has at most 253 characters" }
        for label in name.split(separator: ".", omittingEmptySubsequences: false) {
            if label.isEmpty { return "empty label (two dots in a row, or a leading dot)" }
            if label.count > 63 { return "label \"\(label)\" is longer than 63 characters" }
            if let bad = label.unicodeScalars.first(where: {
                !(("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
            }) {
                return "character '\(bad)' is not allowed in a host name (letters, digits, '-')"
            }
            if label.hasPrefix("-") || label.hasSuffix("-") { return "label \"\(label)\" starts or ends with '-'" }
        }
        return nil
    }
}

public struct HostError: Error, Sendable, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// Finds the site for a request's host: exact names first, then the longest matching wildcard.
public struct HostTable<Value: Sendable>: Sendable {
    private var exact: ExactHostIndex<Value>
    /// Sorted longest suffix first, so the most specific wildcard wins.
    private var wildcards: [(suffix: String, value: Value)] = []
    private var wildcardBySuffix: [String: Value] = [:]

    public init() { exact = ExactHostIndex() }

    init(capacity: Int) { exact = ExactHostIndex(expectedCount: capacity) }

    /// Exact names indexed already (built in parallel), wildcards still to insert.
    init(exact: ExactHostIndex<Value>) { self.exact = exact }

    /// Inserts `value` for `pattern` unless the pattern is there already; then returns what it maps to.
    package mutating func insertIfAbsent(_ pattern: HostPattern, _ value: Value) -> Value? {
        switch pattern {
        case .exact(let name): return exact.insertIfAbsent(name, value)
        case .wildcard(let suffix):
            if let existing = wildcardBySuffix[suffix] { return existing }
        }
        insert(pattern, value)
        return nil
    }

    public mutating func insert(_ pattern: HostPattern, _ value: Value) {
        switch pattern {
        case .exact(let name): exact.set(name, value)
        case .wildcard(let suffix):
            if wildcardBySuffix[suffix] == nil { wildcardBySuffix[suffix] = value }
            // After every wildcard at least as long, so equal lengths keep the order written; a binary
            // search, because sorting on each insert made 5,000 wildcard hosts quadratic.
            let length = suffix.utf8.count
            var low = 0
            var high = wildcards.count
            while low < high {
                let middle = (low + high) / 2
                if wildcards[middle].suffix.utf8.count >= length { low = middle + 1 } else { high = middle }
            }
            wildcards.insert((suffix, value), at: low)
        }
    }

    /// Removes `pattern` when it maps to `value` (the site that is going away still has it).
    package mutating func remove(_ pattern: HostPattern, ifAt value: Value) where Value: Equatable {
        switch pattern {
        case .exact(let name): exact.remove(name) { $0 == value }
        case .wildcard(let suffix):
            guard wildcardBySuffix[suffix] == value else { return }
            wildcardBySuffix[suffix] = nil
            if let index = wildcards.firstIndex(where: { $0.suffix == suffix && $0.value == value }) { wildcards.remove(at: index) }
        }
    }

    /// `host` may carry a port, a trailing dot and any letter case (a Host header as received).
    public func lookup(_ host: String) -> Value? {
        lookup(normalized: HostTable.normalize(host))
    }

    /// For a name already lower-cased, without port or trailing dot (the server normalises bytes itself).
    /// Specialised for the server's table (site positions): it runs on every request.
    @_specialize(exported:true,where Value == Int)
    public func lookup(normalized name: String) -> Value? {
        if let value = exact.lookup(name) { return value }
        if wildcards.count > 8, !name.hasPrefix(".") {
            // Many wildcards: try each parent domain, longest first, instead of every wildcard in turn.
            var rest = Substring(name)
            while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.index(after: dot)...]
                if rest.isEmpty { break }
                if let value = wildcardBySuffix[String(rest)] { return value }
            }
            return nil
        }
        for wildcard in wildcards {
            let suffix = wildcard.suffix
            if name.utf8.count > suffix.utf8.count + 1, name.hasSuffix(suffix),
                name.utf8[name.utf8.index(name.utf8.endIndex, offsetBy: -(suffix.utf8.count + 1))] == UInt8(ascii: ".")
            {
                return wildcard.value
            }
        }
        return nil
    }

    /// Lower-cases and strips the port and one trailing dot; keeps IPv6 literals in brackets intact.
    public static func normalize(_ host: String) -> String {
        var host = host
        return host.withUTF8 { normalize(bytes: $0) }
    }

    /// The one host normaliser (config lookups, Host headers, TLS server names): ASCII lower case, no
    /// port, no trailing dot, built from the bytes in one step.
    public static func normalize(bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard !bytes.isEmpty else { return "" }
        var end = bytes.count
        if bytes[0] == UInt8(ascii: "[") {
            if let close = bytes.firstIndex(of: UInt8(ascii: "]")) { end = close + 1 }
        } else if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        if end > 0 && bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
        return String(unsafeUninitializedCapacity: end) { output in
            for offset in 0..<end {
                let byte = bytes[offset]
                output[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return end
        }
    }
}
