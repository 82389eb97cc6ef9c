import Foundation
import TLS

@testable import AASA
@testable import ACME

/// A certificate manager on in-memory storage whose CA cannot be reached (nothing listens on port 9 of
/// loopback): what it serves comes from the storage, and an order fails as soon as it starts.
enum ManagerWithoutCA {
    static func settings() -> ACMESettings {
        var settings = ACMESettings()
        settings.directory = "https://127.0.0.1:9/directory"
        settings.agreeToTerms = true
        return settings
    }

    static func make(
        _ settings: ACMESettings,
        _ storage: InMemoryStorage,
        cacheCapacity: Int = 1_000,
        log: @escaping @Sendable (CertificateManager.Level, String) -> Void = { _, _ in }
    ) throws -> CertificateManager {
        try CertificateManager(
            settings: settings,
            storage: storage,
            trustFile: nil,
            hmacKeyFile: nil,
            listeners: .init(plain: false, tls: true),
            userAgent: "aasa-server tests",
            cacheCapacity: cacheCapacity,
            log: log
        )
    }

    /// Stores a certificate for `host` from `authority`, valid an hour past `now`, renewed at `renewAt`.
    static func store(
        _ host: String,
        _ storage: InMemoryStorage,
        _ settings: ACMESettings,
        authority: DevCertificates.PEMPair,
        now: Int,
        renewAt: Int,
        notAfter: Int? = nil
    ) throws {
        let leaf = try DevCertificates.makeLeaf(hosts: [host], authority: authority)
        let meta = StoredMeta(
            notBefore: now - 60,
            notAfter: notAfter ?? now + 3_600,
            renewAt: renewAt,
            renewalID: nil,
            issuer: "test CA",
            obtainedAt: now
        )
        try CertificateStorage(backend: storage, directoryURL: settings.directory).storeCertificate(
            host,
            chainAndKey: leaf.certificate + leaf.key,
            meta: meta
        )
    }
}
