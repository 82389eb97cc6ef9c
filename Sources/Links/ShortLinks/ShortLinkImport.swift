public import AASA
import Support

/// What an import would store, checked before anything is written: Google Takeout's FDL export or this
/// server's own JSON lines (`links export`), each record a link on a link domain of the config, its
/// parameters accepted by that site's allowlist and app exactly as a new link's are. Records that cannot
/// be imported are reported with their line and why; the rest go on.
public enum ShortLinkImport {
    public struct Candidate: Sendable, Equatable {
        public var line: Int
        public var link: StoredLink
    }

    public struct Skip: Sendable, Equatable {
        public var line: Int
        /// The record's short link as the file wrote it.
        public var what: String
        public var reason: String

        public init(line: Int, what: String, reason: String) {
            self.line = line
            self.what = what
            self.reason = reason
        }
    }

    public struct Plan: Sendable, Equatable {
        public var candidates: [Candidate] = []
        public var skipped: [Skip] = []
    }

    /// Takeout rows: each short link's path on `domain` (or, without one, on the short link's own host).
    public static func takeout(_ result: TakeoutCSV.Result, domain: String?, config: LoadedConfig, now: Int64) -> Plan {
        var plan = Plan()
        for problem in result.skipped {
            plan.skipped.append(Skip(line: problem.line, what: "", reason: problem.reason))
        }
        for row in result.rows {
            func skip(_ reason: String) { plan.skipped.append(Skip(line: row.line, what: row.shortLink, reason: reason)) }
            if row.archived {
                skip("archived in Firebase")
                continue
            }
            guard let (host, suffix) = StoredLink.locate(row.shortLink) else {
                skip("is not https://HOST/SUFFIX with a one-segment path")
                continue
            }
            let created = row.created.flatMap(Self.unixSeconds) ?? now
            let link = StoredLink(domain: domain ?? host, suffix: suffix, parameters: row.parameters, created: created, updated: created)
            if let reason = problem(link, config: config) {
                skip(reason)
                continue
            }
            plan.candidates.append(Candidate(line: row.line, link: link))
        }
        return plan
    }

    /// `links export`'s lines: one JSON object per line, as ``ShortLinkAPI/linkJSON(_:)`` writes them.
    public static func jsonLines(_ bytes: [UInt8], config: LoadedConfig) -> Plan {
        var plan = Plan()
        var line = 0
        for text in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            line += 1
            if text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            func skip(_ reason: String, _ what: String = "") { plan.skipped.append(Skip(line: line, what: what, reason: reason)) }
            let parsed = JSONParser.parse(Array(text))
            guard let root = parsed.root, parsed.diagnostics.allSatisfy({ $0.severity != .error }), root.objectValue != nil else {
                skip("is not a JSON object")
                continue
            }
            guard let domain = root["domain"]?.stringValue?.lowercased(), let suffix = root["suffix"]?.stringValue else {
                skip("has no \"domain\" and \"suffix\"")
                continue
            }
            let what = "https://\(domain)/\(suffix)"
            guard let members = root["parameters"]?.objectValue else {
                skip("has no \"parameters\" object", what)
                continue
            }
            var parameters: [String: String] = [:]
            for member in members {
                if let value = member.value.stringValue { parameters[member.key] = value }
            }
            guard parameters.count == members.count else {
                skip("has a parameter that is not a string", what)
                continue
            }
            let state = root["state"]?.stringValue.flatMap(StoredLink.State.init(rawValue:)) ?? .active
            guard state != .deleted else {
                skip("is deleted", what)
                continue
            }
            let created = root["created"].flatMap { node -> Int64? in
                if case .number(let text) = node.value { return Int64(text) }
                return nil
            }
            var link = StoredLink(domain: domain, suffix: suffix, parameters: parameters, state: state)
            link.created = created ?? 0
            link.updated = link.created
            if let reason = problem(link, config: config) {
                skip(reason, what)
                continue
            }
            plan.candidates.append(Candidate(line: line, link: link))
        }
        return plan
    }

    /// Why `link` cannot be stored under `config`; nil when it can.
    public static func problem(_ link: StoredLink, config: LoadedConfig) -> String? {
        guard let site = config.site(forHost: link.domain), let links = site.site.links else {
            return "\(link.domain) is not a link domain of the config"
        }
        if let problem = ShortLinkSuffix.aliasProblem(link.suffix) { return "its suffix \(problem)" }
        let ownHosts = Set(site.site.hosts.map(\.value.description)).union([link.domain])
        if case .failure(let refusal) = FirebaseLongLink.rule(link.parameters, links: links, ownHosts: ownHosts) {
            return "\(refusal.parameter) \(refusal.reason)"
        }
        return nil
    }

    /// Takeout's creation times: RFC 3339, or a date and time separated by a space.
    static func unixSeconds(_ text: String) -> Int64? {
        (CivilTime.parseRFC3339(text) ?? CivilTime.parseRFC3339(text.replacingAll(" ", with: "T"))).map(Int64.init)
    }
}
