import Support

/// Finds the site for a request's host: exact names first, then the longest matching wildcard.
public struct HostTable<Value: Sendable>: Sendable {
    private var exact: ExactHostIndex<Value>
    /// Sorted longest suffix first, so the most specific wildcard wins. `pattern` is `*.suffix`, kept
    /// made so a request's metrics label costs nothing.
    private var wildcards: [(suffix: String, pattern: String, value: Value)] = []
    private var wildcardBySuffix: [String: (value: Value, pattern: String)] = [:]

    public init() { exact = ExactHostIndex() }

    init(capacity: Int) { exact = ExactHostIndex(expectedCount: capacity) }

    /// Exact names indexed already (built in parallel), wildcards still to insert.
    init(exact: ExactHostIndex<Value>) { self.exact = exact }

    /// Inserts `value` for `pattern` unless the pattern is there already; then returns what it maps to.
    package mutating func insertIfAbsent(_ pattern: HostPattern, _ value: Value) -> Value? {
        insertIfAbsent(SiteHosts(patterns: [pattern]), 0, value)
    }

    /// Inserts `value` for host `index` of `hosts` unless its pattern is there already; then returns what
    /// it maps to. An exact name stays where `hosts` keeps it.
    package mutating func insertIfAbsent(_ hosts: SiteHosts, _ index: Int, _ value: Value) -> Value? {
        if let name = hosts.exactName(index) { return exact.insertIfAbsent(name, value) }
        let suffix = String(decoding: hosts.nameBytes(index), as: UTF8.self)
        if let existing = wildcardBySuffix[suffix] { return existing.value }
        insertWildcard(suffix, value)
        return nil
    }

    public mutating func insert(_ pattern: HostPattern, _ value: Value) {
        switch pattern {
        case .exact(let name): exact.set(HostName(name), value)
        case .wildcard(let suffix): insertWildcard(suffix, value)
        }
    }

    private mutating func insertWildcard(_ suffix: String, _ value: Value) {
        let pattern = "*." + suffix
        if wildcardBySuffix[suffix] == nil { wildcardBySuffix[suffix] = (value, pattern) }
        // After every wildcard at least as long, so equal lengths keep the order written; a binary
        // search, because sorting on each insert made 5,000 wildcard hosts quadratic.
        let length = suffix.utf8.count
        var low = 0
        var high = wildcards.count
        while low < high {
            let middle = (low + high) / 2
            if wildcards[middle].suffix.utf8.count >= length { low = middle + 1 } else { high = middle }
        }
        wildcards.insert((suffix, pattern, value), at: low)
    }

    /// Removes `pattern` when it maps to `value` (the site that is going away still has it).
    package mutating func remove(_ pattern: HostPattern, ifAt value: Value) where Value: Equatable {
        switch pattern {
        case .exact(let name): exact.remove(name) { $0 == value }
        case .wildcard(let suffix):
            guard wildcardBySuffix[suffix]?.value == value else { return }
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
        return wildcardMatch(name)?.value
    }

    /// The value for `name` and the config entry that matched it: the exact host (`name` itself, equal to
    /// a name the config has), or the `*.suffix` pattern for a wildcard — a bounded label for metrics,
    /// whichever subdomain asked.
    @_specialize(exported:true,where Value == Int)
    public func match(normalized name: String) -> (value: Value, entry: String)? {
        if let value = exact.lookup(name) { return (value, name) }
        return wildcardMatch(name)
    }

    private func wildcardMatch(_ name: String) -> (value: Value, entry: String)? {
        if wildcards.count > 8, !name.hasPrefix(".") {
            // Many wildcards: try each parent domain, longest first, instead of every wildcard in turn.
            var rest = Substring(name)
            while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.index(after: dot)...]
                if rest.isEmpty { break }
                if let found = wildcardBySuffix[String(rest)] { return (found.value, found.pattern) }
            }
            return nil
        }
        for wildcard in wildcards {
            let suffix = wildcard.suffix
            if name.utf8.count > suffix.utf8.count + 1, name.hasSuffix(suffix),
                name.utf8[name.utf8.index(name.utf8.endIndex, offsetBy: -(suffix.utf8.count + 1))] == UInt8(ascii: ".")
            {
                return (wildcard.value, wildcard.pattern)
            }
        }
        return nil
    }

    /// The wildcard (`*.suffix`) that serves `name` when no exact host does; nil when an exact host does,
    /// or nothing. The same longest-suffix-first choice as `lookup`.
    public func wildcard(serving name: String) -> String? {
        guard exact.lookup(name) == nil, !name.hasPrefix(".") else { return nil }
        var rest = Substring(name)
        while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
            rest = rest[rest.index(after: dot)...]
            if rest.isEmpty { break }
            if let found = wildcardBySuffix[String(rest)] { return found.pattern }
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
        let end = normalizedEnd(bytes)
        return String(unsafeUninitializedCapacity: end) { output in
            for offset in 0..<end { output[offset] = lowercased(bytes[offset]) }
            return end
        }
    }

    /// Where the name ends: before the port and one trailing dot (the bytes before are the name).
    @inline(__always)
    static func normalizedEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard !bytes.isEmpty else { return 0 }
        var end = bytes.count
        if bytes[0] == UInt8(ascii: "[") {
            if let close = bytes.firstIndex(of: UInt8(ascii: "]")) { end = close + 1 }
        } else if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            end = colon
        }
        if end > 0 && bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
        return end
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte }
}

extension HostTable where Value == Int {
    /// ``match(normalized:)`` for a Host header's bytes as received: looked up as bytes while they are
    /// written into the label's string (reading a string's bytes back for the lookup was sixty
    /// instructions a request).
    public func match(hostHeader bytes: UnsafeBufferPointer<UInt8>) -> HostMatch? {
        let end = Self.normalizedEnd(bytes)
        var found: Value?
        let name = String(unsafeUninitializedCapacity: end) { output in
            for offset in 0..<end { output[offset] = Self.lowercased(bytes[offset]) }
            found = exact.lookup(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: output[0..<end])))
            return end
        }
        if let found { return HostMatch(value: found, entry: name, name: name) }
        guard let wildcard = wildcardMatch(name) else { return nil }
        return HostMatch(value: wildcard.value, entry: wildcard.entry, name: name)
    }
}

/// What a Host header matched in the server's table (site positions). Neither a tuple nor generic: an
/// optional three-element tuple, or an optional generic struct, was copied through the runtime's generic
/// witnesses, 40 to 160 instructions a request.
public struct HostMatch: Sendable {
    public let value: Int
    /// The config entry that matched: the exact host, or the `*.suffix` pattern (a bounded metrics label).
    public let entry: String
    /// The host asked for, normalized.
    public let name: String
}
