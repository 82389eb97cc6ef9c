import Synchronization
public import TLS

/// The certificate manager, as the TLS contexts see it: it exists only once the config is read (its
/// settings are in it), while the contexts are built while reading it. Until it is set, nothing.
public final class CertificateManagerSlot: ObtainedCertificates, Sendable {
    private let manager = Mutex<CertificateManager?>(nil)

    public init() {}

    public func set(_ manager: CertificateManager) { self.manager.withLock { $0 = manager } }

    public func certificate(forServerName serverName: String) -> ServerCertificate? {
        manager.withLock { $0 }?.certificate(forServerName: serverName)
    }

    public func lookup(forServerName serverName: String) -> CertificateLookup {
        manager.withLock { $0 }?.lookup(forServerName: serverName) ?? .none
    }

    public func challengeCertificate(forServerName serverName: String) -> ServerCertificate? {
        manager.withLock { $0 }?.challengeCertificate(forServerName: serverName)
    }

    public func knownExpiry(forServerName serverName: String) -> Int? {
        manager.withLock { $0 }?.knownExpiry(forServerName: serverName)
    }
}
