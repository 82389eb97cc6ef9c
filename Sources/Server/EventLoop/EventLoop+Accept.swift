import Posix
import Synchronization
import TLS

extension EventLoop {
    func acceptConnections(listenerAt position: Int) {
        let listener = listeners[position]
        guard listener.fd >= 0 else { return }
        // A bounded batch per wake-up keeps one busy listener from starving established connections.
        for _ in 0..<64 {
            let accepted: Posix.AcceptResult
            do {
                accepted = try Posix.accept(listener.fd)
            } catch {
                // EMFILE/ENFILE: out of descriptors. Log and let the backlog wait for the next wake-up.
                Log.error("accept on \(listener.address): \(error)")
                return
            }
            guard case .accepted(let fd, let peer) = accepted else { return }
            if listener.role == .main && state.openConnections.load(ordering: .relaxed) >= settings.maxConnections && !evictOne() {
                Posix.abort(fd)
                continue
            }
            let transport: Transport
            if listener.tls {
                guard let session = state.current.tls?.session(fd: fd) else {
                    Posix.abort(fd)
                    continue
                }
                transport = .tls(session)
            } else {
                transport = .plain
            }
            let slot = freeSlots.popLast() ?? connections.count
            if slot == connections.count { connections.append(nil) }
            let connection = Connection(
                fd: fd,
                slot: slot,
                serial: nextSerial,
                listener: listener.role,
                peer: peer,
                transport: transport,
                machine: ConnectionStateMachine(
                    settings: settings.connection,
                    clock: clock,
                    usesTLS: listener.tls,
                    proxyProtocol: listener.proxyProtocol
                )
            )
            nextSerial += 1
            pendingStats.countAccepted()
            adopt(connection)
            // The first read is optimistic: the request is usually already here, so a one-shot exchange
            // (Connection: close) completes without ever touching epoll.
            drive(connection)
        }
    }

    /// At the connection cap: close the connection that is idle longest, else the one that has spent
    /// longest sending a request (the slowloris suspect). False when this loop has neither.
    func evictOne() -> Bool {
        var victim: Connection?
        var victimRank: (group: Int, since: Int64)?
        for case let connection? in connections where connection.listener == .main {
            guard let rank = connection.machine.evictionRank else { continue }
            if let best = victimRank, (best.group, best.since) <= (rank.group, rank.since) { continue }
            victim = connection
            victimRank = rank
        }
        guard let victim else { return false }
        pendingStats.add { $0.connectionsEvicted += 1 }
        victim.machine.evict()
        drive(victim)
        return true
    }
}
