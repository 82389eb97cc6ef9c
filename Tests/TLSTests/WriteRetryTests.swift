import Posix
import TLS
import Testing

/// A loop sends a TLS answer from whichever buffer holds it (its kept copy of the answer, or the record it
/// gathers): when a write would block, the retry comes from another buffer, by then perhaps reused for
/// another answer. OpenSSL asks for the same bytes again; the context lets them move.
@Suite("TLS writes retried from another buffer")
struct WriteRetryTests {
    @Test("A write that would block is finished by the same bytes from another buffer: the peer reads every answer once, whole")
    func retriedFromAnotherBuffer() throws {
        let pair = try SessionPair()
        #expect(pair.handshake())
        let answer = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        // Buffers of their own (a plain copy of an array shares its storage until written).
        var kept = answer.map { $0 }
        var written = 0
        var blocked = false
        // Until the socket pair's buffer is full and a write cannot finish.
        for _ in 0..<10_000 {
            let result = kept.withUnsafeBytes { pair.server.write($0) }
            if result == .bytes(answer.count) {
                written += 1
                continue
            }
            #expect(result == .wouldBlock(.writable))
            blocked = true
            break
        }
        #expect(blocked && written > 0)
        // The kept buffer holds another answer now (written in place: its storage stays where it was).
        let keptAddress = kept.withUnsafeBytes { $0.baseAddress }
        for index in kept.indices { kept[index] = UInt8(ascii: "X") }
        #expect(kept.withUnsafeBytes { $0.baseAddress } == keptAddress)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func drain() {
            while true {
                guard case .bytes(let count) = buffer.withUnsafeMutableBytes({ pair.client.read(into: $0) }) else { return }
                received += buffer[0..<count]
            }
        }
        drain()
        let elsewhere = answer.map { $0 }
        #expect(elsewhere.withUnsafeBytes { $0.baseAddress } != keptAddress)
        #expect(elsewhere.withUnsafeBytes { pair.server.write($0) } == .bytes(answer.count))
        drain()
        #expect(received.count == (written + 1) * answer.count)
        #expect(received == Array([[UInt8]](repeating: answer, count: written + 1).joined()))
    }
}
