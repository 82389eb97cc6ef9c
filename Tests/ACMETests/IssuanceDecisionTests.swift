import Testing

@testable import ACME

/// The one decision on whether a name may have a certificate, and the one spelling names are stored by.
@Suite("Issuance decision")
struct IssuanceDecisionTests {
    @Test("Names normalise to one spelling: lower case, no trailing dot; the rest is refused with its reason")
    func names() {
        let same: [(String, String)] = [
            ("a.test", "a.test"), ("Shop.Example.COM", "shop.example.com"), ("exact.test.", "exact.test"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"), ("shop-1.example.com", "shop-1.example.com"),
            ("a", "a"), ("1.2.3.4", "1.2.3.4"),
            (String(repeating: "a", count: 63) + ".test", String(repeating: "a", count: 63) + ".test"),
        ]
        for (raw, normalized) in same {
            #expect((try? CertificateName.normalize(raw).get()) == normalized, "\(raw)")
        }
        let refused: [(String, String)] = [
            ("", "an empty name"), (".", "an empty name"), ("exact.test..", "an empty label"), ("a..b", "an empty label"),
            (".a", "an empty label"), ("-a.test", "a label starts with a hyphen"), ("a-.test", "a label ends with a hyphen"),
            ("a.test-", "a label ends with a hyphen"), ("*.evil.cust.test", "a wildcard name is never ordered for a handshake"),
            ("a.*.test", "a character no host name has"), ("../etc", "an empty label"), ("a/b", "a character no host name has"),
            ("a_b.test", "a character no host name has"), ("a.test ", "a character no host name has"),
            ("a:443", "a character no host name has"), ("bücher.example", "not an A-label (internationalised names arrive as xn--…)"),
            (String(repeating: "a", count: 64) + ".test", "a label longer than 63 bytes"),
            (Array(repeating: "abcdefghi", count: 26).joined(separator: "."), "longer than 253 bytes"),
        ]
        for (raw, reason) in refused {
            guard case .failure(let problem) = CertificateName.normalize(raw) else {
                Issue.record("\(raw) was accepted")
                continue
            }
            #expect(problem.reason == reason, "\(raw)")
        }
        // From the config, and only there, a wildcard is a name.
        #expect((try? CertificateName.normalize("*.Tenant.Test", allowWildcard: true).get()) == "*.tenant.test")
        #expect((try? CertificateName.normalize("*.", allowWildcard: true).get()) == nil)
        #expect((try? CertificateName.normalize("**.a", allowWildcard: true).get()) == nil)
    }

    static let inputs = IssuanceDecision.Inputs(
        configHosts: ["exact.test", "*.wild.test"],
        serves: { name in ["exact.test", "customer.test", "other.test"].contains(name) || name.hasSuffix(".cust.test") },
        onDemand: true
    )

    @Test("One decision for every spelling: served names, config hosts, wildcard coverage, strangers")
    func decisions() {
        let table: [(String, IssuanceDecision.Origin, String?, IssuanceDecision)] = [
            ("exact.test", .handshake, "exact.test", .configHost),
            ("EXACT.test.", .handshake, "exact.test", .configHost),
            ("a.wild.test", .handshake, "a.wild.test", .coveredByWildcard("*.wild.test")),
            ("A.Wild.Test.", .handshake, "a.wild.test", .coveredByWildcard("*.wild.test")),
            ("*.wild.test", .config, "*.wild.test", .configHost),
            ("customer.test", .handshake, "customer.test", .onDemand),
            ("new.cust.test", .handshake, "new.cust.test", .onDemand),
            ("stranger.test", .handshake, "stranger.test", .refused(.notServed)),
            ("*.evil.cust.test", .handshake, nil, .refused(.invalidName("a wildcard name is never ordered for a handshake"))),
            ("*.cust.test", .config, "*.cust.test", .refused(.notServed)),
            ("exact.test..", .handshake, nil, .refused(.invalidName("an empty label"))),
        ]
        for (raw, origin, name, decision) in table {
            let decided = IssuanceDecision.decide(raw, origin: origin, Self.inputs)
            #expect(decided.name == name, "\(raw)")
            #expect(decided.decision == decision, "\(raw)")
        }
        var off = Self.inputs
        off.onDemand = false
        #expect(IssuanceDecision.decide("customer.test", origin: .handshake, off).decision == .refused(.onDemandOff))
        #expect(IssuanceDecision.decide("exact.test", origin: .handshake, off).decision == .configHost)
    }
}
