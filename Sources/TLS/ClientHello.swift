internal import COpenSSL

/// What the client hello callback reads before SNI is processed: the server name and the ALPN list, from
/// the raw extensions (RFC 6066 §3, RFC 7301 §3.1).
struct ClientHello {
    var serverName: String?
    var protocols: [[UInt8]] = []

    init(protocols: [[UInt8]], serverName: String? = nil) {
        self.protocols = protocols
        self.serverName = serverName
    }

    init(_ ssl: OpaquePointer) {
        var data: UnsafePointer<UInt8>?
        var length = 0
        if SSL_client_hello_get0_ext(ssl, UInt32(TLSEXT_TYPE_application_layer_protocol_negotiation), &data, &length) == 1, let data {
            protocols = Self.alpn(UnsafeBufferPointer(start: data, count: length))
        }
        // The name picks a TLS-ALPN-01 answer, or the obtained certificate a handshake may wait for.
        if SSL_client_hello_get0_ext(ssl, UInt32(TLSEXT_TYPE_server_name), &data, &length) == 1, let data {
            serverName = Self.hostName(UnsafeBufferPointer(start: data, count: length))
        }
    }

    /// RFC 8737 §3: a validation offers exactly `acme-tls/1`.
    var offersOnlyACMETLS: Bool { protocols == [TLSContext.acmeTLS1] }

    static func alpn(_ bytes: UnsafeBufferPointer<UInt8>) -> [[UInt8]] {
        guard bytes.count >= 2 else { return [] }
        let total = Int(bytes[0]) << 8 | Int(bytes[1])
        guard total + 2 <= bytes.count else { return [] }
        var result: [[UInt8]] = []
        var index = 2
        while index < 2 + total {
            let length = Int(bytes[index])
            guard index + 1 + length <= 2 + total else { return [] }
            result.append(Array(bytes[(index + 1)..<(index + 1 + length)]))
            index += 1 + length
        }
        return result
    }

    /// The first host_name entry, lowercased.
    static func hostName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count >= 5 else { return nil }
        let total = Int(bytes[0]) << 8 | Int(bytes[1])
        guard total + 2 <= bytes.count else { return nil }
        var index = 2
        while index + 3 <= 2 + total {
            let type = bytes[index]
            let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 3 + length <= 2 + total else { return nil }
            if type == 0 {
                return String(decoding: bytes[(index + 3)..<(index + 3 + length)], as: UTF8.self).lowercased()
            }
            index += 3 + length
        }
        return nil
    }
}
