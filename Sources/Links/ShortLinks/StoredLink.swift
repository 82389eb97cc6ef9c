import AASA

/// A short link as the link store keeps it: a path on one of the customer's link domains and FDL's
/// long-link parameters (`link`, `ifl`, `ipfl`, `afl`, `ofl`, `efr`, `amv`, `ct`, `pt`, `st`, `sd`, `si`…),
/// which `FirebaseLongLink.rule` turns into the same link rule a config writes. Keeping the parameters
/// rather than a rule means an FDL link, an imported Takeout row and a native request are stored alike,
/// and a click is checked against the site's current allowlist, not the one of the day it was created.
public struct StoredLink: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        /// Answers as its parameters say.
        case active
        /// Answers 410 Gone with a page: the link existed and was switched off on purpose.
        case disabled
        /// Answers nothing (the path is free again for a new link).
        case deleted
    }

    /// The link domain's host name, lower case (`go.example.com`).
    public var domain: String
    /// The path without its `/`.
    public var suffix: String
    public var parameters: [String: String]
    public var state: State
    /// Unix seconds.
    public var created: Int64
    public var updated: Int64
    /// The store's change counter when the link last changed: a reader that saw revision N asks only
    /// for what changed after it.
    public var revision: Int64
    /// The store's row id (0 before it is stored): how a click names its link on the loops, where a
    /// number is counted in a few instructions and a domain and suffix would be hashed.
    public var id: Int64

    public init(
        domain: String,
        suffix: String,
        parameters: [String: String],
        state: State = .active,
        created: Int64 = 0,
        updated: Int64 = 0,
        revision: Int64 = 0,
        id: Int64 = 0
    ) {
        self.domain = domain
        self.suffix = suffix
        self.parameters = parameters
        self.state = state
        self.created = created
        self.updated = updated
        self.revision = revision
        self.id = id
    }

    public var path: String { "/" + suffix }
    public var shortLink: String { "https://\(domain)/\(suffix)" }

    /// The parameters as one JSON object with sorted keys (what the store writes).
    public static func encode(_ parameters: [String: String]) -> String {
        JSONWriter.string(.object(parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
    }

    /// The parameters read back; nil when the text is not an object of strings (a damaged row).
    public static func decode(_ text: String) -> [String: String]? {
        let parsed = JSONParser.parse(text)
        guard let root = parsed.root, parsed.diagnostics.allSatisfy({ $0.severity != .error }), case .object(let members) = root.value
        else { return nil }
        var parameters: [String: String] = [:]
        for member in members {
            guard let value = member.value.stringValue else { return nil }
            parameters[member.key] = value
        }
        return parameters
    }
}

extension StoredLink {
    /// `https://go.example.com/abc`, `http://…` or `go.example.com/abc` → (`go.example.com`, `abc`); nil when
    /// there is no host or no single path segment.
    public static func locate(_ text: String) -> (domain: String, suffix: String)? {
        var rest = Substring(text)
        for scheme in ["https://", "http://"] where rest.lowercased().hasPrefix(scheme) { rest = rest.dropFirst(scheme.count) }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let domain = rest[..<slash].lowercased()
        let suffix = rest[rest.index(after: slash)...]
        guard !domain.isEmpty, !suffix.isEmpty, !suffix.contains("/"), !suffix.contains("?"), !suffix.contains("#") else { return nil }
        return (domain, String(suffix))
    }
}
