internal import COpenSSL
internal import Glibc
import Support

/// A private key that signs ACME requests (the account key) or a certificate request (a certificate's
/// key): ECDSA P-256 or RSA 2048, read from and written to PKCS#8 PEM, with its public half as a JWK.
public final class SigningKey: @unchecked Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case ecdsaP256 = "ecdsa-p256"
        case rsa2048 = "rsa-2048"
    }

    let key: OpaquePointer
    public let kind: Kind

    private init(key: OpaquePointer, kind: Kind) {
        self.key = key
        self.kind = kind
    }

    deinit { EVP_PKEY_free(key) }

    public static func generate(_ kind: Kind) throws(TLSError) -> SigningKey {
        switch kind {
        case .ecdsaP256:
            guard let key = COpenSSL_EVP_EC_gen("P-256") else { throw TLSError("EVP_EC_gen") }
            return SigningKey(key: key, kind: kind)
        case .rsa2048:
            guard let key = COpenSSL_EVP_RSA_gen(2048) else { throw TLSError("EVP_RSA_gen") }
            return SigningKey(key: key, kind: kind)
        }
    }

    /// Nil when the PEM holds no key, or one of another type or size.
    public init?(pem: [UInt8]) {
        guard let key = PEMMaterial.privateKey(pem) else {
            ERR_clear_error()
            return nil
        }
        if EVP_PKEY_is_a(key, "EC") == 1, EVP_PKEY_get_bits(key) == 256 {
            kind = .ecdsaP256
        } else if EVP_PKEY_is_a(key, "RSA") == 1, EVP_PKEY_get_bits(key) >= 2048 {
            kind = .rsa2048
        } else {
            EVP_PKEY_free(key)
            return nil
        }
        self.key = key
    }

    public func pem() throws(TLSError) -> [UInt8] { try X509Building.pem(key: key) }

    /// The JWS "alg" this key signs with.
    public var algorithm: String { kind == .ecdsaP256 ? "ES256" : "RS256" }

    /// The public key as JWK members in lexicographic order, which is also the order RFC 7638's thumbprint
    /// hashes them in.
    public var publicJWK: [(String, String)] {
        switch kind {
        case .ecdsaP256:
            return [
                ("crv", "P-256"), ("kty", "EC"), ("x", Base64URL.encode(parameter("qx", width: 32))),
                ("y", Base64URL.encode(parameter("qy", width: 32))),
            ]
        case .rsa2048:
            return [("e", Base64URL.encode(parameter("e", width: 0))), ("kty", "RSA"), ("n", Base64URL.encode(parameter("n", width: 0)))]
        }
    }

    /// RFC 7638: SHA-256 of the JWK's required members, no spaces, base64url.
    public var thumbprint: String {
        let json = "{" + publicJWK.map { "\"\($0.0)\":\"\($0.1)\"" }.joined(separator: ",") + "}"
        return Base64URL.encode(Digest.sha256(Array(json.utf8)))
    }

    /// A JWS signature over `input`: for ES256 the raw 64-byte R‖S (RFC 7518 §3.4), not the DER OpenSSL gives.
    public func sign(_ input: [UInt8]) throws(TLSError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw TLSError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw TLSError("EVP_DigestSignInit") }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, input, input.count) == 1 else { throw TLSError("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, input, input.count) == 1 else { throw TLSError("EVP_DigestSign") }
        signature.removeSubrange(length...)
        guard kind == .ecdsaP256 else { return signature }
        return try Self.rawECDSA(der: signature)
    }

    /// Whether `signature` (JWS form, as ``sign(_:)`` makes it) is this key's over `input`.
    public func verify(_ signature: [UInt8], over input: [UInt8]) -> Bool {
        var der = signature
        if kind == .ecdsaP256 {
            guard signature.count == 64, let converted = Self.derECDSA(raw: signature) else { return false }
            der = converted
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let verified = EVP_DigestVerify(context, der, der.count, input, input.count) == 1
        ERR_clear_error()
        return verified
    }

    static func derECDSA(raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let r = BN_bin2bn(raw, 32, nil), let s = BN_bin2bn(Array(raw[32...]), 32, nil) else { return nil }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else { return nil }
        defer { CRYPTO_free(output, nil, 0) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    static func rawECDSA(der: [UInt8]) throws(TLSError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw TLSError("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(parsed) }
        var output = [UInt8](repeating: 0, count: 64)
        guard let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed) else { throw TLSError("ECDSA_SIG_get0") }
        output.withUnsafeMutableBufferPointer { buffer in
            _ = BN_bn2binpad(r, buffer.baseAddress, 32)
            _ = BN_bn2binpad(s, buffer.baseAddress! + 32, 32)
        }
        return output
    }

    /// A big-number parameter of the key, big-endian, left-padded to `width` bytes (0: as short as it is).
    private func parameter(_ name: String, width: Int) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return [] }
        defer { BN_free(number) }
        let size = width > 0 ? width : Int((BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: size)
        _ = BN_bn2binpad(number, &bytes, Int32(size))
        return bytes
    }
}

/// SHA-256 and HMAC-SHA256, for JWK thumbprints, key authorizations and External Account Binding.
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        _ = SHA256(bytes, bytes.count, &output)
        return output
    }

    public static func hmacSHA256(key: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        _ = HMAC(EVP_sha256(), key, Int32(key.count), bytes, bytes.count, &output, &length)
        return output
    }
}
