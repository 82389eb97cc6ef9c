import AASA
import Testing

@testable import Check
@testable import HTTP1

/// The evaluation of what a probe saw, without a network: observations in, findings out.
@Suite("check: evaluating observations (no network)")
struct CheckEvaluationTests {
    static let document = Array(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/p/*"}]}]}}"#.utf8)

    func exchange(
        _ status: Int,
        _ headers: [(String, String)] = [("Content-Type", "application/json")],
        body: [UInt8] = document
    ) -> Exchange {
        let response = ParsedResponse(
            version: "HTTP/1.1",
            status: status,
            reason: HTTPStatus.reasonPhrase(status),
            headers: headers.map { (name: $0.0, value: $0.1) },
            body: body,
            framing: .contentLength(body.count),
            receivedBodyBytes: body.count
        )
        return Exchange(request: "GET", response: response, decodedBody: body)
    }

    func observation(get: Exchange, target: CheckTarget = CheckTarget(scheme: .http, host: "example.com")) -> HostObservation {
        var observation = HostObservation(target: target, checkedAt: 1_764_500_000)
        observation.address = "127.0.0.1:80"
        observation.wellKnown = get
        observation.wellKnownHead = get
        observation.wellKnownBrowser = get
        observation.rootPath = exchange(404, [], body: [])
        return observation
    }

    func rules(_ observation: HostObservation, _ expectations: CheckExpectations = CheckExpectations()) -> [String: CheckFinding.Severity] {
        var result: [String: CheckFinding.Severity] = [:]
        for finding in HostEvaluation.evaluate(observation, expectations)
        where result[finding.rule] == nil || finding.severity < result[finding.rule]! {
            result[finding.rule] = finding.severity
        }
        return result
    }

    @Test("The same wrong answer on both AASA paths is one finding, not also \"a different document\"")
    func sameWrongAnswerTwice() {
        let broken = Array(#"{"applinks": {"details": [}"#.utf8)
        var seen = observation(get: exchange(200, body: broken))
        seen.rootPath = exchange(200, body: broken)
        let findings = HostEvaluation.evaluate(seen, CheckExpectations())
        #expect(findings.filter { $0.rule == "json.syntax" }.count == 1, "\(findings.map(\.rule))")
        #expect(!findings.contains { $0.rule == "check.root-path" && $0.severity == .error }, "\(findings.map(\.rule))")
    }

    @Test("--path lists every app that opens the path, in the order iOS prefers them")
    func pathListsEveryApp() {
        let two = Array(#"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.a","ABCDE12345.com.b"],"components":[{"/":"/p/*"}]}]}}"#.utf8)
        var expectations = CheckExpectations()
        expectations.paths = ["/p/1"]
        let finding = HostEvaluation.evaluate(observation(get: exchange(200, body: two)), expectations).first { $0.rule == "check.path" }
        #expect(
            finding?.message == "/p/1 opens ABCDE12345.com.a (or, where it is not installed, ABCDE12345.com.b)",
            "\(String(describing: finding))"
        )
    }

    @Test("Redirects are named by their classic cause")
    func redirects() {
        let target = CheckTarget(host: "example.com")
        #expect(
            HostEvaluation.redirectKind("https://www.example.com/.well-known/apple-app-site-association", target).contains("apex to www")
        )
        #expect(HostEvaluation.redirectKind("/.well-known/apple-app-site-association/", target).contains("trailing slash"))
        #expect(
            HostEvaluation.redirectKind(
                "https://example.com/.well-known/apple-app-site-association",
                CheckTarget(scheme: .http, host: "example.com")
            ).contains("http to https")
        )
        #expect(HostEvaluation.redirectKind("https://cdn.other.net/x", target).contains("another host"))
    }

    @Test("Content types: application/json passes, text/html is an error, others and none are warnings")
    func contentTypes() {
        #expect(
            rules(observation(get: exchange(200, [("Content-Type", "application/json; charset=utf-8")])))["check.content-type"] == .pass
        )
        #expect(rules(observation(get: exchange(200, [("Content-Type", "text/html")])))["check.content-type"] == .error)
        #expect(rules(observation(get: exchange(200, [("Content-Type", "text/plain")])))["check.content-type"] == .warning)
        #expect(rules(observation(get: exchange(200, [])))["check.content-type"] == .warning)
    }

    @Test("--app, --config and the root path are judged on the live document")
    func expectations() {
        var expectations = CheckExpectations()
        expectations.apps = ["ABCDE12345.com.example.shop", "ABCDE12345.com.example.other"]
        expectations.expectedDocument = Array(
            #"{"applinks":{"details":[{"components":[{"/":"/p/*"}],"appIDs":["ABCDE12345.com.example.shop"]}]}}"#.utf8
        )
        let findings = HostEvaluation.evaluate(observation(get: exchange(200)), expectations)
        #expect(findings.contains { $0.rule == "check.app" && $0.severity == .pass })
        #expect(findings.contains { $0.rule == "check.app-missing" && $0.message.contains("example.other") })
        // Key order does not matter; the JSON is the same.
        #expect(findings.contains { $0.rule == "check.config-mismatch" && $0.severity == .pass })
        var differentRoot = observation(get: exchange(200))
        differentRoot.rootPath = exchange(200, body: Array(#"{"applinks":{"details":[]}}"#.utf8))
        #expect(rules(differentRoot)["check.root-path"] == .error)
    }

    @Test("The first difference between two documents is named by its JSON path")
    func difference() {
        let a = Array(#"{"applinks":{"details":[{"appIDs":["A.b"],"components":[{"/":"/a"},{"/":"/b"}]}]}}"#.utf8)
        let b = Array(#"{"applinks":{"details":[{"components":[{"/":"/a"}],"appIDs":["A.b"]}]}}"#.utf8)
        #expect(
            JSONDifference.first(expected: a, found: b)?.hasPrefix(
                "$.applinks.details[0].components[1]: expected {\"/\":\"/b\"}, found nothing"
            ) == true
        )
        #expect(JSONDifference.first(expected: a, found: a) == nil)
    }
}
