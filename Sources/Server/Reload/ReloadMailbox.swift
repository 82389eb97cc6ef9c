import Synchronization

/// Carries `POST /reload` requests from the event loops to the supervisor (which reloads on its own
/// thread, so no loop stalls) and the outcome back to the loop holding each connection.
final class ReloadMailbox: Sendable {
    /// Identifies the connection waiting for the answer, even if its slot has been reused since.
    struct Ticket: Sendable, Equatable {
        var loop: Int
        var slot: Int
        var serial: Int
    }

    private let requests = Mutex<[Ticket]>([])
    private let answers = Mutex<[(Ticket, ReloadOutcome)]>([])

    func submit(_ ticket: Ticket) { requests.withLock { $0.append(ticket) } }

    /// Every ticket waiting; the supervisor reloads once for all of them.
    func takeRequests() -> [Ticket] {
        requests.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    func answer(_ tickets: [Ticket], with outcome: ReloadOutcome) {
        answers.withLock { $0 += tickets.map { ($0, outcome) } }
    }

    /// The answers for connections of `loop`.
    func takeAnswers(forLoop loop: Int) -> [(Ticket, ReloadOutcome)] {
        answers.withLock { all in
            let mine = all.filter { $0.0.loop == loop }
            all.removeAll { $0.0.loop == loop }
            return mine
        }
    }
}
