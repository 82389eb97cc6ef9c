public import AASA
import Database
import HTTPClient
import Posix
import Support

/// What the certificate code keeps in a `Storage`, and where: the account, every obtained certificate,
/// the locks that keep replicas from ordering the same certificate twice, and pending challenge answers
/// any replica can serve. The keys:
///
///     accounts/<CA host>/account.pem, account.json
///     certificates/<CA>/<host>/certificate.pem   (chain, leaf first, then the key: one value, so a reader
///                                                 never sees a new certificate with an old key)
///     certificates/<CA>/<host>/meta.json         (not after, renewal time, renewal-information ID)
///     certificates/<CA>/<host>/error.json        (the last failure, for `aasa-server certificates`)
///     certificates/<CA>/<host>/order.json        (an order not finished yet: its URL and the key, 0600)
///     challenges/<token>                         (HTTP-01 key authorizations)
///     challenges-alpn/<host>                     (TLS-ALPN-01 key authorizations)
///
/// and the locks `hosts/<CA>/<host>` and `account`. `<CA>` is the directory URL's host, port and path
/// (`acme-v02.api.letsencrypt.org-directory`), as certmagic does: switching from a staging CA to the real
/// one never serves a staging certificate.
public struct CertificateStorage: Sendable {
    public let backend: any Storage
    /// The folder of this CA's certificates and locks.
    public let authority: String

    public init(backend: any Storage, directoryURL: String) {
        self.backend = backend
        authority = Self.authorityFolder(directoryURL)
    }

    /// The storage as a directory.
    public init(root: String, directoryURL: String) { self.init(backend: FileStorage(root: root), directoryURL: directoryURL) }

    /// Where it is, for messages.
    public var location: String { backend.location }

    /// `https://acme-v02.api.letsencrypt.org/directory` → `acme-v02.api.letsencrypt.org-directory`.
    static func authorityFolder(_ directoryURL: String) -> String {
        var text = Substring(directoryURL)
        if let scheme = text.firstRange(of: "://") { text = text[scheme.upperBound...] }
        var folder = ""
        for character in text.lowercased() {
            if character.isASCII && (character.isLetter || character.isNumber || character == "." || character == "-") {
                folder.append(character)
            } else if !folder.hasSuffix("-") {
                folder.append("-")
            }
        }
        while folder.hasSuffix("-") { folder.removeLast() }
        return folder.isEmpty ? "unknown-ca" : folder
    }

    /// A folder name for a host: a wildcard's `*` becomes `_wildcard_`.
    static func directoryName(_ host: String) -> String {
        host.hasPrefix("*.") ? "_wildcard_" + host.dropFirst(1) : host
    }

    /// The host a certificate folder is for.
    static func host(fromDirectory name: String) -> String {
        name.hasPrefix("_wildcard_.") ? "*" + name.dropFirst("_wildcard_".count) : name
    }

    var certificatesFolder: String { "certificates/\(authority)" }
    func certificateFolder(_ host: String) -> String { "\(certificatesFolder)/\(Self.directoryName(host))" }
    func certificateKey(_ host: String) -> String { certificateFolder(host) + "/certificate.pem" }
    func metaKey(_ host: String) -> String { certificateFolder(host) + "/meta.json" }
    func errorKey(_ host: String) -> String { certificateFolder(host) + "/error.json" }
    func orderKey(_ host: String) -> String { certificateFolder(host) + "/order.json" }
    /// Where a host's certificate is, as a user finds it.
    public func certificatePath(_ host: String) -> String { backend.describe(certificateKey(host)) }
    static let challengesFolder = "challenges"
    static func challengeKey(_ token: String) -> String { "\(challengesFolder)/\(token)" }
    static let alpnChallengesFolder = "challenges-alpn"
    static func alpnChallengeKey(_ domain: String) -> String { "\(alpnChallengesFolder)/\(directoryName(domain))" }
    /// A host's lock, in a folder of its own: no host name can collide with the account's lock.
    func lockName(_ host: String) -> String { "hosts/\(authority)/\(Self.directoryName(host))" }
    static let accountLockName = "account"
    func accountFolder(_ directoryURL: String) -> String {
        // One account per CA: its host and port name the folder (`acme-v02.api.letsencrypt.org`).
        let host = ClientURL(directoryURL)?.hostHeader ?? "unknown-ca"
        return "accounts/\(host.replacingAll(":", with: "_"))"
    }

    /// Every host with a stored certificate.
    public func storedHosts() -> [String] {
        backend.list(certificatesFolder).map(Self.host(fromDirectory:)).sorted()
    }

    static let hostFiles = ["certificate.pem", "meta.json", "error.json", "order.json"]

    /// Certificates stored by versions before the CA had a folder (`certificates/<host>/`) are moved
    /// into this CA's: the config they were obtained under named this CA. Returns how many moved. The
    /// certificate is copied last and the old folder removed after: an interrupted move is done again.
    func adoptLegacyCertificates() -> Int {
        var moved = 0
        for entry in backend.list("certificates") {
            let old = "certificates/\(entry)"
            let isHostFolder = Self.hostFiles.contains { backend.exists("\(old)/\($0)") }
            let host = Self.host(fromDirectory: entry)
            guard isHostFolder, !backend.exists(certificateKey(host)) else { continue }
            var copied = true
            for file in Self.hostFiles.reversed() {
                guard let bytes = try? backend.load("\(old)/\(file)", limit: Posix.ReadLimit.certificate) else { continue }
                if (try? backend.store(
                    "\(certificateFolder(host))/\(file)",
                    bytes,
                    secret: file.hasPrefix("certificate") || file.hasPrefix("order")
                )) == nil {
                    copied = false
                }
            }
            guard copied else { continue }
            for file in Self.hostFiles { backend.delete("\(old)/\(file)") }
            backend.delete(old)
            moved += 1
        }
        return moved
    }

    /// Removes what is stored for `host` (its certificate, meta and last error), then its folder.
    func remove(_ host: String) {
        for key in [certificateKey(host), metaKey(host), errorKey(host), orderKey(host)] { backend.delete(key) }
        backend.delete(certificateFolder(host))
    }

    public func readCertificate(_ host: String) -> Result<[UInt8], StorageError> {
        do {
            return .success(try backend.load(certificateKey(host), limit: Posix.ReadLimit.certificate))
        } catch {
            return .failure(error)
        }
    }

    func hasCertificate(_ host: String) -> Bool { backend.exists(certificateKey(host)) }

    func certificateStamp(_ host: String) -> String? { backend.stamp(certificateKey(host)) }

    func storeCertificate(_ host: String, chainAndKey: [UInt8], meta: StoredMeta) throws(StorageError) {
        try backend.store(certificateKey(host), chainAndKey, secret: true)
        try backend.store(metaKey(host), meta.json, secret: false)
        backend.delete(errorKey(host))
        backend.delete(orderKey(host))
    }

    /// An order placed and not finished: resumed by the next attempt, whichever replica makes it.
    func storeOrder(_ host: String, _ order: StoredOrder) throws(StorageError) {
        try backend.store(orderKey(host), order.json, secret: true)
    }

    func readOrder(_ host: String) -> StoredOrder? {
        guard let bytes = try? backend.load(orderKey(host), limit: 64 * 1024) else { return nil }
        return StoredOrder(json: bytes)
    }

    func storeMeta(_ host: String, _ meta: StoredMeta) throws(StorageError) {
        try backend.store(metaKey(host), meta.json, secret: false)
    }

    public func readMeta(_ host: String) -> StoredMeta? {
        guard let bytes = try? backend.load(metaKey(host), limit: 64 * 1024) else { return nil }
        return StoredMeta(json: bytes)
    }

    func recordFailure(_ host: String, _ failure: StoredFailure) {
        try? backend.store(errorKey(host), failure.json, secret: false)
    }

    public func readFailure(_ host: String) -> StoredFailure? {
        guard let bytes = try? backend.load(errorKey(host), limit: 64 * 1024) else { return nil }
        return StoredFailure(json: bytes)
    }

    func lock(_ host: String, owner: String, timeoutSeconds: Int) -> StorageLockOutcome {
        backend.lock(lockName(host), owner: owner, timeoutSeconds: timeoutSeconds)
    }

    /// Who holds `host`'s lock (an order in progress somewhere), as the holder wrote it.
    public func lockHolder(_ host: String) -> String? { backend.lockHolder(lockName(host))?.trimmingWhitespace() }
}

/// An order placed with the CA and not finished, with the key its certificate request is made from: an
/// attempt after a restart, a timeout or a replica's death continues it instead of placing another.
struct StoredOrder: Sendable, Equatable {
    var url: String
    var keyPEM: [UInt8]
    /// Unix seconds.
    var placedAt: Int

    var json: [UInt8] {
        JSONWriter.bytes(
            .object([("url", .string(url)), ("key", .string(String(decoding: keyPEM, as: UTF8.self))), ("placedAt", .int(placedAt))]),
            pretty: true
        )
    }

    init(url: String, keyPEM: [UInt8], placedAt: Int) {
        self.url = url
        self.keyPEM = keyPEM
        self.placedAt = placedAt
    }

    init?(json bytes: [UInt8]) {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root, let url = root["url"]?.stringValue,
            let key = root["key"]?.stringValue
        else { return nil }
        self.url = url
        keyPEM = Array(key.utf8)
        if case .number(let text)? = root["placedAt"]?.value { placedAt = Int(text) ?? 0 } else { placedAt = 0 }
    }
}

/// What is known about a stored certificate besides its bytes.
public struct StoredMeta: Sendable, Equatable {
    public var notBefore: Int
    public var notAfter: Int
    /// When to renew (Unix seconds): inside the CA's renewal window, or two thirds into the lifetime.
    public var renewAt: Int
    /// RFC 9773's certificate identifier (`AKI.serial`, base64url), for renewal information.
    public var renewalID: String?
    public var issuer: String
    public var obtainedAt: Int
    /// When to ask the CA for renewal information again (Unix seconds); nil when it offers none.
    public var renewalInfoAt: Int?

    public init(
        notBefore: Int,
        notAfter: Int,
        renewAt: Int,
        renewalID: String?,
        issuer: String,
        obtainedAt: Int,
        renewalInfoAt: Int? = nil
    ) {
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.renewAt = renewAt
        self.renewalID = renewalID
        self.issuer = issuer
        self.obtainedAt = obtainedAt
        self.renewalInfoAt = renewalInfoAt
    }

    var json: [UInt8] {
        var members: [(String, JSONOutput)] = [
            ("notBefore", .int(notBefore)), ("notAfter", .int(notAfter)), ("renewAt", .int(renewAt)), ("issuer", .string(issuer)),
            ("obtainedAt", .int(obtainedAt)),
        ]
        if let renewalID { members.append(("renewalID", .string(renewalID))) }
        if let renewalInfoAt { members.append(("renewalInfoAt", .int(renewalInfoAt))) }
        return JSONWriter.bytes(.object(members), pretty: true)
    }

    init?(json bytes: [UInt8]) {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root,
            case .number(let notBefore)? = root["notBefore"]?.value, case .number(let notAfter)? = root["notAfter"]?.value,
            case .number(let renewAt)? = root["renewAt"]?.value, let before = Int(notBefore), let after = Int(notAfter),
            let renew = Int(renewAt)
        else { return nil }
        self.notBefore = before
        self.notAfter = after
        self.renewAt = renew
        renewalID = root["renewalID"]?.stringValue
        issuer = root["issuer"]?.stringValue ?? ""
        if case .number(let text)? = root["obtainedAt"]?.value { obtainedAt = Int(text) ?? 0 } else { obtainedAt = 0 }
        if case .number(let text)? = root["renewalInfoAt"]?.value { renewalInfoAt = Int(text) }
    }
}

/// The last failed attempt for a host, kept in storage so every replica and the CLI can say why.
public struct StoredFailure: Sendable, Equatable {
    public var time: Int
    public var message: String
    /// No new attempt before this time (Unix seconds).
    public var nextAttempt: Int

    var json: [UInt8] {
        JSONWriter.bytes(.object([("time", .int(time)), ("message", .string(message)), ("nextAttempt", .int(nextAttempt))]), pretty: true)
    }

    init(time: Int, message: String, nextAttempt: Int) {
        self.time = time
        self.message = message
        self.nextAttempt = nextAttempt
    }

    init?(json bytes: [UInt8]) {
        guard let root = JSONParser.parse(bytes, duplicateKeys: .warning).root, case .number(let time)? = root["time"]?.value,
            let message = root["message"]?.stringValue
        else { return nil }
        self.time = Int(time) ?? 0
        self.message = message
        if case .number(let next)? = root["nextAttempt"]?.value { nextAttempt = Int(next) ?? 0 } else { nextAttempt = 0 }
    }
}

extension CertificateStorage {
    /// The storage a config names: the directory `acme.storage` (made, 0700, when `prepare`), or, when it
    /// names none and `server.linkStore.postgres` is set, that database.
    public static func backend(
        _ acme: ACMESettings,
        settings: ServerSettings,
        configPath: String,
        prepare: Bool
    ) throws(StorageError) -> any Storage {
        if acme.storage.isEmpty, let connection = settings.linkStorePostgres {
            do {
                let passwordFile = settings.linkStorePasswordFile.map { ConfigLoader.resolve($0, relativeTo: configPath) }
                let login = try PostgresLogin.reading(connection: connection, passwordFile: passwordFile)
                return PostgresStorage(login: login, lockStaleAfter: acme.lockStaleAfter)
            } catch {
                throw .failed(error.message)
            }
        }
        let root = ConfigLoader.resolve(acme.storage, relativeTo: configPath)
        guard prepare else { return FileStorage(root: root, lockStaleAfter: acme.lockStaleAfter) }
        return try FileStorage.prepared(root: root, lockStaleAfter: acme.lockStaleAfter)
    }
}
