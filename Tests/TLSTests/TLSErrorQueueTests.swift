import COpenSSL
import Posix
import TLS
import Testing

/// A session's calls classify a failure by SSL_get_error, which takes any error queued on the thread as the
/// call's own: one left there by an unrelated call (a PEM parse that ended on "no start line", a failed
/// signature) must not turn a read that would block into a broken connection.
@Suite("TLS sessions and OpenSSL's error queue")
struct TLSErrorQueueTests {
    /// Queues the error a PEM parse leaves when the input holds no PEM, as other code on a loop's thread may.
    func queueStaleError() {
        let garbage: [UInt8] = Array("not a certificate".utf8)
        garbage.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            #expect(PEM_read_bio_X509(bio, nil, nil, nil) == nil)
            BIO_free(bio)
        }
        #expect(ERR_peek_error() != 0, "the parse left its error queued")
    }

    @Test("An error left queued by an unrelated call does not fail a handshake, a read or a write that would block")
    func staleErrorsAreNotTheCallsOwn() throws {
        let pair = try SessionPair()
        // Nothing has arrived yet: the server's first step would block, stale error or not.
        queueStaleError()
        #expect(pair.server.handshake() == .wouldBlock(.readable))
        #expect(pair.handshake(beforeServerStep: queueStaleError))

        var buffer = [UInt8](repeating: 0, count: 4096)
        queueStaleError()
        let empty = buffer.withUnsafeMutableBytes { pair.server.read(into: $0) }
        #expect(empty == .wouldBlock(.readable), "a read with nothing to read would block, whatever was queued before it")

        let request: [UInt8] = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { pair.client.write($0) } == .bytes(request.count))
        queueStaleError()
        let received = buffer.withUnsafeMutableBytes { pair.server.read(into: $0) }
        #expect(received == .bytes(request.count))
        #expect(Array(buffer.prefix(request.count)) == request)

        queueStaleError()
        let answer: [UInt8] = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)
        #expect(answer.withUnsafeBytes { pair.server.write($0) } == .bytes(answer.count))
        let read = buffer.withUnsafeMutableBytes { pair.client.read(into: $0) }
        #expect(read == .bytes(answer.count))
        #expect(ERR_peek_error() == 0, "the session's calls leave the queue empty")
    }
}
