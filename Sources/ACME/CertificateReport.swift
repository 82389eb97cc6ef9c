public import AASA
import Posix
import Support
import TLS

/// One host's certificate as `aasa-server certificates` reports it.
public struct CertificateRow: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// A file of `server.certificates`.
        case file
        /// Obtained by ACME and stored.
        case acme
        /// ACME takes care of it, and has nothing stored yet.
        case pending
        /// Obtained on demand, when a handshake first asks for it: nobody has yet. Not a problem.
        case onDemand = "on demand, not requested"
        /// Something is stored, and it is not a certificate and key a server could use.
        case damaged
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

    /// A certificate a client accepts at `now` (as far as dates go).
    public func isValid(at now: Int) -> Bool { (source == .file || source == .acme) && (notAfter ?? 0) > now }

    /// What makes `certificates` exit 1: a host that should have a certificate now and has none that
    /// works. An on-demand name nobody asked for yet is as it should be.
    public func needsAttention(at now: Int) -> Bool { source != .onDemand && !isValid(at: now) }
}

/// The table and the JSON of `aasa-server certificates`: pure formatting of rows.
public enum CertificateReport {
    /// Every host of the config (and every host obtained on demand, from the storage), with where its
    /// certificate comes from: the certificate files, then the ACME storage.
    public static func rows(config: Config, sites: SiteList, configPath: String) -> [CertificateRow] {
        let settings = config.server
        // Each certificate file, read once.
        let files: [(entry: ServerSettings.CertificateEntry, path: String, summary: CertificateSummary?)] = settings.certificates.map {
            entry in
            let path = ConfigLoader.resolve(entry.certificate, relativeTo: configPath)
            let summary = (try? Posix.readFile(path, limit: Posix.ReadLimit.certificate)).flatMap(CertificateInspector.summary)
            return (entry, path, summary)
        }
        // A storage that cannot be opened (a password file that cannot be read) reads as an empty one: its
        // rows say the certificate is not there, and `serve` says why.
        let storage = settings.acme.flatMap { acme in
            (try? CertificateStorage.backend(acme, settings: settings, configPath: configPath, prepare: false)).map {
                CertificateStorage(backend: $0, directoryURL: acme.directory)
            }
        }
        var rows: [CertificateRow] = []
        var listed = Set<String>()
        let acme = settings.acme
        /// Names ACME orders only when a handshake asks: under on-demand issuance, every host the config
        /// does not ask a certificate for in advance (wildcards without a DNS hook included).
        func onlyOnDemand(_ host: String) -> Bool {
            guard let acme, acme.onDemand != nil else { return false }
            return host.hasPrefix("*.") ? acme.dnsHook == nil : !acme.configHosts
        }
        /// What is really in the storage: the certificate file is read and must hold a usable certificate
        /// and key; meta.json only adds the renewal time.
        func acmeRow(_ host: String, storage: CertificateStorage) -> CertificateRow {
            let failure = storage.readFailure(host)
            let location = storage.certificatePath(host)
            let holder = storage.lockHolder(host).map { "an order is in progress (storage lock held by \($0))" }
            guard case .success(let bytes) = storage.readCertificate(host) else {
                if onlyOnDemand(host) && failure == nil && holder == nil { return CertificateRow(host: host, source: .onDemand) }
                return CertificateRow(
                    host: host,
                    source: .pending,
                    nextRenewal: failure?.nextAttempt,
                    lastError: [failure?.message, holder].compactMap { $0 }.joined(separator: "; ").nonEmpty
                )
            }
            let usable = (try? ServerCertificate(chainPEM: bytes, keyPEM: bytes)) != nil
            guard usable, let summary = CertificateInspector.summary(bytes) else {
                return CertificateRow(
                    host: host,
                    source: .damaged,
                    nextRenewal: failure?.nextAttempt,
                    lastError: "\(location) holds no usable certificate and key; it is ordered again",
                    location: location
                )
            }
            let meta = storage.readMeta(host)
            return CertificateRow(
                host: host,
                source: .acme,
                issuer: summary.issuer,
                notAfter: summary.notAfter,
                nextRenewal: meta.map { max($0.renewAt, failure?.nextAttempt ?? 0) } ?? failure?.nextAttempt,
                lastError: [
                    failure?.message, holder,
                    meta == nil ? "meta.json is unreadable: the renewal time is worked out again at the next renewal" : nil,
                ].compactMap { $0 }.joined(separator: "; ").nonEmpty,
                location: location
            )
        }
        for loaded in sites {
            for pattern in loaded.site.hosts.patterns {
                let host = pattern.description
                guard listed.insert(host).inserted else { continue }
                if let file = files.first(where: { file in
                    file.entry.hosts.contains { CertificateInspector.name($0, covers: host) || $0 == host }
                        && (file.summary?.names.contains { CertificateInspector.name($0.lowercased(), covers: host) } ?? true)
                }) {
                    rows.append(
                        CertificateRow(
                            host: host,
                            source: .file,
                            issuer: file.summary?.issuer,
                            notAfter: file.summary?.notAfter,
                            lastError: file.summary == nil ? "cannot read \(file.path)" : nil,
                            location: file.path
                        )
                    )
                } else if let storage, settings.acme?.configHosts == true || settings.acme?.onDemand != nil {
                    rows.append(acmeRow(host, storage: storage))
                } else {
                    rows.append(CertificateRow(host: host, source: .none))
                }
            }
        }
        // Hosts obtained on demand: in the storage, not named in the config.
        if let storage {
            for host in storage.storedHosts() where listed.insert(host).inserted { rows.append(acmeRow(host, storage: storage)) }
        }
        return rows
    }

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

extension String {
    /// Nil for the empty string: an optional field that has nothing to say stays out.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
