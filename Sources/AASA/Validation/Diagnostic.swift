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

/// Builds JSONPath-style addresses: `$.applinks.details[0].components[1]["/"]`.
///
/// Every decoded value keeps its path, but few paths are ever shown, so a path is a chain of
/// components and its text is written only when asked for.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    private final class Step: Sendable {
        let parent: Step?
        let key: String?
        let index: Int

        init(parent: Step?, key: String?, index: Int) {
            self.parent = parent
            self.key = key
            self.index = index
        }
    }

    private let last: Step?

    public static let root = JSONPath(last: nil)

    private init(last: Step?) { self.last = last }

    public func key(_ key: String) -> JSONPath { JSONPath(last: Step(parent: last, key: key, index: 0)) }

    public func index(_ index: Int) -> JSONPath { JSONPath(last: Step(parent: last, key: nil, index: index)) }

    /// `$[index]`, where each site of an included file lives. Files hold a few hundred sites each, so the
    /// first few thousand of these are made once and shared by every file: a million sites then do not
    /// each keep their own (paths compare by their text, so sharing changes no comparison).
    public static func rootIndex(_ index: Int) -> JSONPath {
        index < sharedRootIndexes.count ? sharedRootIndexes[index] : root.index(index)
    }

    private static let sharedRootIndexes = (0..<4096).map { root.index($0) }

    public var description: String {
        var steps: [Step] = []
        var step = last
        while let current = step {
            steps.append(current)
            step = current.parent
        }
        var text = "$"
        for step in steps.reversed() {
            if let key = step.key { Self.append(key: key, to: &text) } else { text += "[\(step.index)]" }
        }
        return text
    }

    private static func append(key: String, to text: inout String) {
        var isIdentifier = !key.isEmpty
        var needsEscape = false
        var isFirst = true
        for byte in key.utf8 {
            defer { isFirst = false }
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): break
            case UInt8(ascii: "0")...UInt8(ascii: "9"): if isFirst { isIdentifier = false }
            case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                isIdentifier = false
                needsEscape = true
            default: isIdentifier = false
            }
        }
        if isIdentifier {
            text += "." + key
            return
        }
        let escaped = needsEscape ? key.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") : key
        text += "[\"" + escaped + "\"]"
    }

    public static func == (left: JSONPath, right: JSONPath) -> Bool {
        left.last === right.last || left.description == right.description
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

extension String {
    /// Plain substring replacement; the pure target does not import Foundation.
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty, contains(target) else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        result += rest
        return result
    }
}

extension String {
    /// Substring test on UTF-8 bytes: the generic `contains(_:)` goes through the string-processing
    /// machinery and took ~20% of loading a 10,000-host config before this.
    func containsBytes(_ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        var text = self
        text.makeContiguousUTF8()
        return text.utf8.withContiguousStorageIfAvailable { haystack -> Bool in
            guard haystack.count >= count else { return false }
            if count == 0 { return true }
            search: for start in 0...(haystack.count - count) {
                for offset in 0..<count where haystack[start + offset] != needle.utf8Start[offset] { continue search }
                return true
            }
            return false
        } ?? false
    }
}
