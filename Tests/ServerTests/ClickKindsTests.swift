import Links
import Testing

@testable import Server

/// A click's visitor class and outcome, counted on the loops as one number: every label the routing gives
/// comes back from its number as it went in.
@Suite("Click kinds: visitor and outcome as one number")
struct ClickKindsTests {
    @Test("Every visitor class, app platform and outcome the routing gives round-trips; anything else is 'other'")
    func roundTrip() {
        let visitors =
            [Visitor.iPhone, .iPad, .android, .desktop, .crawler("Slack"), .inAppBrowser("Instagram", onIOS: true)].map(\.label)
            + ["ios", "android", "other"]
        let outcomes = LinkOutcome.allCases.map(\.rawValue) + ["gone", "refused", "first-open", "re-open"]
        var codes: Set<UInt16> = []
        for visitor in visitors {
            for outcome in outcomes {
                let code = ClickKinds.code(visitor: visitor, outcome: outcome)
                #expect(ClickKinds.names(code) == (visitor, outcome), "\(visitor) \(outcome)")
                codes.insert(code)
            }
        }
        #expect(codes.count == Set(visitors).count * outcomes.count, "each pair its own number")
        #expect(ClickKinds.names(ClickKinds.code(visitor: "toaster", outcome: "teleported")) == ("other", "other"))
    }
}
