public import AASA

/// The state directory's format: one JSON object per line, appended, so a crash can cut off at most
/// the last line — which is then skipped, as is any line that is not a record.
public enum RecordLine {
    public enum Entry: Equatable, Sendable {
        case fetch(FetchRecord)
        case version(VersionRecord)
    }

    public static func json(_ fetch: FetchRecord) -> JSONOutput {
        .object([
            ("type", .string("fetch")), ("time", .int(fetch.time)), ("host", .string(fetch.host)),
            ("fetcher", .string(fetch.fetcher.rawValue)), ("path", .string(fetch.path)), ("status", .int(fetch.status)),
            ("bytes", .int(fetch.bytes)), ("version", .string(fetch.version)), ("client", .string(fetch.client)),
            ("origin", .string(fetch.origin.rawValue)),
        ])
    }

    public static func json(_ version: VersionRecord) -> JSONOutput {
        .object([
            ("type", .string("version")), ("host", .string(version.host)), ("document", .string(version.document.rawValue)),
            ("version", .string(version.version)), ("since", .int(version.since)),
        ])
    }

    public static func line(_ entry: Entry) -> [UInt8] {
        let value: JSONOutput
        switch entry {
        case .fetch(let fetch): value = json(fetch)
        case .version(let version): value = json(version)
        }
        return JSONWriter.bytes(value) + [0x0A]
    }

    /// Nil for anything that is not a whole, well-formed record.
    public static func parse(_ line: ArraySlice<UInt8>) -> Entry? {
        let parsed = JSONParser.parse(Array(line), duplicateKeys: .error)
        guard let root = parsed.root, parsed.diagnostics.isEmpty else { return nil }
        return entry(root)
    }

    public static func entry(_ node: JSONNode) -> Entry? {
        func string(_ key: String) -> String? { node[key]?.stringValue }
        func int(_ key: String) -> Int? {
            guard case .number(let text)? = node[key]?.value else { return nil }
            return Int(text)
        }
        switch string("type") {
        case "fetch":
            guard let time = int("time"), let host = string("host"), let fetcher = string("fetcher").flatMap(Fetcher.init(rawValue:)),
                let path = string("path"), let status = int("status"), let bytes = int("bytes"), let version = string("version"),
                let client = string("client")
            else { return nil }
            return .fetch(
                FetchRecord(
                    time: time,
                    host: host,
                    fetcher: fetcher,
                    path: path,
                    status: status,
                    bytes: bytes,
                    version: version,
                    client: client,
                    // Records written before addresses were checked: the User-Agent's word is all there is.
                    origin: string("origin").flatMap(FetchOrigin.init(rawValue:)) ?? (fetcher == .appleDevice ? .device : .claimed)
                )
            )
        case "version":
            guard let host = string("host"), let document = string("document").flatMap(DocumentKind.init(rawValue:)),
                let version = string("version"), let since = int("since")
            else { return nil }
            return .version(VersionRecord(host: host, document: document, version: version, since: since))
        default:
            return nil
        }
    }

    /// Every record in a file's bytes, and how many lines were damaged (skipped).
    public static func parseAll(_ bytes: [UInt8]) -> (entries: [Entry], damaged: Int) {
        var entries: [Entry] = []
        var damaged = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            if end > start {
                if let entry = parse(bytes[start..<end]) { entries.append(entry) } else { damaged += 1 }
            }
            start = end + 1
        }
        return (entries, damaged)
    }

    public static func apply(_ entries: [Entry], to ledger: inout FetchLedger) {
        for entry in entries {
            switch entry {
            case .fetch(let fetch): ledger.add(fetch)
            case .version(let version): ledger.add(version)
            }
        }
    }
}
