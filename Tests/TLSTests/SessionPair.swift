import Glibc
import Posix
import TLS
import TestSupport
import Testing

/// A server session and a client session of this TLS module talking over a non-blocking socket pair, in
/// one thread: each side is stepped by hand, so a test sees every call's outcome.
final class SessionPair {
    let server: TLSSession
    let client: TLSSession
    private let contexts: TLSContexts
    private let clientContext: TLSClientContext
    private let descriptors: [Int32]

    init() throws {
        let pki = try TestPKI()
        contexts = try TLSContexts(
            [.init(hosts: ["example.com"], chainPEM: pki.shop.certificate, keyPEM: pki.shop.key, label: "shop")],
            select: { _ in 0 }
        )
        clientContext = try TLSClientContext()
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else {
            throw POSIXFailure("socketpair")
        }
        descriptors = pair
        server = try #require(contexts.session(fd: pair[0]))
        client = try #require(clientContext.session(fd: pair[1], serverName: "example.com"))
    }

    deinit {
        close(descriptors[0])
        close(descriptors[1])
    }

    struct POSIXFailure: Error {
        let call: String
        init(_ call: String) { self.call = call }
    }

    /// Steps both handshakes until both are done; `beforeServerStep` runs before each of the server's steps.
    func handshake(beforeServerStep: () -> Void = {}) -> Bool {
        var serverDone = false
        var clientDone = false
        for _ in 0..<20 where !(serverDone && clientDone) {
            if !clientDone {
                switch client.handshake() {
                case .done: clientDone = true
                case .wouldBlock: break
                case let other:
                    Issue.record("client handshake: \(other)")
                    return false
                }
            }
            if !serverDone {
                beforeServerStep()
                switch server.handshake() {
                case .done: serverDone = true
                case .wouldBlock: break
                case let other:
                    Issue.record("server handshake: \(other)")
                    return false
                }
            }
        }
        return serverDone && clientDone
    }

    /// One request from the client, read by the server, and its answer, read by the client: true when
    /// both arrive whole.
    func exchange(_ request: [UInt8], _ answer: [UInt8]) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard request.withUnsafeBytes({ client.write($0) }) == .bytes(request.count),
            buffer.withUnsafeMutableBytes({ server.read(into: $0) }) == .bytes(request.count),
            Array(buffer.prefix(request.count)) == request,
            answer.withUnsafeBytes({ server.write($0) }) == .bytes(answer.count),
            buffer.withUnsafeMutableBytes({ client.read(into: $0) }) == .bytes(answer.count)
        else { return false }
        return Array(buffer.prefix(answer.count)) == answer
    }
}
