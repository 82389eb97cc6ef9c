import Foundation
import TestSupport
import Testing

@testable import Server

@Suite("Which TLS connections keep their record buffers")
struct TLSBufferKeepingTests {
    @Test("A connection keeps them from its second request on, never more connections than the limit")
    func returningConnectionsUpToTheLimit() {
        var keeping = TLSBufferKeeping(limit: 3, idleRelease: 1_000_000)
        // Requests answered before, for five connections: a first request may be the only one; the fifth
        // returning connection finds the limit reached.
        let started = [0, 1, 7, 2, 5].map { keeping.startsKeeping(answered: $0) }
        #expect(started == [false, true, true, true, false])
        #expect(keeping.keepers == 3)
        keeping.keeperClosed()
        #expect(keeping.keepers == 2)
        let afterClose = keeping.startsKeeping(answered: 5)
        #expect(afterClose, "a closed keeper's place is free again")
        #expect(keeping.keepers == 3)
    }

    @Test("A keeper lets them go once idle for the release time, not while busy or idle for less")
    func idleRelease() {
        var keeping = TLSBufferKeeping(limit: 2, idleRelease: 1_000_000)
        let started = [1, 1].map { keeping.startsKeeping(answered: $0) }
        #expect(started == [true, true])
        // (idle since, now): in the middle of a request (not idle), idle a microsecond short, idle long enough.
        let stopped = [(nil, 50_000_000), (10_000_000, 10_999_999), (10_000_000, 11_000_000)].map {
            keeping.stopsKeeping(idleSince: $0.0, now: $0.1)
        }
        #expect(stopped == [false, false, true])
        #expect(keeping.keepers == 1)
        let next = [3, 3].map { keeping.startsKeeping(answered: $0) }
        #expect(next == [true, false], "the released place goes to the next returning connection")
    }

    @Test("docs/https.md states the limit and the idle time in force")
    func documentedDefaults() throws {
        let text = try String(contentsOfFile: TestPaths.repositoryRoot + "/docs/https.md", encoding: .utf8)
            .replacingOccurrences(of: "\n  ", with: " ")
        let keeping = TLSBufferKeeping()
        #expect(keeping.limit == 128)
        #expect(text.contains("up to 128 connections per event loop"))
        #expect(keeping.idleRelease == 1_000_000)
        #expect(text.contains("gives them back after a second without a request"))
    }

    @Test("Random arrivals, releases and closes: the count is always the connections keeping, within the limit")
    func countFollowsTheConnections() {
        var generator = SystemRandomNumberGenerator()
        var keeping = TLSBufferKeeping(limit: 16, idleRelease: 1_000)
        // Per connection: nil when it does not keep, else when it went idle (0: busy).
        var connections = [Int64?](repeating: nil, count: 64)
        var now: Int64 = 0
        for _ in 0..<5_000 {
            now += Int64.random(in: 0...200, using: &generator)
            let index = Int.random(in: 0..<connections.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                if connections[index] == nil, keeping.startsKeeping(answered: Int.random(in: 0...3, using: &generator)) {
                    connections[index] = now
                }
            case 1:
                if let idleSince = connections[index], keeping.stopsKeeping(idleSince: idleSince, now: now) {
                    #expect(now - idleSince >= 1_000)
                    connections[index] = nil
                }
            default:
                if connections[index] != nil {
                    keeping.keeperClosed()
                    connections[index] = nil
                }
            }
            #expect(keeping.keepers == connections.count { $0 != nil })
            #expect(keeping.keepers <= 16)
        }
    }
}
