import Links

/// The visitor classes and outcomes a stored link's click is counted under, by number: a click's key on
/// the loops is then three numbers — the link's row id, this kind, HEAD or not — compared and hashed in a
/// few instructions, where two strings were copied and compared at every click. The writer turns a kind
/// back into the names the store keeps. Every label the routing gives is listed (ClickKindsTests checks);
/// anything else would be counted as `other`, never dropped.
enum ClickKinds {
    /// ``Visitor/label``s, then the platforms an app reports its opens from.
    static let visitors = ["iphone", "ipad", "android", "desktop", "crawler", "in-app", "ios", "other"]
    /// ``LinkOutcome``s, then a switched-off link, a refused one, and the app's own reports.
    static let outcomes = LinkOutcome.allCases.map(\.rawValue) + ["gone", "refused", "first-open", "re-open", "other"]

    static func code(visitor: String, outcome: String) -> UInt16 {
        let visitorIndex = visitors.firstIndex(of: visitor) ?? visitors.count - 1
        let outcomeIndex = outcomes.firstIndex(of: outcome) ?? outcomes.count - 1
        return UInt16(visitorIndex * outcomes.count + outcomeIndex)
    }

    static func names(_ code: UInt16) -> (visitor: String, outcome: String) {
        let index = Int(code)
        return (visitors[min(index / outcomes.count, visitors.count - 1)], outcomes[index % outcomes.count])
    }
}
