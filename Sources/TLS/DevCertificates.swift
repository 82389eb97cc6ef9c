internal import COpenSSL
internal import Glibc

/// A local certificate authority and a leaf for development hosts (`aasa-server dev`, `dev-cert`, tests).
///
/// ECDSA P-256 everywhere; the leaf carries the hosts as subjectAltNames, the serverAuth extended key
/// usage and at most 825 days of validity — what Apple requires of certificates it trusts.
public enum DevCertificates {
    public struct PEMPair: Sendable {
        public var certificate: [UInt8]
        public var key: [UInt8]

        public init(certificate: [UInt8], key: [UInt8]) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// A new CA (10 years; the CA itself is not bound by the 825-day rule).
    /// The common name of the CA `dev` and `dev-cert` create: certificates it issued are for developer
    /// mode only, which the server's load-time checks point out.
    public static let authorityName = "aasa-server development CA"

    public static func makeAuthority(commonName: String = authorityName) throws(TLSError) -> PEMPair {
        let key = try X509Building.newKey()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("X509_new") }
        defer { X509_free(certificate) }
        try X509Building.fill(certificate, subject: commonName, issuerName: nil, publicKey: key, validFrom: -3600, validDays: 3650)
        try X509Building.add(certificate, issuer: certificate, NID_basic_constraints, "critical,CA:TRUE")
        try X509Building.add(certificate, issuer: certificate, NID_key_usage, "critical,keyCertSign,cRLSign")
        try X509Building.add(certificate, issuer: certificate, NID_subject_key_identifier, "hash")
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        return PEMPair(certificate: try X509Building.pem(certificate), key: try X509Building.pem(key: key))
    }

    /// A leaf for `hosts`, signed by `authority`. `validFromOffset` (seconds, relative to now) and
    /// `validDays` let tests make expired or short-lived certificates.
    public static func makeLeaf(
        hosts: [String],
        authority: PEMPair,
        validFromOffset: Int = -3600,
        validDays: Int = 825
    ) throws(TLSError) -> PEMPair {
        guard let caCertificate = PEMMaterial.certificates(authority.certificate).first else {
            throw TLSError(call: "CA certificate", details: ["unreadable"])
        }
        defer { X509_free(caCertificate) }
        guard let caKey = PEMMaterial.privateKey(authority.key) else { throw TLSError("CA key") }
        defer { EVP_PKEY_free(caKey) }
        let key = try X509Building.newKey()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("X509_new") }
        defer { X509_free(certificate) }
        try X509Building.fill(
            certificate,
            subject: hosts.first ?? "localhost",
            issuerName: X509_get_subject_name(caCertificate),
            publicKey: key,
            validFrom: validFromOffset,
            validDays: min(validDays, 825)
        )
        try X509Building.add(certificate, issuer: caCertificate, NID_basic_constraints, "critical,CA:FALSE")
        try X509Building.add(certificate, issuer: caCertificate, NID_key_usage, "critical,digitalSignature")
        try X509Building.add(certificate, issuer: caCertificate, NID_ext_key_usage, "serverAuth")
        try X509Building.add(certificate, issuer: caCertificate, NID_subject_alt_name, hosts.map { "DNS:\($0)" }.joined(separator: ","))
        try X509Building.add(certificate, issuer: caCertificate, NID_authority_key_identifier, "keyid:always")
        guard X509_sign(certificate, caKey, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        return PEMPair(certificate: try X509Building.pem(certificate), key: try X509Building.pem(key: key))
    }
}
