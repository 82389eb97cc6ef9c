/// How bad a finding is: errors make `validate` fail and stop a config from being served.
public enum Severity: String, Sendable, Hashable, Comparable {
    case error
    case warning

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
}

/// One finding about a config, an AASA file or an entitlements file.
///
/// The rule id is stable (tests and users filter on it); the message says what is wrong and how to
/// fix it, in one read.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public var rule: String
    public var severity: Severity
    public var message: String
    /// The file the finding is about, as the user named it; nil for in-memory input.
    public var file: String?
    public var location: SourceLocation?
    /// JSONPath-style address of the value (`$.applinks.details[0].appIDs[1]`), when there is one.
    public var path: String?
    /// Set on a finding whose cause leaves a known key effectively absent (a misspelt or miscased key,
    /// app names that do not resolve): the findings that only restate that absence are dropped.
    public var absentKey: AbsentKey?

    public init(
        _ severity: Severity,
        _ rule: String,
        _ message: String,
        at location: SourceLocation? = nil,
        path: String? = nil,
        file: String? = nil
    ) {
        self.rule = rule
        self.severity = severity
        self.message = message
        self.file = file
        self.location = location
        self.path = path
    }

    /// clang / swift-format style: `config.json:12:7: error: message [rule] (at $.path)`.
    public var description: String {
        var prefix = file ?? "<input>"
        if let location { prefix += ":\(location.line):\(location.column)" }
        var text = "\(prefix): \(severity.rawValue): \(message) [\(rule)]"
        if let path { text += " (at \(path))" }
        return text
    }
}

extension Array where Element == Diagnostic {
    public var errorCount: Int { count { $0.severity == .error } }
    public var warningCount: Int { count { $0.severity == .warning } }
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// Findings in reading order: by file, then position; findings without a position last.
    public func sortedForDisplay() -> [Diagnostic] {
        enumerated().sorted { left, right in
            let (a, b) = (left.element, right.element)
            if (a.file ?? "") != (b.file ?? "") { return (a.file ?? "") < (b.file ?? "") }
            switch (a.location, b.location) {
            case (let x?, let y?) where x.offset != y.offset: return x.offset < y.offset
            case (.some, nil): return true
            case (nil, .some): return false
            default: return left.offset < right.offset
            }
        }.map(\.element)
    }

    /// One cause, one finding. Drops what only follows from an error already reported — "no rules" under
    /// a misspelt "components", "names no app" under an app name that does not resolve, "associates no
    /// app" when a misspelt key explains it — and the same rule reported twice at one place.
    public func withoutCascades() -> [Diagnostic] {
        var absent: [String: [String]] = [:]
        var absenceInFile = Set<String>()
        for finding in self where finding.severity == .error {
            guard let key = finding.absentKey else { continue }
            absent[finding.file.map { $0 + "\u{0}" + key.object } ?? key.object, default: []].append(key.key)
            absenceInFile.insert(finding.file ?? "")
        }
        var seen = Set<Diagnostic.Place>()
        // An app ID defined once under "apps" and used in several sites is one value: what is wrong with
        // it is said once, at the first place (the definition).
        var appIDFindings = Set<String>()
        return filter { finding in
            guard seen.insert(Diagnostic.Place(finding)).inserted else { return false }
            if finding.rule.hasPrefix("appid."),
                !appIDFindings.insert(finding.rule + "\u{0}" + (finding.file ?? "") + "\u{0}" + finding.message).inserted
            {
                return false
            }
            guard !absent.isEmpty else { return true }
            if finding.rule == "document.no-app" { return !absenceInFile.contains(finding.file ?? "") }
            guard let explained = AbsentKey.consequences[finding.rule], let path = finding.path else { return true }
            let keys = absent[finding.file.map { $0 + "\u{0}" + path } ?? path] ?? []
            return !keys.contains { explained.contains($0) }
        }
    }

    /// Sets the file on findings that do not name one yet.
    public func inFile(_ file: String?) -> [Diagnostic] {
        map { finding in
            var finding = finding
            if finding.file == nil { finding.file = file }
            return finding
        }
    }
}

/// A key a finding shows to be missing from an object: the one the user meant (`"components"` for a
/// misspelt `"componets"`) or one whose value did not resolve (`"apps"` naming no known app).
public struct AbsentKey: Sendable, Hashable {
    /// The JSONPath of the object the key belongs in.
    public var object: String
    public var key: String

    public init(object: String, key: String) {
        self.object = object
        self.key = key
    }

    /// The rules that only say a key is absent, reported at the object: rule → the keys whose absence
    /// is all they say.
    static let consequences: [String: Set<String>] = [
        "details.no-rules": ["components", "paths"],
        "components.empty": ["components"],
        "paths.empty": ["paths"],
        "details.no-app": ["appIDs", "appID", "apps"],
        "service.empty": ["apps"],
        "service.apps-missing": ["apps"],
        "details.empty": ["details"],
        "applinks.details-missing": ["details"],
        "applinks.missing": ["applinks"],
        "assetlinks.relation-missing": ["relation"],
        "assetlinks.target-missing": ["target"],
        "assetlinks.package-missing": ["package_name"],
        "assetlinks.fingerprints-missing": ["sha256_cert_fingerprints"],
    ]
}

extension Diagnostic {
    /// Where a finding is, for "the same rule never twice at one place".
    struct Place: Hashable {
        var rule: String
        var file: String?
        var offset: Int?
        var path: String?

        init(_ finding: Diagnostic) {
            rule = finding.rule
            file = finding.file
            offset = finding.location?.offset
            path = finding.path
        }
    }
}
