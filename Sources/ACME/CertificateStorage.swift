import AASA
import HTTPClient
public import Posix
import Support

/// The storage directory: the account, every obtained certificate, the locks that keep replicas from
/// ordering the same certificate twice, and pending HTTP-01 answers any replica can serve. Every file is
/// written whole (temporary file + rename), private keys 0600. The layout:
///
///     accounts/<CA host>/account.pem, account.json
///     certificates/<CA>/<host>/certificate.pem   (chain, leaf first, then the key: one file, so a reader
///                                                 never sees a new certificate with an old key)
///     certificates/<CA>/<host>/meta.json         (not after, renewal time, renewal-information ID)
///     certificates/<CA>/<host>/error.json        (the last failure, for `aasa-server certificates`)
///     locks/hosts/<CA>/<host>.lock               (created exclusively; the holder touches it while working)
///     locks/account.lock
///     challenges/<token>                         (HTTP-01 key authorizations)
///
/// `<CA>` is the directory URL's host, port and path (`acme-v02.api.letsencrypt.org-directory`), as
/// certmagic does: switching from a staging CA to the real one never serves a staging certificate.
public struct CertificateStorage: Sendable {
    public let root: String
    /// The folder of this CA's certificates and locks.
    public let authority: String

    public init(root: String, directoryURL: String) {
        self.root = root
        authority = Self.authorityFolder(directoryURL)
    }

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

    /// A directory name for a host: a wildcard's `*` becomes `_wildcard_`.
    static func directoryName(_ host: String) -> String {
        host.hasPrefix("*.") ? "_wildcard_" + host.dropFirst(1) : host
    }

    /// The host a certificate directory is for.
    static func host(fromDirectory name: String) -> String {
        name.hasPrefix("_wildcard_.") ? "*" + name.dropFirst("_wildcard_".count) : name
    }

    var certificatesFolder: String { "\(root)/certificates/\(authority)" }
    func certificateDirectory(_ host: String) -> String { "\(certificatesFolder)/\(Self.directoryName(host))" }
    public func certificatePath(_ host: String) -> String { certificateDirectory(host) + "/certificate.pem" }
    func metaPath(_ host: String) -> String { certificateDirectory(host) + "/meta.json" }
    func errorPath(_ host: String) -> String { certificateDirectory(host) + "/error.json" }
    var challengesFolder: String { "\(root)/challenges" }
    func challengePath(_ token: String) -> String { "\(challengesFolder)/\(token)" }
    var alpnChallengesFolder: String { "\(root)/challenges-alpn" }
    func alpnChallengePath(_ domain: String) -> String { "\(alpnChallengesFolder)/\(Self.directoryName(domain))" }
    /// A host's lock, in a folder of its own: no host name can collide with the account's lock.
    func lockPath(_ host: String) -> String { "\(root)/locks/hosts/\(authority)/\(Self.directoryName(host)).lock" }
    var accountLockPath: String { "\(root)/locks/account.lock" }
    func accountDirectory(_ directoryURL: String) -> String {
        // One account per CA: its host and port name the directory (`acme-v02.api.letsencrypt.org`).
        let host = ClientURL(directoryURL)?.hostHeader ?? "unknown-ca"
        return "\(root)/accounts/\(host.replacingAll(":", with: "_"))"
    }

    /// Every host with a stored certificate.
    public func storedHosts() -> [String] {
        (Posix.directoryEntries(certificatesFolder) ?? []).filter { !$0.hasPrefix(".") }.map(Self.host(fromDirectory:)).sorted()
    }

    /// Certificates stored by versions before the CA had a folder (`certificates/<host>/`) are moved
    /// into this CA's: the config they were obtained under named this CA. Returns how many moved.
    func adoptLegacyCertificates() -> Int {
        let legacy = "\(root)/certificates"
        var moved = 0
        for entry in Posix.directoryEntries(legacy) ?? [] where !entry.hasPrefix(".") {
            let folder = "\(legacy)/\(entry)"
            let isHostFolder = ["certificate.pem", "meta.json", "error.json"].contains { Posix.fileExists("\(folder)/\($0)") }
            guard isHostFolder, !Posix.fileExists(certificateDirectory(Self.host(fromDirectory: entry))) else { continue }
            do {
                try Posix.makeDirectories(certificatesFolder, mode: 0o700)
                try Posix.renameFile(folder, to: "\(certificatesFolder)/\(entry)")
                moved += 1
            } catch {
                continue
            }
        }
        return moved
    }

    /// Removes what is stored for `host` (its certificate, meta and last error), then its folder.
    func remove(_ host: String) {
        for path in [certificatePath(host), metaPath(host), errorPath(host)] { Posix.removeFile(path) }
        _ = Posix.removeDirectory(certificateDirectory(host))
    }

    public func readCertificate(_ host: String) -> Result<[UInt8], FileError> {
        do {
            return .success(try Posix.readFile(certificatePath(host), limit: Posix.ReadLimit.certificate))
        } catch {
            return .failure(error)
        }
    }

    func storeCertificate(_ host: String, chainAndKey: [UInt8], meta: StoredMeta) throws(SystemError) {
        try Posix.makeDirectories(certificateDirectory(host), mode: 0o700)
        try Posix.writeFileAtomically(chainAndKey, to: certificatePath(host), mode: 0o600)
        try Posix.writeFileAtomically(meta.json, to: metaPath(host), mode: 0o644)
        Posix.removeFile(errorPath(host))
    }

    public func readMeta(_ host: String) -> StoredMeta? {
        guard let bytes = try? Posix.readFile(metaPath(host), limit: 64 * 1024) else { return nil }
        return StoredMeta(json: bytes)
    }

    func recordFailure(_ host: String, _ failure: StoredFailure) {
        try? Posix.makeDirectories(certificateDirectory(host), mode: 0o700)
        try? Posix.writeFileAtomically(failure.json, to: errorPath(host), mode: 0o644)
    }

    public func readFailure(_ host: String) -> StoredFailure? {
        guard let bytes = try? Posix.readFile(errorPath(host), limit: 64 * 1024) else { return nil }
        return StoredFailure(json: bytes)
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

    public init(notBefore: Int, notAfter: Int, renewAt: Int, renewalID: String?, issuer: String, obtainedAt: Int) {
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.renewAt = renewAt
        self.renewalID = renewalID
        self.issuer = issuer
        self.obtainedAt = obtainedAt
    }

    var json: [UInt8] {
        var members: [(String, JSONOutput)] = [
            ("notBefore", .int(notBefore)), ("notAfter", .int(notAfter)), ("renewAt", .int(renewAt)), ("issuer", .string(issuer)),
            ("obtainedAt", .int(obtainedAt)),
        ]
        if let renewalID { members.append(("renewalID", .string(renewalID))) }
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
