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
        let key = try newKey()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("X509_new") }
        defer { X509_free(certificate) }
        try fill(certificate, subject: commonName, issuerName: nil, publicKey: key, validFrom: -3600, validDays: 3650)
        try add(certificate, issuer: certificate, NID_basic_constraints, "critical,CA:TRUE")
        try add(certificate, issuer: certificate, NID_key_usage, "critical,keyCertSign,cRLSign")
        try add(certificate, issuer: certificate, NID_subject_key_identifier, "hash")
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        return PEMPair(certificate: try pem(certificate), key: try pem(key: key))
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
        let key = try newKey()
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw TLSError("X509_new") }
        defer { X509_free(certificate) }
        try fill(
            certificate,
            subject: hosts.first ?? "localhost",
            issuerName: X509_get_subject_name(caCertificate),
            publicKey: key,
            validFrom: validFromOffset,
            validDays: min(validDays, 825)
        )
        try add(certificate, issuer: caCertificate, NID_basic_constraints, "critical,CA:FALSE")
        try add(certificate, issuer: caCertificate, NID_key_usage, "critical,digitalSignature")
        try add(certificate, issuer: caCertificate, NID_ext_key_usage, "serverAuth")
        try add(certificate, issuer: caCertificate, NID_subject_alt_name, hosts.map { "DNS:\($0)" }.joined(separator: ","))
        try add(certificate, issuer: caCertificate, NID_authority_key_identifier, "keyid:always")
        guard X509_sign(certificate, caKey, EVP_sha256()) > 0 else { throw TLSError("X509_sign") }
        return PEMPair(certificate: try pem(certificate), key: try pem(key: key))
    }

    private static func newKey() throws(TLSError) -> OpaquePointer {
        guard let key = COpenSSL_EVP_EC_gen("P-256") else { throw TLSError("EVP_EC_gen") }
        return key
    }

    private static func fill(
        _ certificate: OpaquePointer,
        subject: String,
        issuerName: OpaquePointer?,
        publicKey: OpaquePointer,
        validFrom: Int,
        validDays: Int
    ) throws(TLSError) {
        X509_set_version(certificate, 2)
        var serial = [UInt8](repeating: 0, count: 16)
        _ = RAND_bytes(&serial, 16)
        serial[0] &= 0x7F  // positive
        if let bignum = BN_bin2bn(serial, 16, nil) {
            BN_to_ASN1_INTEGER(bignum, X509_get_serialNumber(certificate))
            BN_free(bignum)
        }
        X509_time_adj_ex(X509_getm_notBefore(certificate), 0, validFrom, nil)
        X509_time_adj_ex(X509_getm_notAfter(certificate), Int32(validDays), validFrom, nil)
        guard let name = X509_NAME_new() else { throw TLSError("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        _ = subject.withCString { value in
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), -1, -1, 0)
        }
        X509_set_subject_name(certificate, name)
        X509_set_issuer_name(certificate, issuerName ?? name)
        guard X509_set_pubkey(certificate, publicKey) == 1 else { throw TLSError("X509_set_pubkey") }
    }

    private static func add(_ certificate: OpaquePointer, issuer: OpaquePointer, _ nid: Int32, _ value: String) throws(TLSError) {
        var context = X509V3_CTX()
        COpenSSL_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw TLSError("X509V3_EXT_conf_nid(\(value))") }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw TLSError("X509_add_ext") }
    }

    private static func pem(_ certificate: OpaquePointer) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, certificate) == 1 else { throw TLSError("PEM_write_bio_X509") }
        return read(bio)
    }

    private static func pem(key: OpaquePointer) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { throw TLSError("PEM_write_bio_PrivateKey") }
        return read(bio)
    }

    private static func read(_ bio: OpaquePointer) -> [UInt8] {
        var pointer: UnsafeMutablePointer<CChar>?
        let length = COpenSSL_BIO_get_mem_data(bio, &pointer)
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}
