import Posix
import TLS
import Testing

/// A session keeps OpenSSL's record buffers between requests only while asked to (the loop asks for the
/// connections that come back), and gives them back when told to let them go.
@Suite("TLS sessions keep their record buffers only while asked to", .serialized)
struct SessionBuffersTests {
    func heapInUse() -> Int { Posix.heapBytesInUse() }

    let request: [UInt8] = Array("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n".utf8)
    let answer: [UInt8] = Array("HTTP/1.1 204 No Content\r\n\r\n".utf8)

    /// Other suites run beside this one and allocate too: a heap figure holds for the session when it
    /// holds in one of a few tries (a session that did not do it would fail every try).
    func holdsInOneOf(_ tries: Int, _ attempt: () -> Bool) -> Bool {
        (0..<tries).contains { _ in attempt() }
    }

    /// An exchange after which the heap holds what it held before, within a few KB.
    func exchangeLeavesHeapAsItWas(_ pair: SessionPair) -> Bool {
        holdsInOneOf(5) {
            let before = heapInUse()
            return pair.exchange(request, answer) && abs(heapInUse() - before) < 4 * 1024
        }
    }

    @Test("Released by default, kept while asked, freed when let go; every exchange arrives whole in each mode")
    func keptOnlyWhileAsked() throws {
        let pair = try SessionPair()
        #expect(pair.handshake())
        #expect(!pair.server.keepsBuffers)
        #expect(pair.exchange(request, answer))
        // Released: an exchange leaves nothing held.
        #expect(exchangeLeavesHeapAsItWas(pair))
        // Kept: the first exchange takes a read and a write buffer of about 17 KB each, and later ones reuse them.
        #expect(
            holdsInOneOf(5) {
                pair.server.keepsBuffers = false
                let before = heapInUse()
                pair.server.keepsBuffers = true
                return pair.exchange(request, answer) && heapInUse() - before > 24 * 1024
            }
        )
        #expect(exchangeLeavesHeapAsItWas(pair))
        // Let go: both freed at once.
        #expect(
            holdsInOneOf(5) {
                pair.server.keepsBuffers = true
                let exchanged = pair.exchange(request, answer)
                let before = heapInUse()
                pair.server.keepsBuffers = false
                return exchanged && before - heapInUse() > 24 * 1024
            }
        )
        #expect(!pair.server.keepsBuffers)
        #expect(pair.exchange(request, answer))
    }
}
