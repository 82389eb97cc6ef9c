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
    private var exact: [String: Value] = [:]
    /// Sorted longest suffix first, so the most specific wildcard wins.
    private var wildcards: [(suffix: String, value: Value)] = []

    public init() {}

    public mutating func insert(_ pattern: HostPattern, _ value: Value) {
        switch pattern {
        case .exact(let name): exact[name] = value
        case .wildcard(let suffix):
            wildcards.append((suffix, value))
            wildcards.sort { $0.suffix.utf8.count > $1.suffix.utf8.count }
        }
    }

    /// `host` may carry a port, a trailing dot and any letter case (a Host header as received).
    public func lookup(_ host: String) -> Value? {
        lookup(normalized: HostTable.normalize(host))
    }

    /// For a name already lower-cased, without port or trailing dot (the server normalises bytes itself).
    public func lookup(normalized name: String) -> Value? {
        if let value = exact[name] { return value }
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
        var name = host.lowercased()
        if name.hasPrefix("[") {
            if let close = name.firstIndex(of: "]") { name = String(name[...close]) }
        } else if let colon = name.lastIndex(of: ":") {
            name = String(name[..<colon])
        }
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}
