import AASA
import Support
import TLS

/// RFC 8555 §6.2 requests: flattened JWS JSON, the protected header carrying the nonce and URL, signed by
/// the account key (identified by its JWK before there is an account, by its URL after).
enum JWS {
    enum Signer {
        case jwk
        case keyID(String)
    }

    /// `payload` nil: POST-as-GET (an empty payload, RFC 8555 §6.3).
    static func signed(payload: JSONOutput?, url: String, nonce: String, key: SigningKey, signer: Signer) throws(TLSError) -> [UInt8] {
        var header: [(String, JSONOutput)] = [("alg", .string(key.algorithm))]
        switch signer {
        case .jwk: header.append(("jwk", jwk(key)))
        case .keyID(let url): header.append(("kid", .string(url)))
        }
        header += [("nonce", .string(nonce)), ("url", .string(url))]
        let protected = Base64URL.encode(JSONWriter.bytes(.object(header)))
        let encodedPayload = payload.map { Base64URL.encode(JSONWriter.bytes($0)) } ?? ""
        let signature = try key.sign(Array("\(protected).\(encodedPayload)".utf8))
        return JSONWriter.bytes(
            .object([
                ("protected", .string(protected)), ("payload", .string(encodedPayload)),
                ("signature", .string(Base64URL.encode(signature))),
            ])
        )
    }

    static func jwk(_ key: SigningKey) -> JSONOutput { .object(key.publicJWK.map { ($0.0, .string($0.1)) }) }

    /// External Account Binding (RFC 8555 §7.3.4): the account's JWK, signed with the CA's HMAC key.
    static func externalAccountBinding(accountKey: SigningKey, keyID: String, hmacKey: [UInt8], url: String) -> JSONOutput {
        let header: JSONOutput = .object([("alg", .string("HS256")), ("kid", .string(keyID)), ("url", .string(url))])
        let protected = Base64URL.encode(JSONWriter.bytes(header))
        let payload = Base64URL.encode(JSONWriter.bytes(jwk(accountKey)))
        let signature = Digest.hmacSHA256(key: hmacKey, Array("\(protected).\(payload)".utf8))
        return .object([
            ("protected", .string(protected)), ("payload", .string(payload)), ("signature", .string(Base64URL.encode(signature))),
        ])
    }

    /// RFC 8555 §8.1: what a challenge answer proves: the token and the account key's thumbprint.
    static func keyAuthorization(token: String, key: SigningKey) -> String { "\(token).\(key.thumbprint)" }
}
