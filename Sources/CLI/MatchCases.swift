import AASA
import Support

/// `match --cases FILE`: a list of URLs with the app each must open (or "none"), checked in CI, with a
/// JUnit report. Reading the file and writing the report are pure; the command evaluates.
struct MatchCase: Equatable {
    var url: String
    /// An app name of the config, an app ID, or "none".
    var expect: String
    /// The iOS major version to read the document as (nil: the current reading).
    var ios: Int?
    /// Where the case is in its file, for messages.
    var line: Int

    /// The cases in `bytes` (a JSON array of `{"url", "expect", "ios"?, "comment"?}`), or what is wrong
    /// with the file, naming the line and the case.
    static func parse(_ bytes: [UInt8], file: String) -> Result<[MatchCase], UsageError> {
        let parsed = JSONParser.parse(bytes)
        guard let root = parsed.root else {
            let first = parsed.diagnostics.first.map { "\($0.location.map { "\(file):\($0.line):\($0.column): " } ?? "")\($0.message)" }
            return .failure(UsageError("--cases \(file): not JSON: \(first ?? "unreadable")"))
        }
        guard let items = root.arrayValue else {
            return .failure(UsageError(#"--cases \#(file): give a JSON array of {"url": …, "expect": "APP" or "none"} objects"#))
        }
        var cases: [MatchCase] = []
        for (index, item) in items.enumerated() {
            let at = "\(file):\(item.location.line): case \(index)"
            guard let members = item.objectValue else { return .failure(UsageError("--cases \(at): not an object")) }
            for member in members where !["url", "expect", "ios", "comment"].contains(member.key) {
                return .failure(UsageError("--cases \(at): unknown key \"\(member.key)\" (url, expect, ios, comment)"))
            }
            guard let url = item["url"]?.stringValue, !url.isEmpty else {
                return .failure(UsageError(#"--cases \#(at): "url" (a string) is missing"#))
            }
            guard let expect = item["expect"]?.stringValue, !expect.isEmpty else {
                return .failure(UsageError(#"--cases \#(at): "expect" (an app name, an app ID or "none") is missing"#))
            }
            var ios: Int?
            if let node = item["ios"] {
                guard case .number(let text) = node.value, let version = Int(text), (9...40).contains(version) else {
                    return .failure(UsageError(#"--cases \#(at): "ios" is a major iOS version from 9, e.g. 12"#))
                }
                ios = version
            }
            cases.append(MatchCase(url: url, expect: expect, ios: ios, line: item.location.line))
        }
        guard !cases.isEmpty else { return .failure(UsageError("--cases \(file): no cases")) }
        return .success(cases)
    }

    /// What a case found: the apps, and why when it differs.
    struct Outcome: Equatable {
        var matchCase: MatchCase
        var host: String
        /// nil when as expected; else "expected shop, got none".
        var mismatch: String?
        /// The reason line `match` prints (decided by…, excluded by…, no rule matches).
        var reason: String
    }

    /// A JUnit report: one suite per host, one test case per URL (named by the URL, and the iOS version
    /// when one is given, so a CI system's history follows each link).
    static func junit(_ results: [Outcome]) -> String {
        var hosts: [String] = []
        var byHost: [String: [Outcome]] = [:]
        for result in results {
            if byHost[result.host] == nil { hosts.append(result.host) }
            byHost[result.host, default: []].append(result)
        }
        let suites = hosts.map { host in
            JUnit.Suite(
                name: host,
                cases: (byHost[host] ?? []).map { result in
                    JUnit.Case(
                        classname: host,
                        name: result.matchCase.url + (result.matchCase.ios.map { " (iOS \($0))" } ?? ""),
                        failure: result.mismatch.map { JUnit.Failure(message: $0, type: "match.mismatch", detail: result.reason) },
                        output: result.reason
                    )
                }
            )
        }
        return JUnit.document(name: "aasa-server match", suites: suites)
    }
}
