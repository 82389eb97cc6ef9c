internal import COpenSSL
internal import Glibc

/// Building and writing X.509 certificates: the steps `dev`'s CA, ACME's TLS-ALPN-01 answers and tests share.
enum X509Building {
    static func newKey() throws(TLSError) -> OpaquePointer {
        guard let key = COpenSSL_EVP_EC_gen("P-256") else { throw TLSError("EVP_EC_gen") }
        return key
    }

    static func fill(
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

    static func add(_ certificate: OpaquePointer, issuer: OpaquePointer, _ nid: Int32, _ value: String) throws(TLSError) {
        var context = X509V3_CTX()
        COpenSSL_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw TLSError("X509V3_EXT_conf_nid(\(value))") }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw TLSError("X509_add_ext") }
    }

    static func pem(_ certificate: OpaquePointer) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_X509(bio, certificate) == 1 else { throw TLSError("PEM_write_bio_X509") }
        return read(bio)
    }

    static func pem(key: OpaquePointer) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else { throw TLSError("PEM_write_bio_PrivateKey") }
        return read(bio)
    }

    static func read(_ bio: OpaquePointer) -> [UInt8] {
        var pointer: UnsafeMutablePointer<CChar>?
        let length = COpenSSL_BIO_get_mem_data(bio, &pointer)
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}
