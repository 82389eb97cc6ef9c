internal import COpenSSL
import Synchronization

/// While a load checks its certificates, the same PEM bytes are parsed once, not four times: the
/// certificate check, the names the host table needs, the TLS context and its summary each read the
/// chain, and OpenSSL 3 spends a few hundred microseconds on every certificate and key it decodes (its
/// decoder set-up), about 2–3 ms per certificate pair and load. Parses are shared only inside
/// ``during(_:)``; when the outermost one ends, what it kept is freed.
public enum PEMParseSharing {
    /// Parsed OpenSSL objects: reference-counted, and only read once parsed (every user holds its own
    /// reference), so handing them between threads is safe.
    private struct Kept: @unchecked Sendable {
        let pointers: [OpaquePointer]
    }
    private struct Shared: ~Copyable {
        var depth = 0
        var certificates: [[UInt8]: Kept] = [:]
        var keys: [[UInt8]: Kept] = [:]
    }
    private static let shared = Mutex(Shared())

    public static func during<Value>(_ body: () -> Value) -> Value {
        shared.withLock { $0.depth += 1 }
        defer {
            shared.withLock { shared in
                shared.depth -= 1
                guard shared.depth == 0 else { return }
                for chain in shared.certificates.values { for certificate in chain.pointers { X509_free(certificate) } }
                for key in shared.keys.values { for pointer in key.pointers { EVP_PKEY_free(pointer) } }
                shared.certificates = [:]
                shared.keys = [:]
            }
        }
        return body()
    }

    /// The chain `pem` holds, each certificate with a reference the caller frees.
    static func certificates(_ pem: [UInt8], parse: ([UInt8]) -> [OpaquePointer]) -> [OpaquePointer] {
        if let kept = shared.withLock({ shared -> Kept? in
            guard shared.depth > 0, let chain = shared.certificates[pem] else { return nil }
            for certificate in chain.pointers { X509_up_ref(certificate) }
            return chain
        }) {
            return kept.pointers
        }
        let chain = Kept(pointers: parse(pem))
        shared.withLock { shared in
            guard shared.depth > 0, shared.certificates[pem] == nil else { return }
            for certificate in chain.pointers { X509_up_ref(certificate) }
            shared.certificates[pem] = chain
        }
        return chain.pointers
    }

    /// The key `pem` holds, with a reference the caller frees.
    static func privateKey(_ pem: [UInt8], parse: ([UInt8]) -> OpaquePointer?) -> OpaquePointer? {
        if let kept = shared.withLock({ shared -> Kept? in
            guard shared.depth > 0, let key = shared.keys[pem] else { return nil }
            for pointer in key.pointers { EVP_PKEY_up_ref(pointer) }
            return key
        }) {
            return kept.pointers.first
        }
        guard let parsed = parse(pem) else { return nil }
        let key = Kept(pointers: [parsed])
        shared.withLock { shared in
            guard shared.depth > 0, shared.keys[pem] == nil else { return }
            EVP_PKEY_up_ref(parsed)
            shared.keys[pem] = key
        }
        return parsed
    }
}
