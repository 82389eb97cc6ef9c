public import AASA
import Support

/// The answers of the link API's reading calls (a page of links, a link's history, its counts), and the
/// same answers read back: `aasa-server links --server` prints what a running server answered exactly as
/// it prints what it read from the database itself.
extension ShortLinkAPI {
    /// A page of `GET /v1/links`: `{"links": [...], "disabledDomains": [{"domain", "since"}], "next"}`, `next`
    /// (the `after` of the following page) only when there may be one.
    public static func pageJSON(_ links: [StoredLink], disabledDomains: [String: Int64], next: StoredLink?) -> String {
        var members: [(String, JSONOutput)] = [
            ("links", .array(links.map(linkJSON))),
            (
                "disabledDomains",
                .array(
                    disabledDomains.sorted { $0.key < $1.key }.map {
                        .object([("domain", .string($0.key)), ("since", .int(Int($0.value)))])
                    }
                )
            ),
        ]
        if let next { members.append(("next", .string("\(next.domain)/\(next.suffix)"))) }
        return JSONWriter.string(.object(members))
    }

    /// `GET /v1/links/<domain>/<suffix>/history`: `{"shortLink", "history": [{"at", "change", "parameters"}]}`,
    /// `at` in Unix seconds.
    public static func historyJSON(_ link: StoredLink, _ history: [HistoryEntry]) -> String {
        JSONWriter.string(
            .object([
                ("shortLink", .string(link.shortLink)),
                (
                    "history",
                    .array(
                        history.map {
                            .object([
                                ("at", .int(Int($0.at))), ("change", .string($0.change)),
                                ("parameters", .object($0.parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                            ])
                        }
                    )
                ),
            ]),
            pretty: false
        )
    }

    /// `GET /v1/links/<domain>/<suffix>/clicks` and `links stats --json`: `{"shortLink", "clicks": [{"day",
    /// "visitor", "outcome", "head", "count"}]}`.
    public static func clicksJSON(_ link: StoredLink, _ rows: [ClickRow], pretty: Bool = false) -> String {
        let objects: [JSONOutput] = rows.map {
            .object([
                ("day", .string($0.day)), ("visitor", .string($0.visitor)), ("outcome", .string($0.outcome)), ("head", .bool($0.head)),
                ("count", .int($0.count)),
            ])
        }
        return JSONWriter.string(.object([("shortLink", .string(link.shortLink)), ("clicks", .array(objects))]), pretty: pretty)
    }

    public typealias HistoryEntry = (at: Int64, change: String, parameters: [String: String])

    /// A link as ``linkJSON(_:)`` writes it; nil for anything else.
    public static func link(_ node: JSONNode) -> StoredLink? {
        guard let domain = node["domain"]?.stringValue, let suffix = node["suffix"]?.stringValue,
            let state = node["state"]?.stringValue.flatMap(StoredLink.State.init(rawValue:)),
            let parameters = strings(node["parameters"]), let created = integer(node["created"]), let updated = integer(node["updated"])
        else { return nil }
        var link = StoredLink(domain: domain, suffix: suffix, parameters: parameters, state: state)
        link.created = created
        link.updated = updated
        return link
    }

    /// A page of ``pageJSON(_:disabledDomains:next:)``; nil when the answer is not one.
    public static func page(_ node: JSONNode) -> (links: [StoredLink], disabledDomains: [String: Int64], next: String?)? {
        guard let items = node["links"]?.arrayValue, let switches = node["disabledDomains"]?.arrayValue else { return nil }
        let links = items.compactMap(link)
        var disabled: [String: Int64] = [:]
        for item in switches {
            guard let domain = item["domain"]?.stringValue, let since = integer(item["since"]) else { return nil }
            disabled[domain] = since
        }
        guard links.count == items.count else { return nil }
        return (links, disabled, node["next"]?.stringValue)
    }

    /// The entries of ``historyJSON(_:_:)``; nil when the answer is not one.
    public static func history(_ node: JSONNode) -> [HistoryEntry]? {
        guard let items = node["history"]?.arrayValue else { return nil }
        let entries = items.compactMap { item -> HistoryEntry? in
            guard let at = integer(item["at"]), let change = item["change"]?.stringValue, let parameters = strings(item["parameters"])
            else { return nil }
            return (at, change, parameters)
        }
        return entries.count == items.count ? entries : nil
    }

    /// The rows of ``clicksJSON(_:_:pretty:)``; nil when the answer is not one.
    public static func clickRows(_ node: JSONNode) -> [ClickRow]? {
        guard let items = node["clicks"]?.arrayValue else { return nil }
        let rows = items.compactMap { item -> ClickRow? in
            guard let day = item["day"]?.stringValue, let visitor = item["visitor"]?.stringValue,
                let outcome = item["outcome"]?.stringValue, case .bool(let head)? = item["head"]?.value,
                let count = integer(item["count"])
            else { return nil }
            return ClickRow(day: day, visitor: visitor, outcome: outcome, head: head, count: Int(count))
        }
        return rows.count == items.count ? rows : nil
    }

    private static func integer(_ node: JSONNode?) -> Int64? {
        guard case .number(let text)? = node?.value else { return nil }
        return Int64(text)
    }

    private static func strings(_ node: JSONNode?) -> [String: String]? {
        guard let members = node?.objectValue else { return nil }
        var values: [String: String] = [:]
        for member in members {
            guard let value = member.value.stringValue else { return nil }
            values[member.key] = value
        }
        return values
    }
}
