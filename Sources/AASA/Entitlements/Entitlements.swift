import Support

/// One `com.apple.developer.associated-domains` entry, e.g. `applinks:example.com?mode=developer`.
public struct AssociatedDomain: Sendable, Equatable {
    public var service: String
    public var host: String
    public var mode: String?
    public var location: SourceLocation

    public static let services = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
    public static let modes = ["developer", "managed", "developer+managed"]
}

/// Reads and checks the Associated Domains entitlement (docs/aasa-format.md §7).
public enum EntitlementsValidator {
    /// What a `?mode=` entry changes, and why it must not reach a release build.
    static func modeWarning(raw: String, mode: String) -> String {
        var effects: [String] = []
        if mode.contains("developer") {
            effects.append(
                "developer mode fetches the file straight from the host (not Apple's CDN), accepts a certificate it does not trust (but still requires a valid one: names and dates), and works only "
                    + "for development-signed apps on devices with Associated Domains Development turned on"
            )
        }
        if mode.contains("managed") {
            effects.append("managed mode applies only on supervised devices whose MDM profile lists the app and the domain")
        }
        return "\"\(raw)\" must not ship in a release build: " + effects.joined(separator: "; ")
            + ". Keep it in a Debug-only entitlements file"
    }

    public static let entitlementKey = "com.apple.developer.associated-domains"

    /// Extracts the raw entries: from the XML plist Xcode writes, or one entry per line.
    public static func entries(in text: String) -> (entries: [(String, SourceLocation)], diagnostics: [Diagnostic]) {
        if text.contains("<plist") || text.contains("<?xml") || text.contains("<dict") {
            return plistEntries(text)
        }
        var entries: [(String, SourceLocation)] = []
        var offset = 0
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let leading = line.prefix { $0 == " " || $0 == "\t" }.count
            let trimmed = line.trimming(" \t\r")
            if !trimmed.isEmpty && !trimmed.hasPrefix("#") {
                entries.append((trimmed, SourceLocation(offset: offset + leading, line: index + 1, column: leading + 1)))
            }
            offset += line.utf8.count + 1
        }
        return (entries, [])
    }

    static func plistEntries(_ text: String) -> (entries: [(String, SourceLocation)], diagnostics: [Diagnostic]) {
        let scalars = Array(text.unicodeScalars)
        let source = String(String.UnicodeScalarView(scalars))
        guard let keyRange = source.firstRange(of: "<key>\(entitlementKey)</key>") else {
            return (
                [],
                [
                    Diagnostic(
                        .error,
                        "entitlement.missing",
                        "the plist has no \(entitlementKey) key; add the Associated Domains capability in Xcode",
                        at: SourceLocation(offset: 0, line: 1, column: 1)
                    )
                ]
            )
        }
        var rest = source[keyRange.upperBound...]
        guard let arrayStart = rest.firstRange(of: "<array>"), let arrayEnd = rest.firstRange(of: "</array>") else {
            let location = position(of: keyRange.lowerBound, in: source)
            return (
                [], [Diagnostic(.error, "entitlement.format", "\(entitlementKey) must be an <array> of <string> entries", at: location)]
            )
        }
        rest = rest[arrayStart.upperBound..<arrayEnd.lowerBound]
        var entries: [(String, SourceLocation)] = []
        while let open = rest.firstRange(of: "<string>"), let close = rest[open.upperBound...].firstRange(of: "</string>") {
            let value = decodeXMLEntities(String(rest[open.upperBound..<close.lowerBound]))
            entries.append((value, position(of: open.upperBound, in: source)))
            rest = rest[close.upperBound...]
        }
        return (entries, [])
    }

    static func position(of index: String.Index, in text: String) -> SourceLocation {
        var line = 1
        var column = 1
        var offset = 0
        for scalar in text.unicodeScalars[..<index] {
            offset += String(scalar).utf8.count
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return SourceLocation(offset: offset, line: line, column: column)
    }

    static func decodeXMLEntities(_ text: String) -> String {
        text.replacingAll("&lt;", with: "<").replacingAll("&gt;", with: ">").replacingAll("&quot;", with: "\"")
            .replacingAll("&apos;", with: "'").replacingAll("&amp;", with: "&")
    }

    /// Parses and checks one entry; returns the parsed entry when it is usable.
    public static func check(_ raw: String, at location: SourceLocation) -> (AssociatedDomain?, [Diagnostic]) {
        var findings: [Diagnostic] = []
        func report(_ severity: Severity, _ rule: String, _ message: String) {
            findings.append(Diagnostic(severity, rule, message, at: location))
        }
        guard let colon = raw.firstIndex(of: ":") else {
            report(.error, "entitlement.format", "\"\(raw)\" is not <service>:<host>, e.g. \"applinks:example.com\"")
            return (nil, findings)
        }
        let service = String(raw[..<colon])
        var rest = String(raw[raw.index(after: colon)...])
        guard AssociatedDomain.services.contains(service) else {
            let suggestion = closestMatch(to: service, in: AssociatedDomain.services)
            report(
                .error,
                "entitlement.service",
                "unknown service \"\(service)\" in \"\(raw)\"; use one of "
                    + AssociatedDomain.services.joined(separator: ", ") + (suggestion.map { " — did you mean \"\($0)\"?" } ?? "")
            )
            return (nil, findings)
        }
        if rest.hasPrefix("//") || rest.lowercased().hasPrefix("https://") || rest.lowercased().hasPrefix("http://") {
            // One finding for a pasted URL, with the whole fix: the scheme, any path and slashes go; a mode stays.
            let afterScheme = rest.drop { $0 != "/" }.drop { $0 == "/" }
            let host = afterScheme.prefix { $0 != "/" && $0 != "?" }
            let mode = afterScheme.firstIndex(of: "?").map { String(afterScheme[$0...]) } ?? ""
            let fixed = String(host) + (mode.hasPrefix("?mode=") ? mode : "")
            report(.error, "entitlement.scheme", "\"\(raw)\" is a URL; an entitlement names only the host: write \"\(service):\(fixed)\"")
            rest = fixed
        }
        var mode: String?
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = String(rest[..<question])
            if query.hasPrefix("mode=") {
                mode = String(query.dropFirst(5))
                if let mode, !AssociatedDomain.modes.contains(mode) {
                    report(
                        .error,
                        "entitlement.mode",
                        "unknown mode \"\(mode)\" in \"\(raw)\"; Apple defines ?mode=developer, ?mode=managed and "
                            + "?mode=developer+managed"
                    )
                } else if let mode {
                    report(.warning, "entitlement.mode-not-for-release", Self.modeWarning(raw: raw, mode: mode))
                }
            } else {
                report(.error, "entitlement.mode", "\"\(raw)\": the only query an entry may have is ?mode=…")
            }
        }
        if rest.hasSuffix("/") {
            report(.error, "entitlement.trailing-slash", "\"\(raw)\" ends with '/'; write only the host")
            while rest.hasSuffix("/") { rest.removeLast() }
        }
        if let slash = rest.firstIndex(of: "/") {
            report(
                .error,
                "entitlement.path",
                "\"\(raw)\" contains a path (\(rest[slash...])); entitlements name only the host — paths belong in the AASA file"
            )
            rest = String(rest[..<slash])
        }
        if let colonInHost = rest.lastIndex(of: ":") {
            report(
                .error,
                "entitlement.port",
                "\"\(raw)\" has a port (\(rest[rest.index(after: colonInHost)...])); Apple ignores entries with ports "
                    + "(TN3155), so the AASA file must be reachable on 443"
            )
            rest = String(rest[..<colonInHost])
        }
        if rest.contains("*") {
            if !rest.hasPrefix("*.") || rest.dropFirst(2).contains("*") {
                report(
                    .error,
                    "entitlement.wildcard",
                    "\"\(raw)\": a wildcard must be the whole first label, as in \"\(service):*.example.com\""
                )
                return (nil, findings)
            }
            if service == "appclips" {
                report(
                    .error,
                    "entitlement.appclips-wildcard",
                    "\"\(raw)\": App Clip domains cannot be wildcards; list each host"
                )
            }
        }
        switch HostPattern.parse(rest) {
        case .failure(let error):
            report(.error, "entitlement.host", error.message)
            return (nil, findings)
        case .success:
            break
        }
        return (AssociatedDomain(service: service, host: rest.lowercased(), mode: mode, location: location), findings)
    }

    /// Checks every entry, and with a loaded config, that each host serves a document naming `app`.
    public static func validate(_ text: String, config: LoadedConfig? = nil, app: String? = nil) -> [Diagnostic] {
        let (raw, parseFindings) = entries(in: text)
        var findings = parseFindings
        if raw.isEmpty && parseFindings.isEmpty {
            findings.append(
                Diagnostic(
                    .warning,
                    "entitlement.empty",
                    "no associated-domain entries found",
                    at: SourceLocation(offset: 0, line: 1, column: 1)
                )
            )
        }
        var seen: [String: (entry: String, location: SourceLocation)] = [:]
        for (entry, location) in raw {
            let (domain, entryFindings) = check(entry, at: location)
            findings += entryFindings
            guard let domain else { continue }
            let key = "\(domain.service):\(domain.host)?\(domain.mode ?? "")"
            if let first = seen[key] {
                // Entries that differ only in what iOS ignores (a port, letter case) are one entry: name both.
                let message =
                    first.entry == entry
                    ? "\"\(entry)\" is listed twice (first on line \(first.location.line))"
                    : "\"\(entry)\" and \"\(first.entry)\" (line \(first.location.line)) name the same host (a port or "
                        + "letter case does not make another entry); keep one"
                findings.append(Diagnostic(.warning, "entitlement.duplicate", message, at: location))
            } else {
                seen[key] = (entry, location)
            }
            if let config {
                findings += crossCheck(domain, entry: entry, config: config, app: app)
            }
        }
        return findings
    }

    static func crossCheck(_ domain: AssociatedDomain, entry: String, config: LoadedConfig, app: String?) -> [Diagnostic] {
        // iOS fetches the file for "*.example.com" from example.com itself (TN3155).
        let fetchHost = domain.host.hasPrefix("*.") ? String(domain.host.dropFirst(2)) : domain.host
        guard let site = config.site(forHost: fetchHost) else {
            return [
                Diagnostic(
                    .error,
                    "entitlement.host-not-served",
                    "\"\(entry)\": no site in the config serves \(fetchHost), so iOS would get "
                        + (config.config?.unknownHost == .notFound ? "a 404" : "an empty document")
                        + "; add \"\(fetchHost)\" to a site's hosts",
                    at: domain.location
                )
            ]
        }
        guard let app, let document = site.document else { return [] }
        let listed: [String]
        switch domain.service {
        case "applinks": listed = document.applinks?.details.flatMap(\.effectiveAppIDs) ?? []
        case "webcredentials": listed = document.webcredentials?.apps.map(\.value) ?? []
        case "appclips": listed = document.appclips?.apps.map(\.value) ?? []
        default: listed = document.activitycontinuation?.apps.map(\.value) ?? []
        }
        if listed.contains(app) { return [] }
        let caseOnly = listed.first { $0.lowercased() == app.lowercased() }
        return [
            Diagnostic(
                .error,
                "entitlement.app-missing",
                "\"\(entry)\": the document served on \(fetchHost) (site \(site.site.name)) does not list \(app) under "
                    + "\"\(domain.service)\""
                    + (caseOnly.map { " (it lists \($0), which differs only in case)" }
                        ?? (listed.isEmpty ? "; it lists no app there" : "; it lists " + listed.joined(separator: ", "))),
                at: domain.location
            )
        ]
    }
}
