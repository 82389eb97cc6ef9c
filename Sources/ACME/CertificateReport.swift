import AASA
import Support

/// One host's certificate as `aasa-server certificates` reports it.
public struct CertificateRow: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// A file of `server.certificates`.
        case file
        /// Obtained by ACME and stored.
        case acme
        /// ACME takes care of it, and has nothing stored yet.
        case pending
        /// Neither a file nor ACME covers it.
        case none
    }

    public var host: String
    public var source: Source
    public var issuer: String?
    public var notAfter: Int?
    /// ACME: when it is renewed; after a failure, when it is tried again.
    public var nextRenewal: Int?
    public var lastError: String?
    /// Where it is: the certificate file.
    public var location: String?

    public init(
        host: String,
        source: Source,
        issuer: String? = nil,
        notAfter: Int? = nil,
        nextRenewal: Int? = nil,
        lastError: String? = nil,
        location: String? = nil
    ) {
        self.host = host
        self.source = source
        self.issuer = issuer
        self.notAfter = notAfter
        self.nextRenewal = nextRenewal
        self.lastError = lastError
        self.location = location
    }

    /// A certificate a client accepts at `now` (as far as dates go).
    public func isValid(at now: Int) -> Bool { (source == .file || source == .acme) && (notAfter ?? 0) > now }
}

/// The table and the JSON of `aasa-server certificates`: pure formatting of rows.
public enum CertificateReport {
    public static func text(_ rows: [CertificateRow], now: Int) -> String {
        let header = ["HOST", "SOURCE", "ISSUER", "NOT AFTER", "NEXT RENEWAL", "LAST ERROR"]
        var table = [header]
        for row in rows {
            var source = row.source.rawValue
            if let notAfter = row.notAfter, notAfter <= now { source += " (expired)" }
            table.append([
                row.host, source, row.issuer ?? "-", row.notAfter.map(day) ?? "-", row.nextRenewal.map(day) ?? "-", row.lastError ?? "-",
            ])
        }
        let widths = (0..<header.count - 1).map { column in table.map { $0[column].count }.max() ?? 0 }
        return table.map { cells in
            cells.enumerated().map { index, cell in
                index < widths.count ? cell + String(repeating: " ", count: widths[index] - cell.count + 2) : cell
            }.joined()
        }.joined(separator: "\n") + "\n"
    }

    public static func json(_ rows: [CertificateRow], now: Int) -> String {
        let items: [JSONOutput] = rows.map { row in
            var members: [(String, JSONOutput)] = [("host", .string(row.host)), ("source", .string(row.source.rawValue))]
            if let issuer = row.issuer { members.append(("issuer", .string(issuer))) }
            if let notAfter = row.notAfter {
                members.append(("notAfter", .string(CivilTime(unixSeconds: notAfter).isoSecond + "Z")))
            }
            if let next = row.nextRenewal { members.append(("nextRenewal", .string(CivilTime(unixSeconds: next).isoSecond + "Z"))) }
            if let error = row.lastError { members.append(("lastError", .string(error))) }
            if let location = row.location { members.append(("file", .string(location))) }
            members.append(("valid", .bool(row.isValid(at: now))))
            return .object(members)
        }
        return JSONWriter.string(.object([("certificates", .array(items))]), pretty: true) + "\n"
    }

    static func day(_ seconds: Int) -> String {
        let time = CivilTime(unixSeconds: seconds)
        return time.isoDay + " " + String(time.isoTimeOfDay.prefix(5))
    }
}
