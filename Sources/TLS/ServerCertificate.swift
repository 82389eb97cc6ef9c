internal import COpenSSL
internal import Glibc

/// A certificate and its key, ready for handshakes: what a certificate obtained after start-up (ACME)
/// becomes once, and then serves every handshake that names one of its hosts.
public final class ServerCertificate: @unchecked Sendable {
    let context: TLSContext
    /// The leaf's expiry (Unix seconds).
    public let notAfter: Int

    public init(chainPEM: [UInt8], keyPEM: [UInt8]) throws(TLSError) {
        context = try TLSContext(chainPEM: chainPEM, keyPEM: keyPEM, hosts: [])
        notAfter = CertificateInspector.summary(chainPEM)?.notAfter ?? 0
    }

    private init(challenge: TLSContext) {
        context = challenge
        notAfter = 0
    }

    /// The TLS-ALPN-01 answer for `domain` (RFC 8737 §3): a self-signed certificate naming only the domain,
    /// with the critical acmeIdentifier extension holding SHA-256 of the key authorization, offered only
    /// to a client asking for ALPN `acme-tls/1`.
    public static func alpnChallenge(domain: String, keyAuthorization: String) throws(TLSError) -> ServerCertificate {
        guard let key = COpenSSL_EVP_EC_gen("P-256") else { throw TLSError("EVP_EC_gen") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("X509_new") }
        defer { X509_free(certificate) }
        try X509Building.fill(certificate, subject: domain, issuerName: nil, publicKey: key, validFrom: -3600, validDays: 7)
        try X509Building.add(certificate, issuer: certificate, NID_subject_alt_name, "DNS:\(domain)")
        // The value is the DER of an OCTET STRING of 32 bytes: tag 0x04, length 0x20, the digest.
        let digest = Digest.sha256(Array(keyAuthorization.utf8))
        let hex = ([0x04, 0x20] + digest).map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
        }.joined(separator: ":")
        guard let identifier = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1) else { throw TLSError("OBJ_txt2obj") }
        defer { ASN1_OBJECT_free(identifier) }
        guard let octets = ASN1_OCTET_STRING_new() else { throw TLSError("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        let encoded = [UInt8(0x04), 0x20] + digest
        _ = ASN1_OCTET_STRING_set(octets, encoded, Int32(encoded.count))
        guard let extensionValue = X509_EXTENSION_create_by_OBJ(nil, identifier, 1, octets) else {
            throw TLSError("X509_EXTENSION_create_by_OBJ (\(hex))")
        }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw TLSError("X509_add_ext") }
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        let context = try TLSContext(
            chainPEM: try X509Building.pem(certificate),
            keyPEM: try X509Building.pem(key: key),
            hosts: [domain],
            alpn: TLSContext.acmeTLS1
        )
        return ServerCertificate(challenge: context)
    }
}

/// What a handshake finds for a name among the certificates a server obtains.
public enum CertificateLookup: Sendable, Equatable {
    /// In memory: the handshake goes on.
    case ready
    /// Being read from the storage or ordered: the handshake may wait for it.
    case pending
    /// None, and none coming: the handshake goes on without.
    case none
}

/// Certificates a server gets after it has started (ACME): asked during a handshake, for a name the
/// config's certificate files do not cover. Called on an event loop's thread: must not block for long.
public protocol ObtainedCertificates: AnyObject, Sendable {
    /// The certificate for `serverName` (lowercased) from memory, or nil when there is none (yet).
    func certificate(forServerName serverName: String) -> ServerCertificate?
    /// Whether a handshake for `serverName` (lowercased) should wait: a certificate is being read from the
    /// storage or ordered for it. Never blocks; starts the reading or the order when there is none yet.
    func lookup(forServerName serverName: String) -> CertificateLookup
    /// The TLS-ALPN-01 answer for `serverName` while a validation of it is waiting.
    func challengeCertificate(forServerName serverName: String) -> ServerCertificate?
    /// The expiry of what is known for `serverName` (Unix seconds), from memory alone: for pages that
    /// show certificates, which must never read storage or start an order.
    func knownExpiry(forServerName serverName: String) -> Int?
}
