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
        var text = text
        guard let isWildcard = text.withUTF8(plainShape) else { return nil }
        return isWildcard ? .wildcard(String(text.dropFirst(2))) : .exact(text)
    }

    /// The same, from bytes a reader holds (a config's text): the string is made once, and only for a
    /// plain host.
    static func parsePlain(_ bytes: UnsafeBufferPointer<UInt8>) -> HostPattern? {
        guard let isWildcard = plainShape(bytes) else { return nil }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(isWildcard ? 2 : 0)...]), as: UTF8.self)
        return isWildcard ? .wildcard(name) : .exact(name)
    }

    /// Whether a plain host is a wildcard; nil when the host is not plain. Indexes the buffer directly:
    /// every host of every site comes through here (a generic slice walk cost twice as much). A label is
    /// scanned as one run of letters, digits and hyphens, its ends checked once: a byte-by-byte state
    /// machine cost twenty instructions a byte, a fifth of a second at a million hosts' first start.
    static func plainShape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        let count = bytes.count
        guard count > 0, count <= 253 else { return nil }
        let hyphen = UInt8(ascii: "-")
        let wildcard = count > 2 && bytes[0] == UInt8(ascii: "*") && bytes[1] == UInt8(ascii: ".")
        var labels = 0
        var index = wildcard ? 2 : 0
        while true {
            let start = index
            while index < count {
                let byte = bytes[index]
                guard byte &- UInt8(ascii: "a") < 26 || byte &- UInt8(ascii: "0") < 10 || byte == hyphen else { break }
                index += 1
            }
            guard index > start, index - start <= 63, bytes[start] != hyphen, bytes[index - 1] != hyphen else { return nil }
            if index == count { break }
            guard bytes[index] == UInt8(ascii: ".") else { return nil }
            labels += 1
            index += 1
        }
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
